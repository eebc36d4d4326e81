#include "check/gradcheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

#include "check/kinks.h"
#include "grad/grad.h"
#include "opt/promote.h"
#include "runtime/executor.h"
#include "runtime/random.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "tape/op_attrs.h"

namespace ytape::check {

namespace {

// f32 and f16 values in f64, as promote_to_f64 makes the tape.
Tensor widened(const Tensor& x) {
  if (x.dtype() != DType::f32 && x.dtype() != DType::f16) return x;
  Tensor out(Type{DType::f64, x.shape()});
  for (int64_t i = 0; i < x.size(); ++i) out.data<double>()[i] = element_value(x, i);
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

// Whether two runs made the same choices: their decision outputs hold the same bytes.
// (A hash of them would not do: sign flips differ in one bit, and a pair of them can cancel.)
bool same_choices(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(a[i].raw(), b[i].raw(), static_cast<size_t>(a[i].bytes())) != 0) return false;
  }
  return true;
}

// The promoted tape as a scalar function of its inputs: the output itself, or the sum of
// each float output dotted with its seed; with the choices its ops made (check/kinks.h).
class Objective {
 public:
  Objective(const Tape& t, const TensorMap& seeds, const ExecutorOptions& options)
      : tape_(with_decisions(t)), exec_(tape_, options), seeds_(seeds), outputs_(t.outputs.size()) {
    exec_.set_print([](std::string_view) {});  // once per run would flood the output
  }
  struct Point {
    double value = 0;
    std::vector<Tensor> decisions;
  };
  Point operator()(const TensorMap& inputs) {
    std::vector<Tensor> outs = exec_.run(inputs);
    Point p;
    if (seeds_.empty()) p.value = outs[0].data<double>()[0];
    for (size_t k = 0, j = 0; k < outputs_ && !seeds_.empty(); ++k) {
      if (outs[k].dtype() == DType::f64) p.value += dot(outs[k], seeds_[j++].second);
    }
    p.decisions.assign(outs.begin() + static_cast<std::ptrdiff_t>(outputs_), outs.end());
    return p;
  }

