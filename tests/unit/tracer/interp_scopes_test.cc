// Scopes (docs/tape-format.md, "Scopes"): each call of a layer while tracing is a scope of
// the ops it records, named by the layer's place in the arguments and its Flux form, with
// the lines that made and called it; gradients keep them.
#include "grad/grad.h"
#include "interp_helpers.h"

namespace ytape::tracer::testing {

namespace {

const char* kModel = R"(using Flux
seed!(1)
model = Chain(Dense(4 => 8, relu),
              Dense(8 => 2))
x = rand(Float32, 4, 3)
f(model, x) = sum(model(x))
struct Twice
  inner
end
(t::Twice)(x) = t.inner(t.inner(x))
g(x) = sum(Twice(Dense(4 => 4, tanh))(x))
h(model, x) = Flux.withgradient(m -> sum(m(x)), model)[1]
)";

Tape traced(const std::string& entry, const std::vector<std::string>& args) {
  Program in;
  in.run_text("t.jl", kModel);
  Tape t = trace(in, entry, args).tape;
  validate(t);
  return t;
}

// The titles of the scopes of the ops of `t` that run `prim`, in order.
std::vector<std::string> scopes_of(const Tape& t, Prim prim) {
  std::vector<std::string> out;
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::call || op.prim != prim) continue;
    const Scope* s = t.scope_of(op.loc);
    out.push_back(s == nullptr ? "-" : s->title());
  }
  return out;
}

}  // namespace

TEST_CASE("a layer's ops name its call: its place, its form, the lines that made and called it") {
  Tape t = traced("f", {"model", "x"});
  REQUIRE(t.scopes.size() == 3);
  const Scope& chain = t.scopes[0];
  CHECK(chain.title() == "model: Chain(Dense(4 => 8, relu), Dense(8 => 2))");
  CHECK(t.loc_str(chain.made) == "t.jl:3");
  CHECK(t.loc_str(chain.call) == "t.jl:6");
  CHECK(chain.parent == 0);
  CHECK(t.scopes[1].title() == "model.layers[1]: Dense(4 => 8, relu)");
  CHECK(t.loc_str(t.scopes[1].made) == "t.jl:3");
  CHECK(t.scopes[1].parent == 1);
  CHECK(t.scopes[2].title() == "model.layers[2]: Dense(8 => 2)");
  CHECK(t.loc_str(t.scopes[2].made) == "t.jl:4");  // the line of its own constructor
  CHECK(scopes_of(t, Prim::matmul) ==
        std::vector<std::string>{"model.layers[1]: Dense(4 => 8, relu)",
                                 "model.layers[2]: Dense(8 => 2)"});
  CHECK(scopes_of(t, Prim::relu) ==
        std::vector<std::string>{"model.layers[1]: Dense(4 => 8, relu)"});
  // The sum is the program's own, outside every layer.
  CHECK(scopes_of(t, Prim::sum).back() == "-");
  std::string shown = print_tape(t);
  CHECK(shown.find("= relu(") != std::string::npos);
  CHECK(shown.find("  # t.jl:6 in model.layers[1]\n") != std::string::npos);
}

TEST_CASE("a layer made inside the traced function has no path; each call nests in its caller") {
  Tape t = traced("g", {"x"});
  REQUIRE(t.scopes.size() == 2);
  CHECK(t.scopes[0].title() == "Twice");  // the program's own layer, without a show
  CHECK(t.scopes[1].title() == "Dense(4 => 4, tanh)");
  CHECK(t.scopes[1].parent == 1);
  CHECK(t.loc_str(t.scopes[1].call) == "t.jl:10");  // both calls, one line: one scope
  CHECK(scopes_of(t, Prim::tanh) ==
        std::vector<std::string>{"Dense(4 => 4, tanh)", "Dense(4 => 4, tanh)"});
}

TEST_CASE("a model differentiated in the program keeps its layers' places and lines") {
  Tape t = traced("h", {"model", "x"});
  REQUIRE(t.scopes.size() >= 2);
  CHECK(t.scopes[1].title() == "model.layers[1]: Dense(4 => 8, relu)");
  CHECK(t.loc_str(t.scopes[1].made) == "t.jl:3");
  CHECK(t.loc_str(t.scopes[1].call) == "t.jl:12");
}

TEST_CASE("a layer whose show fails is named by its type") {
  std::string program = R"(
struct Bad
  w
end
Base.show(io::IO, b::Bad) = error("cannot show")
(b::Bad)(x) = b.w * x
layer = Bad(ones(Float32, 2, 2))
f(layer, x) = sum(layer(x))
)";
  Program in;
  in.run_text("t.jl", program);
  Tape t = trace(in, "f", {"layer", "f32[2]"}).tape;
  REQUIRE(t.scopes.size() == 1);
  CHECK(t.scopes[0].title() == "layer: Bad");
}

TEST_CASE("a gradient's ops keep the scopes of the ops they differentiate") {
  Tape t = traced("f", {"model", "x"});
  Tape dt = grad::gradient(t);
  CHECK(dt.scopes == t.scopes);
  // relu's gradient (a select on relu's output) belongs to the first Dense.
  bool found = false;
  for (const Op& op : dt.ops) {
    const Scope* s = dt.scope_of(op.loc);
    if (op.kind == OpKind::call && op.prim == Prim::select && s != nullptr)
      found = s->title() == "model.layers[1]: Dense(4 => 8, relu)";
  }
  CHECK(found);
}

}  // namespace ytape::tracer::testing
