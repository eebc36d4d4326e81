// Random-tape differential tests: on tapes drawn from every op family (check/random_tape.h),
// each stage is checked against another that computes the same thing. YTAPE_RANDOM_TAPES
// sets how many tapes and YTAPE_RANDOM_FIRST the first seed (scripts/soak.sh runs many more
// than the default).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "check/gradcheck.h"
#include "check/random_tape.h"
#include "grad/grad.h"
#include "grad/jvp.h"
#include "inspect/diff.h"
#include "io/json.h"
#include "opt/optimize.h"
#include "opt/promote.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/random.h"
#include "tape/builder.h"
#include "tape/validate.h"

namespace ytape::check {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

Choose chooser(std::mt19937_64& rng) {
  return [&rng](uint64_t n) { return rng() % n; };
}

std::vector<Tensor> run(const Tape& t, const TensorMap& inputs) {
  return Executor(t).run(inputs);
}

// Every output element within tol * (1 + |b|) of the other's; f32 values are widened.
bool close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape()) return false;
    for (int64_t k = 0; k < a[i].size(); ++k) {
      double x = a[i].dtype() == DType::f32 ? a[i].data<float>()[k] : a[i].data<double>()[k];
      double y = b[i].dtype() == DType::f32 ? b[i].data<float>()[k] : b[i].data<double>()[k];
      if (!(std::abs(x - y) <= tol * (1 + std::abs(y)))) return false;
    }
  }
  return true;
}

// The same tape with its inputs and its other ops in another order that respects the data
// flow, so renumbered throughout.
Tape shuffled(const Tape& t, std::mt19937_64& rng) {
  Builder b = Builder::like(t);
  VarMap map(t);
  std::vector<size_t> inputs, rest;
  for (size_t i = 0; i < t.ops.size(); ++i)
    (t.ops[i].kind == OpKind::input ? inputs : rest).push_back(i);
  std::shuffle(inputs.begin(), inputs.end(), rng);
  for (size_t i : inputs) copy_op(b, t, t.ops[i], map);
  while (!rest.empty()) {
    std::vector<size_t> ready;
    for (size_t k = 0; k < rest.size(); ++k) {
      const Op& op = t.ops[rest[k]];
      if (std::all_of(op.args.begin(), op.args.end(), [&](Var a) { return map.has(a); })) {
        ready.push_back(k);
      }
    }
    size_t k = ready[rng() % ready.size()];
    copy_op(b, t, t.ops[rest[k]], map);
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(k));
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

// The f32 values of `inputs`, widened for the promoted tape.
TensorMap widened(const TensorMap& inputs) {
  TensorMap out;
  for (const auto& [name, t] : inputs) {
    Tensor w(Type{DType::f64, t.shape()});
    for (int64_t k = 0; k < t.size(); ++k) w.data<double>()[k] = t.data<float>()[k];
    out.emplace_back(name, std::move(w));
  }
  return out;
}

// Small integers for every input of `t`, as i64 or as f64.
// Whether forward mode agrees with reverse mode on `t` at `in`: for random tangents v and
// seeds u, Σ ⟨u, J v⟩ (jvp) equals Σ ⟨Jᵀ u, v⟩ (the gradient with seeds).
bool forward_matches_reverse(const Tape& t, const TensorMap& in, uint64_t seed) {
  Tape j = grad::jvp(t), g = grad::gradient(t, {{}, true});
  auto normal = [&](const Type& type, uint64_t s) {
    Tensor x(type);
    for (int64_t k = 0; k < x.size(); ++k) x.data<double>()[k] = normal_f64(s, k);
    return x;
  };
  TensorMap jin = in, gin = in;
  for (size_t i = t.num_inputs(); i < j.num_inputs(); ++i)
    jin.emplace_back(j.ops[i].name, normal(j.type(j.ops[i].outs[0]), seed * 31 + i));
  for (size_t i = t.num_inputs(); i < g.num_inputs(); ++i)
    gin.emplace_back(g.ops[i].name, normal(g.type(g.ops[i].outs[0]), seed * 37 + i));
  std::vector<Tensor> jv = run(j, jin), jtu = run(g, gin);
  auto dot = [](const Tensor& a, const Tensor& b) {
    double d = 0;
    for (int64_t k = 0; k < a.size(); ++k) d += element_value(a, k) * element_value(b, k);
    return d;
  };
  double lhs = 0, rhs = 0, scale = 1;
  for (size_t k = t.outputs.size(); k < jv.size(); ++k) {
    lhs += dot(jv[k], gin[t.num_inputs() + k - t.outputs.size()].second);
    scale += std::abs(lhs);
  }
  for (size_t k = t.outputs.size(); k < jtu.size(); ++k) {
    rhs += dot(jtu[k], jin[t.num_inputs() + k - t.outputs.size()].second);
    scale += std::abs(rhs);
  }
  return std::abs(lhs - rhs) <= 1e-9 * scale;
}

TensorMap integer_inputs(const Tape& t, DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorMap out;
  for (size_t i = 0; i < t.num_inputs(); ++i) {
    const Op& op = t.ops[i];
    Tensor x(t.type(op.outs[0]));
    for (int64_t k = 0; k < x.size(); ++k) {
      auto v = static_cast<int64_t>(rng() % 9) - 4;
      if (dtype == DType::i64) {
        x.data<int64_t>()[k] = v;
      } else {
        x.data<double>()[k] = static_cast<double>(v);
      }
    }
    out.emplace_back(op.name, std::move(x));
  }
  return out;
}

}  // namespace

