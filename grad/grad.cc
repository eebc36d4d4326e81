#include "grad/grad.h"

#include <fmt/format.h>

#include <unordered_set>

#include "grad/backprop.h"
#include "grad/rules.h"
#include "grad/segments.h"
#include "tape/error.h"
#include "tape/validate.h"

namespace ytape::grad {

namespace {

bool selects(std::string_view pattern, std::string_view name) {
  return name == pattern ||
         (name.size() > pattern.size() && name.starts_with(pattern) && name[pattern.size()] == '.');
}

}  // namespace

std::vector<bool> chosen_inputs(const Tape& t, const std::vector<std::string>& wrt,
                                std::string_view option) {
  size_t n = t.num_inputs();
  std::vector<bool> chosen(n, false);
  for (size_t i = 0; i < n; ++i) {
    chosen[i] = wrt.empty() && is_float(t.type(t.ops[i].outs[0]).dtype);
  }
  for (const std::string& pattern : wrt) {
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (selects(pattern, t.ops[i].name)) chosen[i] = any = true;
    }
    if (!any) {
      std::vector<std::string> names;
      for (size_t i = 0; i < n && i < 5; ++i) names.push_back(t.ops[i].name);
      user_error("{} '{}' matches no input of tape '{}' (its inputs: {}{})", option, pattern,
                 t.name, fmt::join(names, ", "), n > 5 ? ", ..." : "");
    }
  }
  return chosen;
}

namespace {

void check_outputs(const Tape& t, bool vjp) {
  if (t.outputs.empty()) user_error("tape '{}' has no output to differentiate", t.name);
  if (vjp) return;
  if (t.outputs.size() > 1) {
    user_error(
        "tape '{}' has {} outputs; the gradient needs one scalar output (use --vjp "
        "to differentiate several)",
        t.name, t.outputs.size());
  }
  const Output& o = t.outputs[0];
  const Type& type = t.type(o.var);
  if (!is_float(type.dtype) || type.rank() != 0) {
    user_error(
        "output '{}' has type {}; the gradient needs a float scalar (use --vjp for "
        "a vector-Jacobian product)",
        o.name, type_str(type));
  }
}

}  // namespace

std::string fresh_name(std::string prefix, const std::string& name,
                       std::unordered_set<std::string>& taken) {
  std::string candidate = prefix + name;
  while (taken.count(candidate)) candidate = prefix + candidate;
  taken.insert(candidate);
  return candidate;
}

Tape gradient(const Tape& given, const GradOptions& options, GradStats* stats) {
  // Under remat, long scans are cut into segments, of which the backward stores the ends.
  Tape segmented;
  const Tape& t = options.remat ? (segmented = segment_scans(given)) : given;
  check_outputs(t, options.vjp);
  std::vector<bool> chosen = chosen_inputs(t, options.wrt);
  size_t n = t.num_inputs();

  Builder b = Builder::like(t);
  b.reserve(3 * t.ops.size() + 8, 3 * t.types.size() + 8);
  Backprop bp(b, t);
  bp.set_remat(options.remat);
  std::unordered_set<std::string> input_names;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = t.ops[i];
    b.set_loc(op.loc);
    bp.bind_input(op.outs[0], b.input(op.name, t.type(op.outs[0])), chosen[i]);
    input_names.insert(op.name);
  }
  b.set_loc({});
  std::vector<Var> seeds;
  for (const Output& o : t.outputs) {
    bool differentiated = options.vjp && is_float(t.type(o.var).dtype);
    seeds.push_back(
        differentiated ? b.input(fresh_name("seed.", o.name, input_names), t.type(o.var)) : Var{});
  }

  bp.forward();
  std::unordered_set<std::string> output_names;
  for (const Output& o : t.outputs) {
    b.output(bp[o.var], o.name);
    output_names.insert(o.name);
  }
  b.set_loc({});
  for (size_t k = 0; k < t.outputs.size(); ++k) {
    Var v = t.outputs[k].var;
    if (!bp.active(v)) continue;
    bp.seed(v, options.vjp ? seeds[k] : b.constant(t.type(v).dtype, 1.0));
  }
  bp.backward();

  b.set_loc({});
  for (size_t i = 0; i < n; ++i) {
    if (!chosen[i]) continue;
    const Op& op = t.ops[i];
    Cotangent c = bp.cotangent(op.outs[0]);
    b.output(c ? *c : zeros(b, t.type(op.outs[0])), fresh_name("grad.", op.name, output_names));
  }
  Tape result = b.finish();
  check_made(result, "grad");
  if (stats) *stats = {t.num_ops(), bp.rules_applied(), result.num_ops()};
  return result;
}

}  // namespace ytape::grad
