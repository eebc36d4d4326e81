// gradient, withgradient and value_and_gradient, Zygote's names, inside programs. The
// function is traced once, on a trace nested in the one that called it; the grad
// library's driver then copies that record onto the calling trace with its backward ops
// after it. Nothing is traced twice, and a gradient of a gradient differentiates the
// backward ops of the inner one like any others. At top level, where no trace is active,
// the same happens on a trace of its own, which then runs.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "grad/backprop.h"
#include "grad/rules.h"
#include "runtime/executor.h"
#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/builtins/traced_calls.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

namespace {

// Builds the gradients of the arguments in the shape Zygote gives them: a named tuple for
// a struct, a tuple for a tuple, the array or number for a leaf, `nothing` for what has no
// gradient. Leaves are taken in the order Leaves::lift met them (which found the
// arguments neither cyclic nor too deep).
struct Cotangents {
  const std::vector<Value>& grads;  // per leaf
  size_t next = 0;

  Value build(const Value& v) {
    if (is_float_leaf(v)) return grads[next++];
    switch (v.kind) {
      case VKind::tuple:
      case VKind::named_tuple: {
        const TupleObj& t = v.tup();
        std::vector<Value> items;
        for (const Value& item : t.items) items.push_back(build(item));
        return Value::like(t, std::move(items));
      }
      case VKind::object: {
        const StructObj& s = v.object();
        std::vector<Value> fields;
        for (const Value& f : s.fields) fields.push_back(build(f));
        return Value::named_tuple(s.type->fields, std::move(fields));
      }
      default:
        return Value();
    }
  }
};

// The number f's result is differentiated for: the result, or with `first` (withgradient)
// the first item of a tuple, as Zygote takes a loss with auxiliary outputs.
Value loss_of(const Value& result, bool first, std::string_view name) {
  const Value* loss = &result;
  if (first && (result.kind == VKind::tuple || result.kind == VKind::named_tuple) &&
      !result.tup().items.empty())
    loss = &result.tup().items.front();
  bool is_real = loss->kind == VKind::float_ || loss->kind == VKind::integer ||
                 (loss->is_tensor() && loss->tensor().type.rank() == 0 &&
                  loss->tensor().type.dtype != DType::boolean);
  if (!is_real) {
    user_error("{}: the function must return a real number to differentiate{}, got {}", name,
               first ? " (or a tuple whose first item is one)" : "", a_type_name(*loss));
  }
  return *loss;
}

// A field of a mutable argument that f wrote: its new value, of the calling trace.
struct Write {
  Value object;
  std::string field;
  Value value;
};

struct Differentiated {
  Value value;               // f's result
  std::vector<Value> grads;  // per argument
  std::vector<Write> writes;
};

// Whether `a` is `b` itself (not merely equal): the same object or the same scalar bits.
bool same(const Value& a, const Value& b) {
  return a.kind == b.kind && a.obj == b.obj && a.i == b.i && a.b == b.b &&
         std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f) && a.dtype == b.dtype;
}

// Implicit parameters (Flux.params): while f runs, each float array of `ps` holds its
// input of the nested trace, so that f's uses of the array, wherever it reaches it from,
// read the input; the arrays get their own values back when f returns or throws.
struct ImplicitParams {
  Interpreter& in;
  std::vector<std::pair<Value, TensorObj>> saved;  // array, its value before

  void lift(Leaves& leaves, const Value& ps) {
    for (size_t i = 0; i < ps.tup().items.size(); ++i) {
      const Value& p = ps.tup().items[i];
      if (!is_float_leaf(p) || p.is_number()) continue;
      saved.emplace_back(p, p.tensor());
      in.replace_array(p, leaves.lift(p, fmt::format("param{}", i + 1)));
    }
  }
  void restore() {
    // Backwards: an array listed twice gets the value it had before the first.
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      const_cast<TensorObj&>(it->first.tensor()) = it->second;
    saved.clear();
  }
  ~ImplicitParams() { restore(); }
};