TEST_CASE("random integer tapes: i64 runs give what the same tape gives in f64") {
  const int count = env_int("YTAPE_RANDOM_TAPES", 300);
  const int first_seed = env_int("YTAPE_RANDOM_FIRST", 1);
  for (int seed = first_seed; seed < first_seed + count; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(static_cast<uint64_t>(seed)), rng64(static_cast<uint64_t>(seed));
    Tape t = random_tape(chooser(rng), {.dtype = DType::i64, .ops = 12, .exact = true});
    Tape t64 = random_tape(chooser(rng64), {.dtype = DType::f64, .ops = 12, .exact = true});
    REQUIRE_NOTHROW(validate(t));
    std::string json = write_tape_json(t);
    CHECK(write_tape_json(read_tape_json(json, "random.json")) == json);
    CHECK(diff_tapes(t, shuffled(t, rng)).same());

    TensorMap in = integer_inputs(t, DType::i64, static_cast<uint64_t>(seed));
    std::vector<Tensor> out = run(t, in);
    CHECK(same_values(run(optimize(t), in), out));
    std::vector<Tensor> out64 =
        run(t64, integer_inputs(t64, DType::f64, static_cast<uint64_t>(seed)));
    REQUIRE(out.size() == 1);
    REQUIRE(out64.size() == 1);
    CHECK(static_cast<double>(out[0].data<int64_t>()[0]) == out64[0].data<double>()[0]);
  }
}

TEST_CASE("random tapes: every stage agrees with another that computes the same") {
  const int count = env_int("YTAPE_RANDOM_TAPES", 300);
  const int first_seed = env_int("YTAPE_RANDOM_FIRST", 1);
  int second_order = 0, precision = 0, scans = 0;
  for (int seed = first_seed; seed < first_seed + count; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    Tape t = random_tape(chooser(rng), {.dtype = DType::f64, .ops = 12});
    REQUIRE_NOTHROW(validate(t));
    scans +=
        std::any_of(t.ops.begin(), t.ops.end(), [](const Op& op) { return !op.regions.empty(); });

    // The JSON form is canonical: read back, it writes the same bytes.
    std::string json = write_tape_json(t);
    CHECK(write_tape_json(read_tape_json(json, "random.json")) == json);

    // A renumbered, reordered copy computes the same thing.
    CHECK(diff_tapes(t, shuffled(t, rng)).same());

    // The passes keep every bit of every output.
    TensorMap in = complete_inputs(t, {}, static_cast<uint64_t>(seed));
    std::vector<Tensor> out = run(t, in);
    CHECK(same_values(run(optimize(t), in), out));

    // The gradient matches central differences, and grad of opt is opt of grad.
    GradcheckOptions options;
    options.seed = static_cast<uint64_t>(seed);
    GradcheckResult first = gradcheck(t, in, options);
    CHECK_MESSAGE(first.ok, gradcheck_table(first));
    Tape g = grad::gradient(t);
    CHECK(close(run(grad::gradient(optimize(t)), in), run(optimize(g), in), 1e-12));

    // Forward mode: the jvp contracted with seeds is the gradient contracted with tangents.
    CHECK(forward_matches_reverse(t, in, static_cast<uint64_t>(seed)));

    // Second order: the gradient tape's own gradient, on every fourth tape.
    if (seed % 4 == 0) {
      GradcheckResult second = gradcheck(g, in, options);
      CHECK_MESSAGE(second.ok, gradcheck_table(second));
      ++second_order;
    }

    // The same draws in f32 agree with their f64 promotion, unless an op jumps.
    std::mt19937_64 rng32(static_cast<uint64_t>(seed));
    Tape t32 = random_tape(chooser(rng32), {.dtype = DType::f32, .ops = 12});
    if (!has_jumps(t32)) {
      TensorMap in32 = complete_inputs(t32, {}, static_cast<uint64_t>(seed));
      CHECK(close(run(t32, in32), run(promote_to_f64(t32), widened(in32)), 1e-3));
      ++precision;
    }
  }
  MESSAGE(count << " random tapes; " << second_order << " checked to second order; " << precision
                << " compared in f32 and f64; " << scans << " with a region op");
  CHECK(precision > count / 4);  // most tapes have no jumps
  CHECK(scans > count / 10);     // region ops take part in every check above
}

}  // namespace ytape::check
