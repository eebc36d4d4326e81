// Optimisers.jl's rules, setup, update and adjust, and the schedules, in the prelude. Each
// rule's three steps are compared with a reference computed here in double from the
// formulas of Optimisers.jl 0.3, independently of the prelude; traced steps, run one
// after another with the state carried from outputs to inputs, equal the interpreter's.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

namespace {

using Vec = std::vector<double>;
// One rule on one array, its state captured: the step dx′ subtracted from x for gradient g.
using Rule = std::function<Vec(const Vec& x, const Vec& g)>;

Rule descent(double eta) {
  return [=](const Vec&, const Vec& g) {
    Vec d(g.size());
    for (size_t i = 0; i < g.size(); ++i) d[i] = g[i] * eta;
    return d;
  };
}

Rule momentum(double eta, double rho) {
  auto v = std::make_shared<Vec>();
  return [=](const Vec&, const Vec& g) {
    v->resize(g.size(), 0.0);
    for (size_t i = 0; i < g.size(); ++i) (*v)[i] = rho * (*v)[i] + eta * g[i];
    return *v;
  };
}

Rule nesterov(double eta, double rho) {
  auto v = std::make_shared<Vec>();
  return [=](const Vec&, const Vec& g) {
    v->resize(g.size(), 0.0);
    Vec d(g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      d[i] = -rho * rho * (*v)[i] + (1 + rho) * eta * g[i];
      (*v)[i] = rho * (*v)[i] - eta * g[i];
    }
    return d;
  };
}

Rule adam(double eta, double b1, double b2, double eps) {
  struct State {
    Vec m, v;
    double bt1, bt2;
  };
  auto s = std::make_shared<State>(State{{}, {}, b1, b2});
  return [=](const Vec&, const Vec& g) {
    s->m.resize(g.size(), 0.0);
    s->v.resize(g.size(), 0.0);
    Vec d(g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      s->m[i] = b1 * s->m[i] + (1 - b1) * g[i];
      s->v[i] = b2 * s->v[i] + (1 - b2) * g[i] * g[i];
      d[i] = s->m[i] / (1 - s->bt1) / (std::sqrt(s->v[i] / (1 - s->bt2)) + eps) * eta;
    }
    s->bt1 *= b1;
    s->bt2 *= b2;
    return d;
  };
}

Rule weight_decay(double lambda) {
  return [=](const Vec& x, const Vec& g) {
    Vec d(g.size());
    for (size_t i = 0; i < g.size(); ++i) d[i] = g[i] + lambda * x[i];
    return d;
  };
}

Rule clip_norm(double omega) {
  return [=](const Vec&, const Vec& g) {
    double n = 0;
    for (double v : g) n += v * v;
    double scale = std::min(omega / std::sqrt(n), 1.0);
    Vec d(g.size());
    for (size_t i = 0; i < g.size(); ++i) d[i] = g[i] * scale;
    return d;
  };
}

Rule chain(std::vector<Rule> rules) {
  return [=](const Vec& x, const Vec& g) {
    Vec d = g;
    for (const Rule& r : rules) d = r(x, d);
    return d;
  };
}

// x after one step per gradient.
Vec reference(const Rule& rule, Vec x, const std::vector<Vec>& grads) {
  for (const Vec& g : grads) {
    Vec d = rule(x, g);
    for (size_t i = 0; i < x.size(); ++i) x[i] -= d[i];
  }
  return x;
}

struct Case {
  std::string rule;                 // as the program writes it
  std::function<Rule()> make_rule;  // a fresh reference rule, for each array
};

// Float32 values of the defaults, as a Float32 parameter sees them.
double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}