// What a nested trace of f recorded, kept for the back function of an array-valued
// pullback: the tape, its leaves and the values they stand for, and the var of f's array.
struct Recorded {
  Interpreter::NestedTape record;
  std::vector<Var> inputs;
  std::vector<Value> outer;
  std::optional<Var> result;  // none: the result is no value of the nested trace
};

// The gradient of each leaf of `src` (`inputs`, standing for `outer`) after `bp`'s
// backward sweep: zeros where nothing flowed.
std::vector<Value> leaf_gradients(const grad::Backprop& bp, const Tape& src,
                                  const std::vector<Var>& inputs, const std::vector<Value>& outer) {
  std::vector<Value> grads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    grad::Cotangent c = bp.cotangent(inputs[i]);
    const Type& type = src.type(inputs[i]);
    grads.push_back(c ? Value::traced(*c, type, outer[i].is_number())
                      : to_scalar(Value::concrete(Tensor(type), outer[i].is_number())));
  }
  return grads;
}

// Traces f on the arguments (or, with `implicit`, on no arguments, for the arrays of that
// vector) nested in the current trace, then copies the record and its gradient onto the
// current trace. With `keep`, the record is kept there, and `array` names the item of f's
// result (a tuple) whose var it keeps.
Differentiated differentiate(Interpreter& in, const Value& f, const std::vector<Value>& args,
                             const Value* implicit, bool first, std::string_view name,
                             std::shared_ptr<Recorded>* keep = nullptr, size_t array = 0) {
  Leaves leaves(in);
  Value loss;
  auto [result, nested, record] = call_nested(in, [&] {
    Args lifted;
    ImplicitParams params{in, {}};
    if (implicit != nullptr) params.lift(leaves, *implicit);
    for (size_t i = 0; i < args.size(); ++i)
      lifted.pos.push_back(leaves.lift(args[i], fmt::format("arg{}", i + 1)));
    Value value = in.call(f, std::move(lifted), in.here());
    params.restore();
    loss = loss_of(value, first, name);
    return value;
  });
  const Tape& src = record.builder->tape();

  Builder& b = in.builder();
  grad::Backprop bp(b, src);
  for (size_t i = 0; i < leaves.inputs.size(); ++i)
    bp.bind_input(leaves.inputs[i], in.tape_var(leaves.outer[i]), true);
  for (auto [capture, outer] : record.captures) bp.bind_input(capture, outer, false);
  bp.forward();
  if (loss.is_tensor() && loss.tensor().traced && loss.tensor().level == nested) {
    Var l = loss.tensor().var;
    bp.seed(l, b.constant(src.type(l).dtype, 1.0));
  }
  bp.backward();

  std::vector<Value> grads = leaf_gradients(bp, src, leaves.inputs, leaves.outer);
  Differentiated out;
  auto lower = [&](const TensorObj& t) { return Value::traced(bp[t.var], t.type, t.number); };
  out.value = rebuild(result, nested, lower);
  for (const Leaves::Mutable& m : leaves.mutables) {
    const StructObj& now = m.copy.object();
    for (size_t i = 0; i < now.fields.size(); ++i) {
      if (!same(now.fields[i], m.fields[i]))
        out.writes.push_back(
            {m.original, now.type->fields[i], rebuild(now.fields[i], nested, lower)});
    }
  }
  Cotangents cot{grads};
  if (implicit != nullptr) {
    for (const Value& p : implicit->tup().items)
      out.grads.push_back(p.is_number() ? Value() : cot.build(p));
  }
  for (const Value& a : args) out.grads.push_back(cot.build(a));
  bool tuple = result.kind == VKind::tuple && result.tup().items.size() > array;
  if (keep != nullptr && tuple) {
    const Value& item = result.tup().items[array];
    std::optional<Var> var;
    if (item.is_tensor() && item.tensor().traced && item.tensor().level == nested)
      var = item.tensor().var;
    *keep =
        std::make_shared<Recorded>(Recorded{std::move(record), leaves.inputs, leaves.outer, var});
  }
  return out;
}

