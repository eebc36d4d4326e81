// `for` loops traced as scans (tracer/interp/interp_scan.cc): which loops become one, and
// that each gives the values and gradients of the same loop unrolled.
#include <doctest/doctest.h>

#include <cmath>

#include "grad/grad.h"
#include "unit/tracer/interp_helpers.h"

using namespace ytape;
using namespace ytape::tracer;
using namespace ytape::tracer::testing;

namespace {

struct Run {
  Traced traced;
  std::string output;  // what the program printed while tracing
};

Run trace_as(const std::string& program, const std::string& entry,
             const std::vector<std::string>& args, LoopMode mode) {
  Limits limits;
  limits.loops = mode;
  Program in(limits);
  std::string output;
  in.set_print([&](std::string_view line) { output += std::string(line) + "\n"; });
  in.run_text("t.jl", program);
  Run r{trace(in, entry, args), ""};
  validate(r.traced.tape);
  r.output = output;
  return r;
}

int scans(const Tape& t) {
  int n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && op.prim == Prim::scan;
  return n;
}

void check_close_to(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].type() == want[i].type());
    for (int64_t k = 0; k < got[i].type().size(); ++k) {
      double a = element_value(got[i], k), b = element_value(want[i], k);
      CHECK(std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)));
    }
  }
}

// Traces `entry` with `mode` and unrolled; checks the scans counted, then that both tapes
// give the same outputs and (for a scalar output) the same gradients on the example
// inputs. Returns the tape traced with `mode`.
Tape check_as_unrolled(const std::string& program, const std::string& entry,
                       const std::vector<std::string>& args, int want_scans,
                       LoopMode mode = LoopMode::auto_) {
  Run scanned = trace_as(program, entry, args, mode);
  Run unrolled = trace_as(program, entry, args, LoopMode::unroll);
  CHECK(scans(scanned.traced.tape) == want_scans);
  CHECK(scanned.output == unrolled.output);
  const TensorMap& inputs = scanned.traced.inputs;
  check_close_to(Executor(scanned.traced.tape).run(inputs),
                 Executor(unrolled.traced.tape).run(inputs));
  if (scanned.traced.tape.outputs.size() == 1 &&
      scanned.traced.tape.types[scanned.traced.tape.outputs[0].var.id].rank() == 0) {
    Tape gs = grad::gradient(scanned.traced.tape);
    Tape gu = grad::gradient(unrolled.traced.tape);
    check_close_to(Executor(gs).run(inputs), Executor(gu).run(inputs));
  }
  return scanned.traced.tape;
}

const char* kRnn = R"(
W = randn(8, 8) .* 0.3
U = randn(8, 4) .* 0.3
h0 = zeros(8)
xs16 = randn(4, 16)
xs256 = randn(4, 256)
function cell(W, U, xs, h)
  for t in 1:size(xs, 2)
    h = tanh.(W * h .+ U * xs[:, t])
  end
  sum(h .* h)
end
)";

}  // namespace

TEST_CASE("a recurrent loop over a sequence is one scan, whatever its length") {
  Tape t16 = check_as_unrolled(kRnn, "cell", {"W", "U", "xs16", "h0"}, 1);
  Tape t256 = check_as_unrolled(kRnn, "cell", {"W", "U", "xs256", "h0"}, 1);
  CHECK(t16.num_ops() == t256.num_ops());
  // xs[:, t] is the scan's xs, sliced in place: no gather in the body.
  const Op* scan = nullptr;
  for (const Op& op : t16.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::scan) scan = &op;
  }
  REQUIRE(scan != nullptr);
  for (const Op& op : scan->regions[0].ops) CHECK(op.prim != Prim::gather);
}