std::vector<Case> cases(bool single) {
  auto r = [single](double v) { return single ? f32(v) : v; };
  return {
      {"Descent(0.1)", [=] { return descent(r(0.1)); }},
      {"Descent()", [=] { return descent(f32(0.1)); }},  // 1f-1, as Optimisers.jl's
      {"Momentum()", [=] { return momentum(r(0.01), r(0.9)); }},
      {"Momentum(0.1, 0.5)", [=] { return momentum(r(0.1), r(0.5)); }},
      // Strong Float64 hyperparameters still give Float32 steps for Float32 arrays.
      {"Momentum(Float64(0.1), Float64(0.5))", [=] { return momentum(r(0.1), r(0.5)); }},
      {"Nesterov()", [=] { return nesterov(r(0.001), r(0.9)); }},
      {"Nesterov(0.1)", [=] { return nesterov(r(0.1), r(0.9)); }},
      {"Adam()", [=] { return adam(r(0.001), r(0.9), r(0.999), r(1e-8)); }},
      {"Adam(0.1, (0.8, 0.9), 1e-3)", [=] { return adam(r(0.1), r(0.8), r(0.9), r(1e-3)); }},
      {"AdamW(0.1, (0.9, 0.999), 0.01)",
       [=] {
         return chain({adam(r(0.1), r(0.9), r(0.999), r(1e-8)), weight_decay(r(0.01))});
       }},
      {"WeightDecay()", [=] { return weight_decay(r(5e-4)); }},
      {"ClipNorm(0.5)", [=] { return clip_norm(0.5); }},
      {"ClipNorm()", [=] { return clip_norm(10); }},
      {"OptimiserChain(ClipNorm(0.5), WeightDecay(0.1), Momentum(0.1))",
       [=] {
         return chain({clip_norm(0.5), weight_decay(r(0.1)), momentum(r(0.1), r(0.9))});
       }},
  };
}

// A Dense layer (a struct with a function field) and three steps' gradients.
const Vec kWeight = {0.5, 2.0, -1.0, 0.25};  // [0.5 -1.0; 2.0 0.25], column-major
const Vec kBias = {0.1, -0.3};
const std::vector<Vec> kWeightGrads = {
    {0.3, -0.2, 0.4, 0.1}, {-0.1, 0.5, 0.2, -0.3}, {0.05, 0.1, -0.6, 0.2}};
const std::vector<Vec> kBiasGrads = {{1.0, -2.0}, {0.2, 0.1}, {-0.4, 0.3}};

std::string program(const std::string& rule, const std::string& T) {
  return "T = " + T + R"(
m = Dense(T[0.5 -1.0; 2.0 0.25], T[0.1, -0.3], relu)
g1 = (weight = [0.3 0.4; -0.2 0.1], bias = [1.0, -2.0], σ = nothing)
g2 = (weight = [-0.1 0.2; 0.5 -0.3], bias = [0.2, 0.1], σ = nothing)
g3 = (weight = [0.05 -0.6; 0.1 0.2], bias = [-0.4, 0.3], σ = nothing)
s = Optimisers.setup()" +
         rule + R"(, m)
step(m, s, g) = Optimisers.update(s, m, g)
s1, m1 = step(m, s, g1)
s2, m2 = step(m1, s1, g2)
s3, m3 = step(m2, s2, g3)
)";
}

std::vector<double> values_of(Interpreter& in, const std::string& expr) {
  Value v = in.eval_text(expr);
  const Tensor& t = v.tensor().data;
  std::vector<double> out;
  for (int64_t k = 0; k < t.size(); ++k) out.push_back(element_value(t, k));
  return out;
}

void check_close(const Vec& got, const Vec& want, double rel, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << " element " << i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(rel));
  }
}

// The tensors of a value in the order of a trace's outputs (static parts left out, as the
// trace leaves them).
void leaves(Interpreter& in, const Value& v, std::vector<Tensor>& out) {
  if (v.kind == VKind::tuple || v.kind == VKind::named_tuple) {
    for (const Value& item : v.tup().items) leaves(in, item, out);
  } else if (v.kind == VKind::object) {
    // A struct's integer and Bool fields are static settings, no outputs.
    for (const Value& field : v.object().fields) {
      if (field.kind != VKind::integer && field.kind != VKind::boolean) leaves(in, field, out);
    }
  } else if (v.is_tensor() || v.kind == VKind::float_) {
    out.push_back(in.as_tensor(v, v.is_tensor() ? v.tensor().type.dtype : v.dtype).tensor().data);
  } else if (v.kind == VKind::integer || v.kind == VKind::boolean) {
    out.push_back(
        in.as_tensor(v, v.kind == VKind::integer ? DType::i64 : DType::boolean).tensor().data);
  }
}