 private:
  Tape tape_;
  Executor exec_;
  const TensorMap& seeds_;
  size_t outputs_;
};

// The function whose derivative ytape grad gives, for a tape with stop_gradient ops: each
// of their values held at what it is at `values`, as an input named "stop_gradient.K"
// after the tape's own (its value appended to `values`), so that finite differences see
// no dependence through them either. A tape without any is returned as it is.
Tape hold_stopped(const Tape& p, TensorMap& values, const ExecutorOptions& options) {
  auto is_stop = [](const Op& op) {
    return op.kind == OpKind::call && op.prim == Prim::stop_gradient;
  };
  std::vector<Var> stopped;
  for (const Op& op : p.ops) {
    if (is_stop(op)) stopped.push_back(op.outs[0]);
  }
  if (stopped.empty()) return p;
  Builder probe = Builder::like(p);  // p with the stopped values as outputs too
  VarMap at(p);
  for (const Op& op : p.ops) copy_op(probe, p, op, at);
  for (Var v : stopped) probe.output(at[v], fmt::format("stop_gradient.{}", v.id + 1));
  const Tape probed = probe.finish();  // the executor keeps a reference
  Executor exec(probed, options);
  exec.set_print([](std::string_view) {});
  std::vector<Tensor> held = exec.run(values);

  Builder b = Builder::like(p);
  VarMap map(p);
  for (const Op& op : p.ops) {
    if (op.kind == OpKind::input) copy_op(b, p, op, map);
  }
  for (size_t i = 0; i < stopped.size(); ++i) {
    std::string name = fmt::format("stop_gradient.{}", i + 1);
    map.set(stopped[i], b.input(name, p.type(stopped[i])));
    values.emplace_back(name, held[i]);
  }
  for (const Op& op : p.ops) {
    if (op.kind != OpKind::input && !is_stop(op)) copy_op(b, p, op, map);
  }
  for (const Output& o : p.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

// A central difference and the rounding noise it carries: the two values of f are
// exact to a few ulp each, so their difference is uncertain by that much over 2 eps.
struct Difference {
  double value = 0;
  double noise = 0;
};

// Whether `numeric` confirms `analytic` within the tolerances and its rounding noise.
bool agrees(const GradcheckOptions& o, double analytic, Difference numeric) {
  double err = std::abs(analytic - numeric.value);
  double scale = std::max(std::abs(analytic), std::abs(numeric.value));
  return err <= o.atol + o.rtol * scale + numeric.noise;  // NaN fails
}

struct Checker {
  const GradcheckOptions& o;
  InputCheck& c;
  void compare(double analytic, Difference numeric) {
    double err = std::abs(analytic - numeric.value);
    double scale = std::max(std::abs(analytic), std::abs(numeric.value));
    if (std::isnan(err)) {
      c.max_abs = c.max_rel = err;  // stays NaN: std::max would drop it
    } else if (!std::isnan(c.max_abs)) {
      c.max_abs = std::max(c.max_abs, err);
      if (scale > 0) c.max_rel = std::max(c.max_rel, err / scale);
    }
    if (!agrees(o, analytic, numeric)) c.ok = false;
    ++c.checks;
  }
};

// Central difference of f along `dir` (added to input `k`) with step `eps`, or nothing when
// its two points lie on different pieces of f: an op chose differently, or a guard failed
// at one of them (the traced path does not hold there).
std::optional<Difference> central(Objective& f, TensorMap& inputs, size_t k, const Tensor& dir,
                                  double eps) {
  Tensor saved = inputs[k].second;
  auto shifted = [&](double step) {
    Tensor x = saved.clone();
    for (int64_t i = 0; i < x.size(); ++i) x.data<double>()[i] += step * dir.data<double>()[i];
    inputs[k].second = x;
    return f(inputs);
  };
  Objective::Point up, down;
  try {
    up = shifted(eps);
    down = shifted(-eps);
  } catch (const UserError&) {
    inputs[k].second = saved;
    return std::nullopt;
  }
  inputs[k].second = saved;
  if (!same_choices(up.decisions, down.decisions)) return std::nullopt;
  constexpr double kUlps = 64 * std::numeric_limits<double>::epsilon();
  return Difference{(up.value - down.value) / (2 * eps),
                    kUlps * (std::abs(up.value) + std::abs(down.value)) / (2 * eps)};
}

// The first central difference along `dir` whose points lie on one piece of f, trying
// steps eps, eps/10, eps/100 and eps/1000.
std::optional<Difference> smooth_difference(Objective& f, TensorMap& inputs, size_t k,
                                            const Tensor& dir, double eps) {
  for (int attempt = 0; attempt < 4; ++attempt, eps /= 10) {
    if (std::optional<Difference> d = central(f, inputs, k, dir, eps)) return d;
  }
  return std::nullopt;
}

// A central difference errs in two ways its noise estimate does not bound: rounding of
// larger terms that cancel inside f (the estimate counts only f's two values), which
// shrinks as the step grows, and truncation, step² f''' / 6, which shrinks 100-fold for
// each 10-fold smaller step and is large where f''' is (cos of a large argument). So a
// difference that disagrees with `analytic` is measured again at 10 and 100 times the
// step and at a tenth and a hundredth of it; a wrong gradient stays wrong at every step.
// The first that agrees is returned, else the one at eps.
Difference settled(Objective& f, TensorMap& inputs, size_t k, const Tensor& dir, double analytic,
                   Difference at_eps, const GradcheckOptions& o) {
  if (agrees(o, analytic, at_eps)) return at_eps;
  for (double scale : {10.0, 100.0, 0.1, 0.01}) {
    std::optional<Difference> other = central(f, inputs, k, dir, scale * o.eps);
    if (other && agrees(o, analytic, *other)) return *other;
  }
  return at_eps;
}

void check_input(Objective& f, TensorMap& inputs, size_t k, const Tensor& grad,
                 const GradcheckOptions& o, InputCheck& c, const std::function<void()>& tick) {
  Checker check{o, c};
  const Tensor& x = inputs[k].second;
  c.elementwise = x.size() <= o.max_elements;
  if (c.elementwise) {
    Tensor e(x.type());
    for (int64_t i = 0; i < x.size(); ++i, tick()) {
      e.data<double>()[i] = 1;
      double analytic = grad.data<double>()[i];
      std::optional<Difference> d = smooth_difference(f, inputs, k, e, o.eps);
      d ? check.compare(analytic, settled(f, inputs, k, e, analytic, *d, o)) : void(++c.kinks);
      e.data<double>()[i] = 0;
    }
    return;
  }
  // A direction whose every step crosses a kink is replaced by another, twice at most.
  for (int d = 0; d < o.directions; ++d, tick()) {
    std::optional<Difference> diff;
    for (uint64_t redraw = 0; redraw < 3 && !diff; ++redraw) {
      Tensor v = normal(x.type(), o.seed + 1000 * (k + 1) + d + 1'000'000'007u * redraw);
      diff = smooth_difference(f, inputs, k, v, o.eps);
      double analytic = dot(grad, v);
      if (diff) check.compare(analytic, settled(f, inputs, k, v, analytic, *diff, o));
    }
    if (!diff) ++c.kinks;
  }
}

// The checks of the inputs of `p` (promoted to f64) at `values` (widened).
GradcheckResult check_tape(const Tape& p, TensorMap values, const GradcheckOptions& o) {
  bool scalar = p.outputs.size() == 1 && p.type(p.outputs[0].var).dtype == DType::f64 &&
                p.type(p.outputs[0].var).rank() == 0;
  TensorMap seeds;
  if (!scalar) {
    for (const Output& out : p.outputs) {
      if (p.type(out.var).dtype != DType::f64) continue;
      seeds.emplace_back(out.name, normal(p.type(out.var), o.seed + seeds.size() + 1));
    }
    if (seeds.empty()) user_error("tape '{}' has no float output to check", p.name);
  }
  Tape g = grad::gradient(p, {o.wrt, !scalar});

  // Seed inputs follow the tape's own inputs in the gradient tape, in output order.
  TensorMap grad_inputs = values;
  for (size_t j = 0; j < seeds.size(); ++j) {
    grad_inputs.emplace_back(g.ops[p.num_inputs() + j].name, seeds[j].second);
  }
  Executor exec(g, o.executor);
  exec.set_print([](std::string_view) {});
  std::vector<Tensor> outs = exec.run(grad_inputs);

  // The inputs to check, by position in `values`, with their gradients.
  std::vector<std::pair<size_t, const Tensor*>> todo;
  std::vector<bool> chosen = grad::chosen_inputs(p, o.wrt);
  size_t next_grad = p.outputs.size();
  int64_t total = 0;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (!chosen[i]) continue;
    const Tensor& grad = outs[next_grad++];
    const std::string& name = p.ops[i].name;
    auto it =
        std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    if (it == values.end()) user_error("no value given for input '{}'", name);
    if (it->second.dtype() != DType::f64) continue;
    todo.emplace_back(static_cast<size_t>(it - values.begin()), &grad);
    total += it->second.size() <= o.max_elements ? it->second.size() : o.directions;
  }
  Objective f(hold_stopped(p, values, o.executor), seeds, o.executor);
  GradcheckResult result;
  int64_t done = 0;
  for (auto [k, grad] : todo) {
    InputCheck c{values[k].first};
    auto tick = [&] {
      if (o.progress) o.progress(c.name, ++done, total);
    };
    check_input(f, values, k, *grad, o, c, tick);
    result.ok = result.ok && c.ok;
    result.inputs.push_back(c);
  }
  return result;
}

std::string where(const Tape& t, Loc loc) {
  if (!loc.known() || loc.file == 0 || loc.file > t.files.size()) return "";
  return fmt::format("{}:{}", t.files[loc.file - 1], loc.line);
}

// The custom_rule ops inside the regions of `op`, but for those of a rule's own regions,
// which its check covers.
size_t rules_inside(const Op& op) {
  if (op.prim == Prim::custom_rule) return 0;
  size_t n = 0;
  for (const Tape& r : op.regions) {
    for (const Op& inner : r.ops)
      n += (inner.kind == OpKind::call && inner.prim == Prim::custom_rule) + rules_inside(inner);
  }
  return n;
}

// `op`, a custom_rule of `p`, as a tape of its own: inputs x1, x2, ... (its operands),
// outputs its results.
Tape rule_alone(const Tape& p, const Op& op) {
  Builder b = Builder::like(p);
  VarList xs;
  for (size_t k = 0; k < op.args.size(); ++k)
    xs.push_back(b.input(fmt::format("x{}", k + 1), p.type(op.args[k])));
  b.set_loc(op.loc);
  VarList outs = b.record(Prim::custom_rule, xs, op.attrs, op.regions).outs;
  for (size_t j = 0; j < outs.size(); ++j) b.output(outs[j], fmt::format("y{}", j + 1));
  return b.finish();
}

// Checks each custom_rule op of `p` alone, at the operands a run of `p` on `values` gives it.
void check_rules(const Tape& p, const TensorMap& values, const GradcheckOptions& o,
                 GradcheckResult& result) {
  std::vector<const Op*> rules;
  for (const Op& op : p.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::custom_rule) rules.push_back(&op);
    result.rules_in_regions += rules_inside(op);
  }
  if (rules.empty()) return;
  Tape q = p;  // the same tape, giving the rules' operands
  q.outputs.clear();
  for (size_t r = 0; r < rules.size(); ++r) {
    for (size_t k = 0; k < rules[r]->args.size(); ++k)
      q.outputs.push_back({rules[r]->args[k], fmt::format("rule{}.x{}", r + 1, k + 1)});
  }
  Executor exec(q, o.executor);
  exec.set_print([](std::string_view) {});
  std::vector<Tensor> given = exec.run(values);
  GradcheckOptions alone = o;
  alone.wrt.clear();
  alone.progress = nullptr;
  size_t next = 0;
  for (const Op* op : rules) {
    const auto a = attrs_of<Prim::custom_rule>(op->attrs);
    TensorMap operands;
    for (size_t k = 0; k < op->args.size(); ++k)
      operands.emplace_back(fmt::format("x{}", k + 1), given[next++]);
    GradcheckResult r = check_tape(rule_alone(p, *op), operands, alone);
    result.rules.push_back({a.name, a.rule, where(p, op->loc), std::move(r.inputs), r.ok});
    result.ok = result.ok && r.ok;
  }
}

}  // namespace

GradcheckResult gradcheck(const Tape& t, const TensorMap& inputs, const GradcheckOptions& o) {
  Tape p = promote_to_f64(t);
  TensorMap values;
  for (const auto& [name, value] : inputs) values.emplace_back(name, widened(value));
  GradcheckResult result = check_tape(p, values, o);
  check_rules(p, values, o, result);
  return result;
}

namespace {

// What was checked of one input, its errors and the verdict: the columns after its name.
std::string check_columns(const InputCheck& c) {
  std::string checked = fmt::format("{} {}", c.checks, c.elementwise ? "elements" : "directions");
  std::string verdict = !c.ok ? "FAIL" : c.checks == 0 ? "unchecked" : "ok";
  if (c.kinks > 0) verdict += fmt::format(" ({} crossed a kink)", c.kinks);
  return fmt::format("{:>16}  {:>10.3g}  {:>10.3g}  {}\n", checked, c.max_abs, c.max_rel, verdict);
}

// The rules' rows: each rule's operands (x1, x2, ...: its arguments), labelled by the rule,
// where it is defined and where the tape calls it.
std::string rules_table(const GradcheckResult& r) {
  std::vector<std::string> labels;
  size_t width = 4;
  for (const RuleCheck& rule : r.rules) {
    std::string label = rule.name;
    if (!rule.rule.empty()) label += " (" + rule.rule + ")";
    if (!rule.call.empty()) label += " at " + rule.call;
    width = std::max(width, label.size());
    labels.push_back(std::move(label));
  }
  std::string out = fmt::format("\n{:<{}}  {:>8}  {:>16}  {:>10}  {:>10}  {}\n", "rule", width,
                                "argument", "checked", "max abs", "max rel", "");
  for (size_t i = 0; i < r.rules.size(); ++i) {
    for (const InputCheck& c : r.rules[i].operands)
      out += fmt::format("{:<{}}  {:>8}  ", labels[i], width, c.name.substr(1)) + check_columns(c);
  }
  for (const RuleCheck& rule : r.rules) {
    if (rule.ok) continue;
    out += fmt::format(
        "the rule for {}{} disagrees with finite differences of {}'s own code: its pullback is "
        "wrong, or meant to differ (a clipped or straight-through gradient)\n",
        rule.name, rule.rule.empty() ? "" : " (" + rule.rule + ")", rule.name);
  }
  return out;
}

}  // namespace

std::string gradcheck_table(const GradcheckResult& r) {
  size_t width = 5;
  for (const InputCheck& c : r.inputs) width = std::max(width, c.name.size());
  std::string out = fmt::format("{:<{}}  {:>16}  {:>10}  {:>10}  {}\n", "input", width, "checked",
                                "max abs", "max rel", "");
  int64_t kinks = 0, unchecked = 0;
  for (const InputCheck& c : r.inputs) {
    out += fmt::format("{:<{}}  ", c.name, width) + check_columns(c);
    kinks += c.kinks;
    unchecked += c.checks == 0 && c.kinks > 0;
  }
  if (!r.rules.empty()) out += rules_table(r);
  for (const RuleCheck& rule : r.rules) {
    for (const InputCheck& c : rule.operands) kinks += c.kinks;
  }
  if (r.rules_in_regions > 0) {
    out += fmt::format("{} rules inside loops or branches were checked only as part of the tape\n",
                       r.rules_in_regions);
  }
  if (kinks > 0) {
    out += fmt::format(
        "{} of the checks were skipped: at every step their two points lay on different sides "
        "of a kink (relu, abs, max, a comparison, pooling or a guard){}\n",
        kinks, unchecked > 0 ? fmt::format("; {} inputs were not checked at all", unchecked) : "");
  }
  return out;
}

}  // namespace ytape::check