// differentiate() at top level: on a trace of its own, run at once. Its values are
// constants of that trace, so its tape has no inputs.
// With `keep`, also its tape and random key in `tape` and `key`.
Differentiated differentiate_now(Interpreter& in, const Value& f, const std::vector<Value>& args,
                                 const Value* implicit, bool first, std::string_view name,
                                 std::shared_ptr<Recorded>* keep = nullptr,
                                 std::shared_ptr<const Tape>* tape = nullptr,
                                 uint64_t* key = nullptr) {
  Builder b(std::string{name});
  in.begin_trace(&b, {}, true);
  Differentiated d;
  try {
    d = differentiate(in, f, args, implicit, first, name, keep, 1);
    size_t n = 0;
    auto collect = [&](const TensorObj& t) {
      b.output(t.var, fmt::format("out{}", ++n));
      return Value();
    };
    rebuild(d.value, 0, collect);
    for (const Value& g : d.grads) rebuild(g, 0, collect);
    for (const Write& w : d.writes) rebuild(w.value, 0, collect);
  } catch (...) {
    in.end_trace();
    throw;
  }
  in.end_trace();
  auto finished = std::make_shared<const Tape>(b.finish());
  Executor run(*finished);
  uint64_t random_key = in.next_seed();
  run.set_random_key(random_key);
  std::vector<Tensor> values = run.run({});
  if (tape != nullptr) *tape = finished, *key = random_key;
  size_t k = 0;
  auto concrete = [&](const TensorObj& t) {
    return to_scalar(Value::concrete(std::move(values[k++]), t.number));
  };
  d.value = rebuild(d.value, 0, concrete);
  for (Value& g : d.grads) g = rebuild(g, 0, concrete);
  for (Write& w : d.writes) w.value = rebuild(w.value, 0, concrete);
  return d;
}

// Whether `f(ps)` is Flux's implicit form: f takes no arguments and ps is a vector
// (Flux.params).
bool is_implicit(Interpreter& in, const Value& f, const std::vector<Value>& xs) {
  return f.kind == VKind::function && !f.fn().methods.empty() && xs.size() == 1 &&
         in.find_method(f.fn(), Args{}) != nullptr &&
         in.find_method(f.fn(), Args{xs, {}}) == nullptr;
}

struct Call {
  Differentiated d;
  bool implicit = false;
  Value params;  // the vector of implicit parameters

  // The gradients as the caller gets them: a tuple per argument, or Grads.
  Value grads(Interpreter& in) {
    if (!implicit) return Value::tuple(std::move(d.grads));
    return in.call(*in.global("Grads"), Args{{params, Value::vector(std::move(d.grads))}, {}},
                   in.here());
  }
};

// What the back function of an array-valued pullback needs: f's record, and at top level
// (no trace active) the tape that ran it and its random key.
struct Kept {
  std::shared_ptr<Recorded> traced;
  std::shared_ptr<const Tape> tape;
  uint64_t key = 0;
};

Call differentiate_call(Interpreter& in, Args& args, bool first, std::string_view name,
                        Kept* kept = nullptr) {
  if (args.pos.empty()) user_error("{}(f, args...) needs a function to differentiate", name);
  if (!args.kw.empty()) user_error("{} takes no keyword arguments", name);
  std::vector<Value> xs(args.pos.begin() + 1, args.pos.end());
  const Value& f = args.pos[0];
  Call c;
  const Value* implicit = nullptr;
  if (is_implicit(in, f, xs)) {
    if (xs[0].kind != VKind::tuple || !xs[0].tup().vector) {
      user_error(
          "{}(() -> ..., ps): the parameters are a vector of arrays, as Flux.params(m) "
          "gives, got {}",
          name, a_type_name(xs[0]));
    }
    c.implicit = true;
    c.params = xs[0];
    implicit = &c.params;
    xs.clear();
  }
  std::shared_ptr<Recorded>* keep = kept != nullptr ? &kept->traced : nullptr;
  c.d = in.tracing() ? differentiate(in, f, xs, implicit, first, name, keep, 1)
                     : differentiate_now(in, f, xs, implicit, first, name, keep,
                                         kept != nullptr ? &kept->tape : nullptr,
                                         kept != nullptr ? &kept->key : nullptr);
  for (Write& w : c.d.writes) in.set_field(w.object, w.field, std::move(w.value));
  return c;
}