// Traces step(m, s, g), runs the tape three times, each run's state and model outputs
// being the next run's inputs, and checks the last outputs against the interpreter's
// s3 and m3, and that Float32 parameters and their state stay Float32.
void check_traced_steps(const std::string& text) {
  Program in;
  in.run_text("t.jl", text);
  Traced t = trace(in, "step", {"m", "s", "g1"});
  validate(t.tape);
  // No branch on a value: a guard would tie the tape to these example values.
  CHECK(print_tape(t.tape).find("guard") == std::string::npos);
  // Only the Float64 gradients and hyperparameters are f64: every array an op computes is
  // f32, the gradients' converts first.
  for (const Op& op : t.tape.ops) {
    if (op.kind != OpKind::call) continue;
    for (Var v : op.outs) {
      if (t.tape.type(v).rank() > 0) CHECK(t.tape.type(v).dtype == DType::f32);
    }
  }
  Executor executor(t.tape);
  TensorMap inputs = t.inputs;
  std::vector<Tensor> outs;
  for (int k = 1; k <= 3; ++k) {
    if (k > 1) {
      std::vector<Tensor> grads;
      leaves(in, in.eval_text("g" + std::to_string(k)), grads);
      size_t next_grad = 0;
      for (auto& [name, tensor] : inputs) {
        std::string out_name = name.starts_with("m.")   ? "out.2." + name.substr(2)
                               : name.starts_with("s.") ? "out.1." + name.substr(2)
                                                        : "";
        if (out_name.empty()) {
          tensor = grads.at(next_grad++);
          continue;
        }
        auto at = std::find_if(t.tape.outputs.begin(), t.tape.outputs.end(),
                               [&](const Output& o) { return o.name == out_name; });
        REQUIRE_MESSAGE(at != t.tape.outputs.end(), "no output " << out_name);
        tensor = outs.at(static_cast<size_t>(at - t.tape.outputs.begin()));
      }
    }
    outs = executor.run(inputs);
  }
  std::vector<Tensor> want;
  leaves(in, in.eval_text("(s3, m3)"), want);
  REQUIRE(outs.size() == want.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string& name = t.tape.outputs[i].name;
    INFO("output " << name);
    CHECK(outs[i].dtype() == want[i].dtype());
    REQUIRE(outs[i].shape() == want[i].shape());
    for (int64_t k = 0; k < want[i].size(); ++k) {
      CHECK(element_value(outs[i], k) == doctest::Approx(element_value(want[i], k)).epsilon(1e-5));
    }
    bool parameter = name.ends_with(".weight") || name.ends_with(".bias");
    bool array_state = name.find(".state") != std::string::npos && outs[i].shape().size() > 0;
    if (parameter || array_state) CHECK(outs[i].dtype() == DType::f32);
  }
}

// Traces entry on args and checks each output against the interpreter's call, leaf by leaf.
void check_trace_leaves(const std::string& text, const std::string& entry,
                        const std::vector<std::string>& args) {
  Program in;
  in.run_text("t.jl", text);
  std::string call = entry + "(";
  for (size_t i = 0; i < args.size(); ++i) call += (i > 0 ? ", " : "") + args[i];
  std::vector<Tensor> want;
  leaves(in, in.eval_text(call + ")"), want);
  Traced t = trace(in, entry, args);
  validate(t.tape);
  CHECK(print_tape(t.tape).find("guard") == std::string::npos);
  std::vector<Tensor> outs = Executor(t.tape).run(t.inputs);
  REQUIRE(outs.size() == want.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    INFO("output " << t.tape.outputs[i].name);
    CHECK(outs[i].dtype() == want[i].dtype());
    REQUIRE(outs[i].shape() == want[i].shape());
    for (int64_t k = 0; k < want[i].size(); ++k) {
      CHECK(element_value(outs[i], k) == doctest::Approx(element_value(want[i], k)).epsilon(1e-5));
    }
  }
}

}  // namespace

TEST_CASE("Optimisers rules: three steps equal a reference computed from the formulas") {
  for (std::string T : {"Float64", "Float32"}) {
    bool single = T == "Float32";
    double rel = single ? 2e-5 : 1e-12;
    for (const Case& c : cases(single)) {
      INFO(c.rule << " on " << T);
      Program in;
      in.run_text("t.jl", program(c.rule, T));
      check_close(values_of(in, "m3.weight"), reference(c.make_rule(), kWeight, kWeightGrads), rel,
                  "weight");
      check_close(values_of(in, "m3.bias"), reference(c.make_rule(), kBias, kBiasGrads), rel,
                  "bias");
      CHECK(show(in.eval_text("eltype(m3.weight), eltype(m3.bias), m3.σ, typeof(m3)")) ==
            "(" + T + ", " + T + ", relu, Dense)");
    }
  }
}