TEST_CASE("ranges stepping up, down and by more than one") {
  std::string program = R"(
x = randn(3, 20)
w = randn(3)
function up(x, w)
  s = 0.0
  for t in 1:20
    s = s + sum(w .* x[:, t]) * s + 0.1
  end
  s
end
function down(x, w)
  s = 0.0
  for t in 20:-1:1
    s = tanh(s + sum(w .* x[:, t]) * t)
  end
  s
end
function strided(x, w)
  s = 0.0
  for t in 3:2:19
    s = s * 0.5 + sum(w .* x[:, t])
  end
  s
end
function shifted(x, w)
  s = 0.0
  for t in 1:10
    s = s * 0.5 + sum(w .* x[:, 21 - t])
  end
  s
end
)";
  check_as_unrolled(program, "up", {"x", "w"}, 1);
  check_as_unrolled(program, "down", {"x", "w"}, 1);
  check_as_unrolled(program, "strided", {"x", "w"}, 1);
  check_as_unrolled(program, "shifted", {"x", "w"}, 1);  // an index computed: a gather
}

TEST_CASE("a number carried at a literal's type takes the arrays' type") {
  std::string program = R"(
x = randn(Float32, 3, 12)
function f(x)
  s = 0.0
  for t in 1:12
    s += sum(x[:, t] .* x[:, t])
  end
  s
end
)";
  check_as_unrolled(program, "f", {"x"}, 1);
}

TEST_CASE("loops a scan cannot hold stay unrolled, as they would run") {
  std::string program = R"(
x = randn(4, 10)
function pushes(x)
  hs = []
  h = zeros(4)
  for t in 1:10
    h = tanh.(h .+ x[:, t])
    push!(hs, h)
  end
  sum(sum(hs))
end
function breaks(x)
  h = zeros(4)
  for t in 1:10
    h = h .+ x[:, t]
    sum(h) > 100 && break
  end
  sum(h)
end
function prints(x)
  h = zeros(4)
  for t in 1:10
    h = h .+ x[:, t]
    println("step")
  end
  sum(h)
end
function draws(x)
  h = zeros(4)
  for t in 1:10
    h = h .+ x[:, t] .* rand()
  end
  sum(h)
end
function counts(x)
  h = zeros(4)
  n = 0
  for t in 1:10
    h = h .+ x[:, t]
    n += 1
  end
  sum(h) * n
end
function closure(x)
  h = zeros(4)
  add!(v) = (h = h .+ v)
  for t in 1:10
    add!(x[:, t])
  end
  sum(h)
end
function short(x)
  h = zeros(4)
  for t in 1:4
    h = tanh.(h .+ x[:, t])
  end
  sum(h)
end
)";
  for (const char* entry : {"pushes", "breaks", "prints", "draws", "counts", "closure", "short"}) {
    CAPTURE(entry);
    check_as_unrolled(program, entry, {"x"}, 0);
  }
  Run printed = trace_as(program, "prints", {"x"}, LoopMode::auto_);
  int prints = 0;  // a print while tracing is a print op, one per iteration
  for (const Op& op : printed.traced.tape.ops) prints += op.prim == Prim::print;
  CHECK(prints == 10);
  // --loops scan: short loops and counters too; the others are errors naming why.
  check_as_unrolled(program, "short", {"x"}, 1, LoopMode::scan);
  check_as_unrolled(program, "counts", {"x"}, 1, LoopMode::scan);
  auto error = [&](const std::string& entry) {
    try {
      trace_as(program, entry, {"x"}, LoopMode::scan);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("pushes").find("this loop cannot be a scan (--loops scan): it writes into an "
                             "array or a mutable struct") != std::string::npos);
  CHECK(error("breaks").find("it branches on a traced value") != std::string::npos);
  CHECK(error("prints").find("its body records print, which a scan cannot hold yet") !=
        std::string::npos);
  CHECK(error("draws").find("it draws random numbers while tracing") != std::string::npos);
  CHECK(error("closure").find("it assigns a variable outside the loop") != std::string::npos);
}

TEST_CASE("nested loops: the outer one a scan, the inner one unrolled in its body") {
  std::string program = R"(
x = randn(3, 9)
function f(x)
  h = zeros(3)
  for t in 1:9
    for k in 1:2
      h = tanh.(h .* 0.5 .+ x[:, t] .* k)
    end
  end
  sum(h)
end
)";
  Tape t = check_as_unrolled(program, "f", {"x"}, 1);
  for (const Op& op : t.ops) {
    if (op.prim == Prim::scan) CHECK(scans(op.regions[0]) == 0);
  }
}