// gradient(f, args...): a tuple with the gradient of f's result for each argument;
// gradient(() -> ..., ps): the Grads of the arrays of ps.
Value gradient(Interpreter& in, Args& args) {
  return differentiate_call(in, args, false, "gradient").grads(in);
}

// withgradient(f, args...): (val = f(args...), grad = gradient(f, args...)); a tuple result
// is differentiated for its first item, as Zygote's.
Value withgradient(Interpreter& in, Args& args) {
  Call c = differentiate_call(in, args, true, "withgradient");
  Value value = c.d.value;
  return Value::named_tuple({"val", "grad"}, {value, c.grads(in)});
}

// value_and_gradient(f, args...): (f(args...), gradient(f, args...)).
Value value_and_gradient(Interpreter& in, Args& args) {
  Call c = differentiate_call(in, args, false, "value_and_gradient");
  Value value = c.d.value;
  return Value::tuple({value, c.grads(in)});
}

// The back functions of array-valued pullbacks: what each needs to differentiate f's
// record again with the cotangent it is given. One made while tracing belongs to that
// trace (`trace`); one made at top level keeps the tape that computed f's value.
struct PendingPullback {
  int64_t id = 0;
  Kept kept;
  std::vector<Value> args;  // f, then its arguments: the shape of the gradients
  uint64_t trace = 0;       // Interpreter::trace_serial where it was made
};
// The back functions of the last kKeptPullbacks pullbacks keep what they need, so that a
// loop of pullbacks does not keep every tape it made; an older one is an error.
constexpr size_t kKeptPullbacks = 256;
std::deque<PendingPullback>& pending_pullbacks() {
  static std::deque<PendingPullback> pending;
  return pending;
}

// pullback(f, args...) and pullback(f, ps), Zygote's: (f(args...), Δ -> the gradients
// scaled by Δ), for a real-valued f. Of an array-valued f, the value as inside gradient
// (layers train; Flux's tests take it so) and a back function of Δ, an array of the
// value's shape, giving the gradients of sum(Δ .* f(args...)) (see pullback_back). f runs
// as the first argument of the prelude's pullback_call, so that what a layer called so
// writes into itself (pullback(m, x) of a BatchNorm m: its running statistics) goes back
// into it; that argument's gradient is dropped.
Value pullback(Interpreter& in, Args& args) {
  std::vector<Value> xs(args.pos.begin() + std::min<size_t>(1, args.pos.size()), args.pos.end());
  bool implicit = args.pos.empty() || is_implicit(in, args.pos[0], xs);
  if (!implicit) args.pos.insert(args.pos.begin(), *in.global("pullback_call"));
  Kept kept;
  Call c = differentiate_call(in, args, !implicit, "pullback", implicit ? nullptr : &kept);
  if (!implicit) c.d.grads.erase(c.d.grads.begin());
  Value value = c.d.value;
  auto tagged = [&](std::string_view tag) {
    return value.kind == VKind::tuple && value.tup().items.size() == 3 &&
           value.tup().items[2].kind == VKind::symbol && value.tup().items[2].text() == tag;
  };
  if (tagged("complex_pullback")) {
    return Value::tuple({value.tup().items[1], *in.global("complex_pullback_back")});
  }
  if (tagged("array_pullback")) {
    static int64_t made = 0;
    std::deque<PendingPullback>& all = pending_pullbacks();
    all.push_back(
        {++made, std::move(kept), {args.pos.begin() + 1, args.pos.end()}, in.trace_serial()});
    if (all.size() > kKeptPullbacks) all.pop_front();
    Value back = in.call(*in.global("pullback_back"), Args{{Value::integer(made)}, {}}, in.here());
    return Value::tuple({value.tup().items[1], back});
  }
  Value back = in.call(*in.global("pullback_of"), Args{{c.grads(in)}, {}}, in.here());
  return Value::tuple({value, back});
}