TEST_CASE("Optimisers rules traced: three runs of one step's tape equal the interpreter's") {
  for (const Case& c : cases(true)) {
    INFO(c.rule);
    check_traced_steps(program(c.rule, "Float32"));
  }
}

TEST_CASE("the rules' defaults are Optimisers.jl 0.3's") {
  CHECK(eval_show("", "Descent().eta === 1f-1, Momentum(), Nesterov(), Adam()") ==
        "(true, Momentum(0.01, 0.9), Nesterov(0.001, 0.9), Adam(0.001, (0.9, 0.999), 1.0e-8))");
  CHECK(eval_show("", "WeightDecay(), ClipNorm(), ClipNorm(1, Inf), ClipNorm(1, 3.5).p") ==
        "(WeightDecay(0.0005), ClipNorm(10.0, 2, true), ClipNorm(1.0, :Inf, true), 3.5)");
  CHECK(eval_show("",
                  "Descent(; eta = 0.2), Momentum(0.1; rho = 0.5), Nesterov(; rho = 0.8), "
                  "Adam(; beta = (0.8, 0.9)), WeightDecay(; lambda = 0.1)") ==
        "(Descent(0.2), Momentum(0.1, 0.5), Nesterov(0.001, 0.8), Adam(0.001, (0.8, 0.9), 1.0e-8), "
        "WeightDecay(0.1))");
  CHECK(eval_show("", "AdamW(; lambda = 0.1), Descent(0.3)") ==
        "(OptimiserChain((Adam(0.001, (0.9, 0.999), 1.0e-8), WeightDecay(0.1))), Descent(0.3))");
  CHECK(eval_show("", "AdamW()") ==
        "OptimiserChain((Adam(0.001, (0.9, 0.999), 1.0e-8), WeightDecay(0)))");
  CHECK(eval_show("", "AdamW(0.01, (0.8, 0.9), 0.1, 1e-6)") ==
        "OptimiserChain((Adam(0.01, (0.8, 0.9), 1.0e-6), WeightDecay(0.1)))");
}

TEST_CASE("ClipNorm with p = 1 and Inf scales by that norm") {
  std::string p = R"(
m = (w = [3.0, -4.0],)
g = (w = [3.0, -4.0],)
)";
  // |g|₁ = 7, |g|∞ = 4: dx = g min(1/7, 1) and g min(1/4, 1).
  CHECK(eval_show(p, "Optimisers.update(Optimisers.setup(ClipNorm(1, 1), m), m, g)[2].w") ==
        "[2.5714285714285716, -3.428571428571429]");
  CHECK(eval_show(p, "Optimisers.update(Optimisers.setup(ClipNorm(1, Inf), m), m, g)[2].w") ==
        "[2.25, -3.0]");
}

TEST_CASE("Optimisers.setup: the state tree mirrors the model") {
  std::string p = R"(
seed!(1)
c = Chain(Dense(2 => 3, relu), Dense(3 => 1; bias=false), x -> 2x)
s = Optimisers.setup(Momentum(), c)
nt = (a = Float32[1, 2], b = (3, [1.0]), c = [1, 2], d = 2.5, e = "text", f = true)
r = RNN(2 => 3)
)";
  CHECK(eval_show(p, "typeof(s), keys(s), length(s.layers), s.layers[3], keys(s.layers[1])") ==
        "(NamedTuple, (:layers,), 3, nothing, (:weight, :bias, :σ))");
  CHECK(eval_show(p,
                  "s.layers[1].weight isa Leaf, s.layers[1].weight.state, s.layers[1].σ, "
                  "s.layers[2].bias") ==
        "(true, Float32[0.0 0.0; 0.0 0.0; 0.0 0.0], nothing, nothing)");
  // Float arrays get a Leaf; numbers, integer arrays, strings and Bools nothing, as in
  // Optimisers.jl; tuples stay tuples.
  CHECK(eval_show(p, "Optimisers.setup(Adam(), nt)") ==
        "(a = Leaf(Adam(0.001, (0.9, 0.999), 1.0e-8), (Float32[0.0, 0.0], Float32[0.0, 0.0], "
        "(0.9f0, 0.999f0))), b = (nothing, Leaf(Adam(0.001, (0.9, 0.999), 1.0e-8), ([0.0], "
        "[0.0], (0.9, 0.999)))), c = nothing, d = nothing, e = nothing, f = nothing)");
  CHECK(eval_show(p, "Optimisers.setup(OptimiserChain(ClipNorm(), Nesterov()), (w = [1.0],))") ==
        "(w = Leaf(OptimiserChain((ClipNorm(10.0, 2, true), Nesterov(0.001, 0.9))), "
        "(nothing, [0.0])),)");
  // A Recur's hidden state is not trainable (Flux's trainable), its cell is.
  CHECK(eval_show(p,
                  "sr = Optimisers.setup(Descent(), r); sr.state, keys(sr.cell), "
                  "sr.cell.Wi isa Leaf, sr.cell.state0 isa Leaf") ==
        "(nothing, (:σ, :Wi, :Wh, :b, :state0), true, true)");
}

