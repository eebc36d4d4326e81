#include "grad/gradcheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "runtime/random.h"
#include "tape/error.h"
#include "tape/passes/promote.h"

namespace ytape::grad {

namespace {

Tensor widened(const Tensor& x) {
  if (x.dtype() != DType::f32) return x;
  Tensor out(Type{DType::f64, x.shape()});
  std::copy(x.data<float>(), x.data<float>() + x.size(), out.data<double>());
  return out;
}

Tensor normal(const Type& type, uint64_t seed) {
  Tensor t(type);
  for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = normal_f64(seed, i);
  return t;
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (int64_t i = 0; i < a.size(); ++i) s += a.data<double>()[i] * b.data<double>()[i];
  return s;
}

// The promoted tape as a scalar function of its inputs: the output itself, or the sum of
// each float output dotted with its seed.
class Objective {
 public:
  Objective(const Tape& t, const TensorMap& seeds) : exec_(t), seeds_(seeds) {
    exec_.set_print([](std::string_view) {});  // once per run would flood the output
  }
  double operator()(const TensorMap& inputs) {
    std::vector<Tensor> outs = exec_.run(inputs);
    if (seeds_.empty()) return outs[0].data<double>()[0];
    double s = 0;
    for (size_t k = 0, j = 0; k < outs.size(); ++k) {
      if (outs[k].dtype() == DType::f64) s += dot(outs[k], seeds_[j++].second);
    }
    return s;
  }

 private:
  Executor exec_;
  const TensorMap& seeds_;
};

// A central difference and the rounding noise it carries: the two values of f are
// exact to a few ulp each, so their difference is uncertain by that much over 2 eps.
struct Difference {
  double value = 0;
  double noise = 0;
};

struct Checker {
  const GradcheckOptions& o;
  InputCheck& c;
  void compare(double analytic, Difference numeric) {
    double err = std::abs(analytic - numeric.value);
    double scale = std::max(std::abs(analytic), std::abs(numeric.value));
    c.max_abs = std::max(c.max_abs, err);
    if (scale > 0) c.max_rel = std::max(c.max_rel, err / scale);
    if (!(err <= o.atol + o.rtol * scale + numeric.noise)) c.ok = false;  // NaN fails too
    ++c.checks;
  }
};

// Central difference of f along `dir` (added to input `k`).
Difference directional(Objective& f, TensorMap& inputs, size_t k, const Tensor& dir, double eps) {
  Tensor saved = inputs[k].second;
  auto shifted = [&](double step) {
    Tensor x = saved.clone();
    for (int64_t i = 0; i < x.size(); ++i) x.data<double>()[i] += step * dir.data<double>()[i];
    inputs[k].second = x;
    return f(inputs);
  };
  double up = shifted(eps), down = shifted(-eps);
  inputs[k].second = saved;
  constexpr double kUlps = 64 * std::numeric_limits<double>::epsilon();
  return {(up - down) / (2 * eps), kUlps * (std::abs(up) + std::abs(down)) / (2 * eps)};
}

void check_input(Objective& f, TensorMap& inputs, size_t k, const Tensor& grad,
                 const GradcheckOptions& o, InputCheck& c) {
  Checker check{o, c};
  const Tensor& x = inputs[k].second;
  c.elementwise = x.size() <= o.max_elements;
  if (c.elementwise) {
    Tensor e(x.type());
    for (int64_t i = 0; i < x.size(); ++i) {
      e.data<double>()[i] = 1;
      check.compare(grad.data<double>()[i], directional(f, inputs, k, e, o.eps));
      e.data<double>()[i] = 0;
    }
    return;
  }
  for (int d = 0; d < o.directions; ++d) {
    Tensor v = normal(x.type(), o.seed + 1000 * (k + 1) + d);
    check.compare(dot(grad, v), directional(f, inputs, k, v, o.eps));
  }
}

}  // namespace

GradcheckResult gradcheck(const Tape& t, const TensorMap& inputs, const GradcheckOptions& o) {
  Tape p = promote_to_f64(t);
  bool scalar = p.outputs.size() == 1 && p.type(p.outputs[0].var).dtype == DType::f64 &&
                p.type(p.outputs[0].var).rank() == 0;
  TensorMap values, seeds;
  for (const auto& [name, value] : inputs) values.emplace_back(name, widened(value));
  if (!scalar) {
    for (const Output& out : p.outputs) {
      if (p.type(out.var).dtype != DType::f64) continue;
      seeds.emplace_back(out.name, normal(p.type(out.var), o.seed + seeds.size() + 1));
    }
    if (seeds.empty()) user_error("tape '{}' has no float output to check", t.name);
  }
  Tape g = gradient(p, {o.wrt, !scalar});

  // Seed inputs follow the tape's own inputs in the gradient tape, in output order.
  TensorMap grad_inputs = values;
  for (size_t j = 0; j < seeds.size(); ++j) {
    grad_inputs.emplace_back(g.ops[p.num_inputs() + j].name, seeds[j].second);
  }
  Executor exec(g);
  exec.set_print([](std::string_view) {});
  std::vector<Tensor> outs = exec.run(grad_inputs);

  Objective f(p, seeds);
  GradcheckResult result;
  std::vector<bool> chosen = chosen_inputs(p, o.wrt);
  size_t next_grad = p.outputs.size();
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (!chosen[i]) continue;
    const Tensor& grad = outs[next_grad++];
    const std::string& name = p.ops[i].name;
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    if (it == values.end()) user_error("no value given for input '{}'", name);
    if (it->second.dtype() != DType::f64) continue;
    InputCheck c{name};
    check_input(f, values, static_cast<size_t>(it - values.begin()), grad, o, c);
    result.ok = result.ok && c.ok;
    result.inputs.push_back(c);
  }
  return result;
}

std::string gradcheck_table(const GradcheckResult& r) {
  size_t width = 5;
  for (const InputCheck& c : r.inputs) width = std::max(width, c.name.size());
  std::string out = fmt::format("{:<{}}  {:>16}  {:>10}  {:>10}  {}\n", "input", width, "checked",
                                "max abs", "max rel", "");
  for (const InputCheck& c : r.inputs) {
    std::string checked = fmt::format("{} {}", c.checks, c.elementwise ? "elements" : "directions");
    out += fmt::format("{:<{}}  {:>16}  {:>10.3g}  {:>10.3g}  {}\n", c.name, width, checked,
                       c.max_abs, c.max_rel, c.ok ? "ok" : "FAIL");
  }
  return out;
}

}  // namespace ytape::grad
