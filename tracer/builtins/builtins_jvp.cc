// Forward mode in programs: jvp(f, (x...,), (v...,)), JAX's. f is traced once on a trace
// nested in the one that called it, then copied onto that trace with each op's tangent
// beside it (grad::Tangents, the sweep of `ytape jvp`); at top level the same happens on a
// trace of its own, which then runs. pushforward and hvp are the prelude's, over it.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "grad/jvp.h"
#include "tape/error.h"
#include "tracer/builtins/traced_calls.h"

namespace ytape::tracer {

namespace {

// The tangent given for each leaf of `primal`, in the order Leaves::lift walks it, from
// `tangent` of the same structure (a named tuple or an instance for a struct); a leaf
// without one (`nothing`, a zero tangent) gets none.
void tangent_leaves(const Value& primal, const Value& tangent, std::vector<Value>& out,
                    size_t depth = 0) {
  if (is_float_leaf(primal)) {
    out.push_back(tangent);
    return;
  }
  if (depth > kMaxValueNesting) nesting_error("take the tangents of");
  std::vector<Value> none;
  const std::vector<Value>* parts = nullptr;
  if (tangent.kind == VKind::tuple || tangent.kind == VKind::named_tuple)
    parts = &tangent.tup().items;
  if (tangent.kind == VKind::object) parts = &tangent.object().fields;
  const std::vector<Value>* items = nullptr;
  if (primal.kind == VKind::tuple || primal.kind == VKind::named_tuple) items = &primal.tup().items;
  if (primal.kind == VKind::object) items = &primal.object().fields;
  if (items == nullptr) return;
  for (size_t i = 0; i < items->size(); ++i) {
    bool given = parts != nullptr && parts->size() == items->size();
    tangent_leaves((*items)[i], given ? (*parts)[i] : Value(), out, depth + 1);
  }
}

// The tangent of `result` (f's value, with arrays of the nested trace at `level`): `d` of
// each of those, zeros for arrays and numbers that do not depend on the arguments.
template <typename D>
Value tangent_of(const Value& result, uint32_t level, const D& d, size_t depth = 0) {
  if (result.is_tensor()) {
    const TensorObj& t = result.tensor();
    if (t.traced && t.level == level) return d(t);
    return to_scalar(Value::concrete(Tensor(t.type), t.number));
  }
  if (result.kind == VKind::float_) return Value::floating(0.0, result.dtype);
  if (result.kind != VKind::tuple && result.kind != VKind::named_tuple) return Value();
  if (depth > kMaxValueNesting) nesting_error("take the tangents of");
  std::vector<Value> items;
  for (const Value& item : result.tup().items)
    items.push_back(tangent_of(item, level, d, depth + 1));
  return Value::like(result.tup(), std::move(items));
}

// jvp on the current trace: f traced once on a nested trace, then copied onto this one
// with each op's tangent beside it (grad::Tangents). Returns (f's value, its tangent).
Value jvp_traced(Interpreter& in, const Value& f, const std::vector<Value>& primals,
                 const std::vector<Value>& tangents) {
  Leaves leaves(in);
  auto [result, nested, record] = call_nested(in, [&] {
    Args lifted;
    for (size_t i = 0; i < primals.size(); ++i)
      lifted.pos.push_back(leaves.lift(primals[i], fmt::format("arg{}", i + 1)));
    return in.call(f, std::move(lifted), in.here());
  });
  const Tape& src = record.builder->tape();
  std::vector<Value> given;
  for (size_t i = 0; i < primals.size(); ++i) tangent_leaves(primals[i], tangents[i], given);
  grad::Tangents tg(in.builder(), src);
  for (size_t i = 0; i < leaves.inputs.size(); ++i) {
    const Type& type = src.type(leaves.inputs[i]);
    std::optional<Var> t;
    if (given[i].is_tensor() || given[i].is_number()) {
      Value v = in.as_tensor(given[i], type.dtype);
      if (v.tensor().type.shape != type.shape) {
        auto op = std::find_if(src.ops.begin(), src.ops.end(),
                               [&](const Op& o) { return o.outs[0] == leaves.inputs[i]; });
        user_error(
            "jvp: the tangent of {} is {}, but the argument is {}: each tangent has its "
            "argument's shape",
            op->name, type_str(v.tensor().type), type_str(type));
      }
      t = in.tape_var(v);
    }
    tg.bind_input(leaves.inputs[i], in.tape_var(leaves.outer[i]), t);
  }
  for (auto [capture, outer] : record.captures) tg.bind_input(capture, outer, std::nullopt);
  tg.forward();
  auto value = [&](const TensorObj& t) { return Value::traced(tg[t.var], t.type, t.number); };
  auto tangent = [&](const TensorObj& t) {
    std::optional<Var> d = tg.tangent(t.var);
    return d ? Value::traced(*d, t.type, t.number)
             : to_scalar(Value::concrete(Tensor(t.type), t.number));
  };
  return Value::tuple({rebuild(result, nested, value), tangent_of(result, nested, tangent)});
}

// jvp(f, (x...,), (v...,)): (f(x...), the derivative of f at x along v), JAX's order; at
// top level on a trace of its own, run at once.
Value jvp(Interpreter& in, Args& args) {
  need_args(args, 3, 3, "jvp");
  auto items = [](const Value& v) {
    if (v.kind != VKind::tuple) {
      user_error(
          "jvp takes f, a tuple of its arguments and a tuple of their tangents, as "
          "jvp(f, (x,), (v,)); got {}",
          a_type_name(v));
    }
    return v.tup().items;
  };
  std::vector<Value> primals = items(args.pos[1]), tangents = items(args.pos[2]);
  if (primals.size() != tangents.size()) {
    user_error("jvp: {} arguments but {} tangents; give one tangent per argument", primals.size(),
               tangents.size());
  }
  if (in.tracing()) return jvp_traced(in, args.pos[0], primals, tangents);
  Builder b("jvp");
  return run_now(in, b, in.next_seed(),
                 [&] { return jvp_traced(in, args.pos[0], primals, tangents); });
}

}  // namespace

void add_jvp_builtins(BuiltinTable& t) {
  t.insert(t.end(), {{"jvp", jvp}});
}

}  // namespace ytape::tracer
