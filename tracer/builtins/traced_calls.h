// What the built-ins that transform a function (builtins_grad.cc, builtins_jvp.cc,
// builtins_vmap.cc) share: the arguments lifted into inputs of a nested trace, the call on
// it, values copied out of it, and running a trace at top level.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "tape/builder.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

inline bool is_float_leaf(const Value& v) {
  return v.kind == VKind::float_ || (v.is_tensor() && is_float(v.tensor().type.dtype));
}

// The arguments as the nested trace sees them: each float number and float array becomes
// an input of it (a *leaf*), in the order of a walk of the arguments.
struct Leaves {
  explicit Leaves(Interpreter& interpreter) : in(interpreter) {}
  Interpreter& in;
  std::vector<Var> inputs;   // on the nested tape
  std::vector<Value> outer;  // the values they stand for
  // Instances of mutable structs among the arguments, their copies for the nested trace,
  // and the fields of the copies as they were made: what f writes into a copy goes back
  // into the instance (a BatchNorm's running statistics, as Flux's).
  struct Mutable {
    Value original, copy;
    std::vector<Value> fields;
  };
  std::vector<Mutable> mutables;
  PathWalk walk{"argument", "pass the parts the function needs"};

  Value lift(const Value& v, const std::string& path) {
    if (is_float_leaf(v)) {
      Value x = in.nested_input(path, v);
      inputs.push_back(x.tensor().var);
      outer.push_back(v);
      return x;
    }
    switch (v.kind) {
      case VKind::tuple:
      case VKind::named_tuple: {
        const TupleObj& t = v.tup();
        walk.enter(v, path);
        std::vector<Value> items;
        for (size_t i = 0; i < t.items.size(); ++i)
          items.push_back(lift(t.items[i], fmt::format("{}.{}", path, i + 1)));
        walk.leave();
        return Value::like(t, std::move(items));
      }
      case VKind::object: {
        const StructObj& s = v.object();
        walk.enter(v, path);
        std::vector<Value> fields;
        for (size_t i = 0; i < s.fields.size(); ++i)
          fields.push_back(lift(s.fields[i], path + "." + s.type->fields[i]));
        walk.leave();
        Value copy = Value::instance(s.type, fields, s.made, s.path);
        if (s.type->is_mutable) mutables.push_back({v, copy, std::move(fields)});
        return copy;
      }
      default:
        return v;  // static: integers, functions, ...; integer arrays are captured if used
    }
  }
};

// `call` run on a trace nested in the current one, which ends whatever happens: its value,
// the nested trace's level and what it recorded.
struct NestedCall {
  Value result;
  uint32_t level;
  Interpreter::NestedTape record;
};
template <typename Call>
NestedCall call_nested(Interpreter& in, const Call& call) {
  in.begin_nested_trace();
  Value result;
  try {
    result = call();
  } catch (...) {
    in.end_nested_trace();
    throw;
  }
  uint32_t level = in.trace_level();
  return {std::move(result), level, in.end_nested_trace()};
}

// `v`, a value of the nested trace, with every tensor of that trace replaced by `map` of
// it (structure kept; values of other traces and concrete ones as they are).
template <typename Map>
Value rebuild(const Value& v, uint32_t level, const Map& map, Nesting& nesting) {
  if (v.kind == VKind::tensor) {
    const TensorObj& t = v.tensor();
    return t.traced && t.level == level ? map(t) : v;
  }
  if (!is_container(v)) return v;
  if (nesting.levels_up(v.obj.get()) > 0) {
    user_error(
        "the differentiated function's result holds a vector or struct that contains "
        "itself, which cannot be copied out of its trace; return the parts that are needed");
  }
  NestingScope scope(nesting, v.obj.get(), "differentiate");
  if (v.kind == VKind::object) {
    const StructObj& s = v.object();
    std::vector<Value> fields;
    for (const Value& f : s.fields) fields.push_back(rebuild(f, level, map, nesting));
    return Value::instance(s.type, std::move(fields), s.made, s.path);
  }
  const TupleObj& t = v.tup();
  std::vector<Value> items;
  for (const Value& item : t.items) items.push_back(rebuild(item, level, map, nesting));
  return Value::like(t, std::move(items));
}

template <typename Map>
Value rebuild(const Value& v, uint32_t level, const Map& map) {
  Nesting nesting;
  return rebuild(v, level, map, nesting);
}

// At top level: `make` traced on `b` (a trace of its own), the arrays of the value it
// returns made the tape's outputs; the tape is run with random key `key` and the value
// returned with the arrays it computed.
template <typename Make>
Value run_now(Interpreter& in, Builder& b, uint64_t key, const Make& make) {
  in.begin_trace(&b, {}, true);
  Value out;
  try {
    out = make();
    size_t n = 0;
    rebuild(out, 0, [&](const TensorObj& t) {
      b.output(t.var, fmt::format("out{}", ++n));
      return Value();
    });
  } catch (...) {
    in.end_trace();
    throw;
  }
  in.end_trace();
  Tape tape = b.finish();
  Executor run(tape);
  run.set_random_key(key);
  std::vector<Tensor> values = run.run({});
  size_t k = 0;
  return rebuild(out, 0, [&](const TensorObj& t) {
    return to_scalar(Value::concrete(std::move(values[k++]), t.number));
  });
}

}  // namespace ytape::tracer