TEST_CASE("Optimisers.update: nothing gradients, rebuilt structs, and update!") {
  std::string p = R"(
struct Affine
  w
  b
  name
end
# An outer constructor that must not run again when update rebuilds the struct.
Affine(w, b) = error("constructor called")
m = (layer = new_instance(Affine, [1.0, 2.0], [0.5], "a"), scale = [1.0], n = 3)
s = Optimisers.setup(Momentum(0.1, 0.5), m)
g = (layer = (w = [1.0, 1.0], b = nothing, name = nothing), scale = nothing, n = nothing)
s1, m1 = Optimisers.update(s, m, g)
)";
  CHECK(eval_show(p, "m1.layer isa Affine, m1.layer.w, m1.layer.b, m1.scale, m1.n, m.layer.w") ==
        "(true, [0.9, 1.9], [0.5], [1.0], 3, [1.0, 2.0])");
  // The untouched leaves keep their state; the model passed in is unchanged.
  CHECK(eval_show(p, "s1.layer.w.state, s1.layer.b.state, s1.scale.state, s.layer.w.state") ==
        "([0.1, 0.1], [0.0], [0.0], [0.0, 0.0])");
  // A gradient may leave fields out (nothing), and a whole subtree may be nothing.
  CHECK(eval_show(p,
                  "Optimisers.update(s, m, (layer = (b = [1.0],),))[2].layer.b, "
                  "Optimisers.update(s, m, nothing)[2].layer.w") == "([0.4], [1.0, 2.0])");
  // update! gives the same and changes the model's arrays and the Leafs in place.
  CHECK(eval_show(p,
                  "s2, m2 = Optimisers.update!(s, m, g); m.layer.w, s.layer.w.state, "
                  "m2.layer.w, s2 === s") == "([0.9, 1.9], [0.1, 0.1], [0.9, 1.9], true)");
}

TEST_CASE("update! traces as update does; the model is as it was after the trace") {
  std::string p = R"(
m = (layer = Dense(Float32[1 2; 3 4], Float32[0.5, -0.5], tanh), scale = 2.5)
s = Optimisers.setup(OptimiserChain(WeightDecay(0.1), Adam(0.01)), m)
g = (layer = (weight = Float32[1 1; 1 1], bias = Float32[1, -1], σ = nothing), scale = 1.0)
step!(m, s, g) = Optimisers.update!(s, m, g)
)";
  Program in;
  in.run_text("t.jl", p);
  std::vector<Tensor> want;
  leaves(in, in.eval_text("Optimisers.update(s, m, g)"), want);
  Traced t = trace(in, "step!", {"m", "s", "g"});
  std::vector<Tensor> outs = Executor(t.tape).run(t.inputs);
  REQUIRE(outs.size() == want.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    INFO("output " << t.tape.outputs[i].name);
    for (int64_t k = 0; k < want[i].size(); ++k) {
      CHECK(element_value(outs[i], k) == doctest::Approx(element_value(want[i], k)).epsilon(1e-6));
    }
  }
  // The float number's gradient is ignored (no Leaf), as in Optimisers.jl.
  CHECK(show(in.eval_text("m.layer.weight, s.layer.bias.state[2][1], m.scale")) ==
        "(Float32[1.0 2.0; 3.0 4.0], Float32[0.0, 0.0], 2.5)");
}