// The gradients of pullback `p` at cotangent `delta` on the current trace: f's record
// copied again with its backward ops seeded with delta, the gradient of f itself dropped.
// `outer_of` gives the var on this trace of a var the record captured.
Value replay_pullback(Interpreter& in, const PendingPullback& p, const Value& delta,
                      const std::function<Var(Var)>& outer_of) {
  const Recorded& t = *p.kept.traced;
  const Tape& src = t.record.builder->tape();
  Builder& b = in.builder();
  grad::Backprop bp(b, src);
  for (size_t i = 0; i < t.inputs.size(); ++i)
    bp.bind_input(t.inputs[i], in.tape_var(t.outer[i]), true);
  for (auto [capture, outer] : t.record.captures) bp.bind_input(capture, outer_of(outer), false);
  bp.forward();
  if (t.result) {
    const Type& y = src.type(*t.result);
    if (!delta.is_tensor() || delta.tensor().type.shape != y.shape ||
        !is_float(delta.tensor().type.dtype)) {
      user_error(
          "back(Δ): Δ must be a float array of the shape of the pullback's value, {}, got {}",
          shape_str(y.shape), a_type_name(delta));
    }
    Var d = in.tape_var(delta);
    if (delta.tensor().type.dtype != y.dtype)
      d = b.call1(Prim::convert, {d}, AttrsOf<Prim::convert>{.dtype = y.dtype}.to_attrs());
    bp.seed(*t.result, d);
  }
  bp.backward();
  std::vector<Value> grads = leaf_gradients(bp, src, t.inputs, t.outer);
  Cotangents cot{grads};
  std::vector<Value> out;
  for (const Value& a : p.args) out.push_back(cot.build(a));
  out.erase(out.begin());
  return Value::tuple(std::move(out));
}

// replay_pullback at top level, on a trace of its own, run with the random key of the run
// that computed f's value (its random ops draw the same numbers again). The values f
// captured are constants of the tape of that run.
Value replay_pullback_now(Interpreter& in, const PendingPullback& p, const Value& delta) {
  const Tape& first = *p.kept.tape;
  std::unordered_map<uint32_t, const Op*> constant_of;
  for (const Op& op : first.ops) {
    if (op.kind == OpKind::constant) constant_of[op.outs[0].id] = &op;
  }
  Builder b = Builder::like(p.kept.traced->record.builder->tape());  // its files, for Backprop
  return run_now(in, b, p.kept.key, [&] {
    return replay_pullback(in, p, delta, [&](Var outer) {
      auto it = constant_of.find(outer.id);
      if (it == constant_of.end()) internal_error("a pullback captured a computed value");
      return b.constant(first.type(outer), it->second->value);
    });
  });
}

// _pullback_back(id, Δ): the back function of the array-valued pullback `id` at Δ (the
// prelude's pullback_back closes over id): the gradients of sum(Δ .* f(args...)), as
// Zygote's. f's record is differentiated again, not traced again, so its random ops draw
// the numbers its value was computed with and what f wrote (a BatchNorm's statistics) is
// written once. One made while tracing belongs to that trace.
Value pullback_back(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "_pullback_back");
  const std::deque<PendingPullback>& all = pending_pullbacks();
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const PendingPullback& p) { return p.id == args.pos[0].i; });
  if (it == all.end()) {
    user_error(
        "this back function of pullback is too old: only the last {} pullbacks keep "
        "what theirs need; call it sooner",
        kKeptPullbacks);
  }
  if (it->trace != in.trace_serial()) {
    user_error(
        "the back function of a pullback must be called where the pullback was: in "
        "the same traced function, or at top level");
  }
  if (it->trace == 0) return replay_pullback_now(in, *it, args.pos[1]);
  return replay_pullback(in, *it, args.pos[1], [](Var outer) { return outer; });
}