TEST_CASE("a loop inside a function the program differentiates") {
  std::string program = R"(
w = randn(3, 3) .* 0.5
x = randn(3, 10)
function loss(w, x)
  h = zeros(3)
  for t in 1:10
    h = tanh.(w * h .+ x[:, t])
  end
  sum(h .* h)
end
step(w, x) = sum(gradient(w -> loss(w, x), w)[1])
)";
  check_as_unrolled(program, "step", {"w", "x"}, 2);  // the loop and its backward
}

TEST_CASE("Flux's recurrent layers over a sequence are one scan, whatever its length") {
  std::string program = R"(
using Flux
rnn = Chain(RNN(3 => 5), Dense(5 => 2))
lstm = Chain(LSTM(3 => 5), Dense(5 => 2))
gru = Chain(GRU(3 => 5), Dense(5 => 2))
x16 = randn(Float32, 3, 4, 16)
x64 = randn(Float32, 3, 4, 64)
function loss(m, x)
  Flux.reset!(m)
  sum(abs2, m(x))
end
)";
  for (const char* model : {"rnn", "lstm", "gru"}) {
    CAPTURE(model);
    // The first step, which gives the state its batch size, and one scan for the rest.
    Tape t16 = check_as_unrolled(program, "loss", {model, "x16"}, 1);
    Tape t64 = check_as_unrolled(program, "loss", {model, "x64"}, 1);
    CHECK(t16.num_ops() == t64.num_ops());
  }
}

TEST_CASE("stack(f, range) stacks what f gives; one scan op while tracing") {
  CHECK(eval_show("", "stack(t -> [t, 2t], 1:3)") == "[1 2 3; 2 4 6]");
  CHECK(eval_show("", "stack([[1.0, 2.0], [3.0, 4.0]])") == "[1.0 3.0; 2.0 4.0]");
  CHECK(run_error("stack([[1.0, 2.0], [3.0]])")
            .find("stack: every item must have the size and element type of the first, "
                  "f64[2]; item 2 is f64[1]") != std::string::npos);
  std::string program = R"(
x = randn(3, 10)
f(x) = sum(stack(t -> x[:, t] .* t, 1:10) .^ 2)
g(x) = sum(stack(t -> x[:, t] .* t, 1:3) .^ 2)
)";
  check_as_unrolled(program, "f", {"x"}, 1);
  check_as_unrolled(program, "g", {"x"}, 0);  // short: unrolled under auto
}

TEST_CASE(
    "a loop whose first iteration settles a carry's type: that one as it is, the rest a scan") {
  // Flux's RNN state0 has one column; the first step broadcasts it to the batch's four.
  std::string program = R"(
using Flux
m = RNN(3 => 5)
x = randn(Float32, 3, 4, 12)
function last_step(m, x)
  Flux.reset!(m)
  y = zeros(Float32, 5, 4)
  for t in 1:size(x, 3)
    y = m(x[:, :, t])
  end
  sum(abs2, y)
end
)";
  check_as_unrolled(program, "last_step", {"m", "x"}, 1);
  check_as_unrolled(program, "last_step", {"m", "x"}, 1, LoopMode::scan);
}

TEST_CASE("a training step of a recurrent model: its scans give the unrolled step's values") {
  // Optimisers.update compares only trainable fields with the gradient: the layer's state,
  // batch-sized after the forward, is not one.
  std::string program = R"(
using Flux, Optimisers
model = Chain(LSTM(4 => 6), Dense(6 => 4))
opt = Optimisers.setup(Adam(1f-2), model)
x = randn(Float32, 4, 3, 10)
y = softmax(randn(Float32, 4, 3, 10))
function train_step(model, opt, x, y)
  loss, grads = Flux.withgradient(m -> (Flux.reset!(m); Flux.logitcrossentropy(m(x), y)), model)
  opt, model = Optimisers.update(opt, model, grads[1])
  Flux.reset!(model)
  (model = model, opt = opt, loss = loss)
end
)";
  check_as_unrolled(program, "train_step", {"model", "opt", "x", "y"}, 2);
}