TEST_CASE("a training step with gradient and update traces into one tape, run step after step") {
  // Float32 data and model, Float64 hyperparameters: the whole step stays Float32.
  std::string p = R"(
seed!(4)
m = Chain(Dense(3 => 4, tanh), BatchNorm(4), Dense(4 => 2))
x = randn(Float32, 3, 6)
y = randn(Float32, 2, 6)
s = Optimisers.setup(OptimiserChain(ClipNorm(1.0), AdamW(0.01, (0.9, 0.999), 0.001)), m)
function train_step(m, s)
  l, (g,) = withgradient(m -> Flux.mse(m(x), y), m)
  s, m = Optimisers.update(s, m, g)
  s, m, l
end
)";
  Program in;
  in.run_text("t.jl", p);
  // Traced first: the concrete steps write BatchNorm's statistics into m.
  Traced t = trace(in, "train_step", {"m", "s"});
  in.run_text("steps.jl", R"(
s1, m1, l1 = train_step(m, s)
s2, m2, l2 = train_step(m1, s1)
s3, m3, l3 = train_step(m2, s2)
)");
  CHECK(show(in.eval_text("l3 < l2 < l1, s.layers[2].μ, keys(s.layers[2])")) ==
        "(true, nothing, (:weight, :bias, :σ, :μ, :σ², :eps, :momentum, :track_stats, :active))");
  validate(t.tape);
  CHECK(print_tape(t.tape).find("guard") == std::string::npos);
  Executor executor(t.tape);
  TensorMap inputs = t.inputs;
  std::vector<Tensor> outs;
  for (int k = 1; k <= 3; ++k) {
    if (k > 1) {
      for (auto& [name, tensor] : inputs) {
        std::string out_name = (name.starts_with("s.") ? "out.1." : "out.2.") + name.substr(2);
        auto at = std::find_if(t.tape.outputs.begin(), t.tape.outputs.end(),
                               [&](const Output& o) { return o.name == out_name; });
        REQUIRE_MESSAGE(at != t.tape.outputs.end(), "no output " << out_name);
        tensor = outs.at(static_cast<size_t>(at - t.tape.outputs.begin()));
      }
    }
    outs = executor.run(inputs);
  }
  std::vector<Tensor> want;
  leaves(in, in.eval_text("(s3, m3, l3)"), want);
  REQUIRE(outs.size() == want.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    INFO("output " << t.tape.outputs[i].name);
    CHECK(outs[i].dtype() == want[i].dtype());
    for (int64_t k = 0; k < want[i].size(); ++k) {
      CHECK(element_value(outs[i], k) == doctest::Approx(element_value(want[i], k)).epsilon(1e-4));
    }
  }
}

TEST_CASE("Optimisers.update: a gradient that does not match the model names where") {
  std::string p = R"(
seed!(1)
c = Chain(Dense(2 => 3), Dense(3 => 1))
s = Optimisers.setup(Descent(), c)
)";
  auto message = [&](const std::string& grad) {
    std::string e = run_error(p + "Optimisers.update(s, c, " + grad + ")");
    return e.substr(0, e.find('\n'));
  };
  std::string prefix =
      "t.jl:5:12: Optimisers.update: the gradient does not match the model at model.layers";
  CHECK(message("(layers = (nothing, (weight = ones(3, 1),)),)") ==
        prefix +
            "[2].weight: the parameter is a Matrix{Float32} of size (1, 3), its gradient a "
            "Matrix{Float64} of size (3, 1)");
  CHECK(message("(layers = (nothing,),)") ==
        prefix +
            ": the model has a tuple of 2, the gradient a Tuple{Nothing} of 1 (a tuple of 2 or "
            "nothing)");
  CHECK(message("(layers = ((weigth = ones(3, 2),), nothing),)") ==
        prefix +
            "[1]: the gradient has a field weigth, which a Dense has not; its fields are "
            "weight, bias, σ");
  CHECK(message("(layers = ([1.0], nothing),)") ==
        prefix +
            "[1]: the model has a Dense, the gradient a Vector{Float64} (a named tuple of its "
            "fields, or nothing)");
}