// within_gradient() (NNlib's, with or without an argument): whether the code runs inside
// the function of a `gradient`; layers with an unset mode train there only.
Value within_gradient(Interpreter& in, Args& args) {
  need_args(args, 0, 1, "within_gradient");
  return Value::boolean(in.tracing() && in.trace_level() > 0);
}

// Zygote's dropgrad(x), which `@ignore_derivatives e` calls with e.
Value dropgrad(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "dropgrad");
  return stop_gradient(in, args.pos[0]);
}

// ChainRulesCore's ignore_derivatives(f) and Zygote's ignore(f): f's result, with the
// gradient stopped; ignore_derivatives(x) of any other value is dropgrad(x).
Value ignore_derivatives(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "ignore_derivatives");
  const Value& f = args.pos[0];
  if (f.kind != VKind::function) return stop_gradient(in, f);
  return stop_gradient(in, in.call(f, Args{}, in.here()));
}

// `@non_differentiable f(...)` (ChainRulesCore), `@nograd f` (Zygote): every later call
// of f, by any method, gives a result the gradient does not flow through.
Value non_differentiable(Interpreter&, Args& args) {
  for (const Value& f : args.pos) {
    if (f.kind != VKind::function) {
      user_error(
          "@non_differentiable takes a function, as in '@non_differentiable f(::Any)'; "
          "got {}",
          a_type_name(f));
    }
    f.fn().stops_gradient = true;
  }
  return Value();
}

}  // namespace

namespace {

// stop_gradient of `v`, inside the containers of `nesting`. A vector of values met again
// inside itself stays as it is there, as mutable instances do everywhere.
Value stop_gradient(Interpreter& in, const Value& v, Nesting& nesting) {
  if (v.is_tensor()) {
    return v.tensor().traced && is_float(v.tensor().type.dtype) ? in.prim1(Prim::stop_gradient, {v})
                                                                : v;
  }
  // A mutable instance stays itself (its identity is what its other names see).
  bool copied = v.kind == VKind::tuple || v.kind == VKind::named_tuple ||
                (v.kind == VKind::object && !v.object().type->is_mutable);
  if (!copied || nesting.levels_up(v.obj.get()) > 0) return v;
  NestingScope scope(nesting, v.obj.get(), "stop the gradient of");
  if (v.kind == VKind::object) {
    const StructObj& s = v.object();
    std::vector<Value> fields;
    for (const Value& f : s.fields) fields.push_back(stop_gradient(in, f, nesting));
    return Value::instance(s.type, std::move(fields), s.made, s.path);
  }
  const TupleObj& t = v.tup();
  std::vector<Value> items;
  for (const Value& item : t.items) items.push_back(stop_gradient(in, item, nesting));
  return Value::like(t, std::move(items));
}

}  // namespace

Value stop_gradient(Interpreter& in, const Value& v) {
  Nesting nesting;
  return stop_gradient(in, v, nesting);
}

void add_grad_builtins(BuiltinTable& t) {
  t.insert(t.end(), {{"within_gradient", within_gradient},
                     {"gradient", gradient},
                     {"withgradient", withgradient},
                     {"value_and_gradient", value_and_gradient},
                     {"pullback", pullback},
                     {"_pullback_back", pullback_back},
                     {"dropgrad", dropgrad},
                     {"ignore_derivatives", ignore_derivatives},
                     {"ignore", ignore_derivatives},
                     {"_non_differentiable", non_differentiable}});
}

}  // namespace ytape::tracer