TEST_CASE("foldl, accumulate, map and comprehensions over a sequence are one scan each") {
  std::string program = R"(
W = randn(8, 8) .* 0.3
U = randn(8, 4) .* 0.3
h0 = zeros(8)
xs16 = randn(4, 16)
xs256 = randn(4, 256)
X3 = randn(8, 16, 3)
cell(h, x, W, U) = tanh.(W * h .+ U * x)
byslice(W, U, xs, h0) = sum(foldl((h, x) -> cell(h, x, W, U), eachslice(xs; dims=2); init=h0))
bycol(W, U, xs, h0) = sum(foldl((h, x) -> cell(h, x, W, U), eachcol(xs); init=h0))
byrange(W, U, xs, h0) = sum(foldl((h, t) -> cell(h, xs[:, t], W, U), 1:size(xs, 2); init=h0))
hidden(W, U, xs, h0) = sum(stack(accumulate((h, x) -> cell(h, x, W, U), eachcol(xs); init=h0)))
numbers(W, U, xs, h0) = sum([sum(W * x) for x in eachcol(U * xs)] .^ 2)
mapped(W, U, xs, h0) = sum(stack(map(x -> tanh.(U * x), eachcol(xs))))
rows(W, U, xs, h0) = sum([sum(U * r) for r in eachrow(xs')])
middle(W, X) = sum(foldl((h, x) -> tanh.(W * h .+ x), eachslice(X; dims=2); init=zeros(8, 3)))
each(W, U, xs, h0) = sum(sum.(map(x -> U * x, eachcol(xs)))) + sum(eachcol(xs)[3])
function written(W, U, xs, h0)
  cols = eachcol(xs)
  c = cols[1]
  c[1] = 100.0
  sum(foldl((a, x) -> a .+ x, cols; init=zeros(4)))
end
)";
  for (const char* f : {"byslice", "bycol", "byrange", "hidden", "numbers", "mapped", "rows"}) {
    CAPTURE(f);
    Tape t16 = check_as_unrolled(program, f, {"W", "U", "xs16", "h0"}, 1);
    Tape t256 = check_as_unrolled(program, f, {"W", "U", "xs256", "h0"}, 1);
    CHECK(t16.num_ops() == t256.num_ops());  // the slices nothing reads leave the tape
    CHECK(t16.num_ops() < 12);
  }
  // A dim other than the last; slices read by a scan (`sum.` of a map's is a second) and
  // one by one (the third column, which stays).
  check_as_unrolled(program, "middle", {"W", "X3"}, 1);
  check_as_unrolled(program, "each", {"W", "U", "xs16", "h0"}, 2);
  // A slice written into is no longer its array's: the fold runs over the slices.
  check_as_unrolled(program, "written", {"W", "U", "xs16", "h0"}, 0);
}

TEST_CASE("a Flux layer mapped over a sequence is one scan, its first step apart") {
  // The layer's one-column state meets a batch of 3 in the first step, which runs as it is.
  std::string program = R"(
using Flux
model = LSTM(4 => 8)
head = Dense(8 => 2)
xs16 = randn(Float32, 4, 3, 16)
xs64 = randn(Float32, 4, 3, 64)
function comp(model, head, xs)
  Flux.reset!(model)
  sum(stack([head(model(xs[:, :, t])) for t in 1:size(xs, 3)]))
end
function bcast(model, head, xs)
  Flux.reset!(model)
  sum(stack(head.(model.(eachslice(xs; dims=3)))))
end
)";
  for (const char* f : {"comp", "bcast"}) {
    CAPTURE(f);
    Tape t16 = check_as_unrolled(program, f, {"model", "head", "xs16"}, f[0] == 'c' ? 1 : 2);
    Tape t64 = check_as_unrolled(program, f, {"model", "head", "xs64"}, f[0] == 'c' ? 1 : 2);
    CHECK(t16.num_ops() == t64.num_ops());
  }
}