TEST_CASE("Optimisers.adjust and adjust!: a new learning rate, the state kept") {
  std::string p = R"(
m = (w = [1.0, 2.0], v = [3.0])
s = Optimisers.setup(OptimiserChain(WeightDecay(0.1), Adam(0.01)), m)
s1, m1 = Optimisers.update(s, m, (w = [1.0, 1.0], v = [1.0]))
a = Optimisers.adjust(s1, 0.5)
)";
  CHECK(eval_show(p, "a.w.rule, a.w.state == s1.w.state, s1.w.rule.opts[2].eta") ==
        "(OptimiserChain((WeightDecay(0.1), Adam(0.5, (0.9, 0.999), 1.0e-8))), true, 0.01)");
  CHECK(eval_show(p, "Optimisers.adjust(s1; beta = (0.5, 0.6)).v.rule.opts[2]") ==
        "Adam(0.01, (0.5, 0.6), 1.0e-8)");
  CHECK(eval_show(p, "Optimisers.adjust!(s1, 0.2); s1.w.rule.opts[2].eta, s1.v.rule.opts[2].eta") ==
        "(0.2, 0.2)");
  CHECK(eval_show(p, "Optimisers.adjust!(s1; lambda = 0.3); s1.v.rule.opts[1]") ==
        "WeightDecay(0.3)");
}

TEST_CASE("schedules: Step and CosAnneal at several steps, concrete and traced") {
  std::string p = R"(
st = Step(1.0, 0.5, 3)
ca = CosAnneal(0.1, 0.01, 4)
cn = CosAnneal(; λ0 = 0.01, λ1 = 0.1, period = 4, restart = false)
schedules(t) = (st(t), ca(t), cn(t))
t7 = 7.0
t9 = 9.0
)";
  // Step: λ γ^floor((t - 1) / 3). CosAnneal: 0.09 (1 + cos(π t̂ / 4)) / 2 + 0.01 with
  // t̂ = (t - 1) mod 4 (restart) or t - 1.
  auto cos_anneal = [](double t_hat) { return 0.09 * (1 + std::cos(M_PI * t_hat / 4)) / 2 + 0.01; };
  for (int t : {1, 2, 3, 4, 5, 7, 9}) {
    INFO("t = " << t);
    Program in;
    in.run_text("t.jl", p);
    Value v = in.eval_text("schedules(" + std::to_string(t) + ")");
    CHECK(as_double(v.tup().items[0]) == doctest::Approx(std::pow(0.5, (t - 1) / 3)));
    CHECK(as_double(v.tup().items[1]) == doctest::Approx(cos_anneal((t - 1) % 4)));
    CHECK(as_double(v.tup().items[2]) == doctest::Approx(cos_anneal(t - 1)));
  }
  check_trace_matches(p, "schedules", {"t7"});
  // One tape for every step: floor has no guard, so each run follows its own t.
  Program in;
  in.run_text("t.jl", p);
  Traced traced = trace(in, "schedules", {"t7"});
  CHECK(print_tape(traced.tape).find("guard") == std::string::npos);
  Executor executor(traced.tape);
  for (int t = 1; t <= 13; ++t) {
    INFO("traced, t = " << t);
    Tensor tt(Type{DType::f64, {}});
    tt.data<double>()[0] = t;
    std::vector<Tensor> outs = executor.run({{"t", tt}});
    CHECK(element_value(outs[0], 0) == doctest::Approx(std::pow(0.5, (t - 1) / 3)));
    CHECK(element_value(outs[1], 0) == doctest::Approx(cos_anneal((t - 1) % 4)));
    CHECK(element_value(outs[2], 0) == doctest::Approx(cos_anneal(t - 1)));
  }
}

TEST_CASE("a training step with a schedule traces: adjust by s(t), then update") {
  std::string p = R"(
seed!(3)
m = Chain(Dense(2 => 2, tanh))
s = Optimisers.setup(Adam(), m)
g = (layers = ((weight = ones(Float32, 2, 2), bias = Float32[1, -1], σ = nothing),),)
sched = CosAnneal(0.1, 0.001, 10)
step(m, s, g, t) = Optimisers.update(Optimisers.adjust(s, sched(t)), m, g)
t = 4.0
)";
  check_trace_leaves(p, "step", {"m", "s", "g", "t"});
  std::string text = trace_text(p, "step", {"m", "s", "g", "t"});
  CHECK(text.find("out.2.layers.1.weight\n") != std::string::npos);
  CHECK(text.find("sub(%1, ") != std::string::npos);
}

}  // namespace ytape::tracer::testing
