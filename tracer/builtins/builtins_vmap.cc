// Batching in programs: vmap(f, xs...), JAX's vmap with the batch as the last dim (ytape's
// column-major order, Julia's too: x[:, :, b] is example b). f is traced once on one
// example of each array argument, on a trace nested in the one that called it, then copied
// onto that trace with each op batched (grad::BatchedCopy, the sweep of `ytape vmap`); at
// top level the same happens on a trace of its own, which then runs.
#include <fmt/format.h>

#include "grad/vmap.h"
#include "tape/error.h"
#include "tracer/builtins/traced_calls.h"

namespace ytape::tracer {

namespace {

// The arguments as f sees them: each array (of rank 1 or more, any dtype) becomes an input
// of the nested trace holding one example, its last dim dropped; numbers, functions and
// the rest stay as they are (the same for every example), as do values f captures.
struct Examples {
  explicit Examples(Interpreter& interpreter) : in(interpreter) {}
  Interpreter& in;
  std::vector<Var> inputs;   // on the nested tape
  std::vector<Value> outer;  // the arrays they are examples of
  int64_t size = -1;         // the batch: every array's last dim
  PathWalk walk{"argument", "pass the parts the function needs"};

  Value lift(const Value& v, const std::string& path) {
    if (v.is_tensor() && !v.is_number() && v.tensor().type.rank() >= 1) {
      int64_t n = v.tensor().type.shape.back();
      if (size >= 0 && n != size) {
        user_error(
            "vmap: {} has {} examples (its last dim) where the arguments before it have "
            "{}; every array's last dim is the batch",
            path, n, size);
      }
      size = n;
      Value x = in.nested_example(path, v);
      inputs.push_back(x.tensor().var);
      outer.push_back(v);
      return x;
    }
    if (v.kind != VKind::tuple && v.kind != VKind::named_tuple && v.kind != VKind::object) return v;
    walk.enter(v, path);
    std::vector<Value> parts;
    if (v.kind == VKind::object) {
      const StructObj& s = v.object();
      for (size_t i = 0; i < s.fields.size(); ++i)
        parts.push_back(lift(s.fields[i], path + "." + s.type->fields[i]));
      walk.leave();
      return Value::instance(s.type, std::move(parts), s.made, s.path);
    }
    const TupleObj& t = v.tup();
    for (size_t i = 0; i < t.items.size(); ++i)
      parts.push_back(lift(t.items[i], fmt::format("{}.{}", path, i + 1)));
    walk.leave();
    return Value::like(t, std::move(parts));
  }
};

Value vmap_traced(Interpreter& in, const Value& f, const std::vector<Value>& xs) {
  Examples examples(in);
  auto [result, nested, record] = call_nested(in, [&] {
    Args lifted;
    for (size_t i = 0; i < xs.size(); ++i)
      lifted.pos.push_back(examples.lift(xs[i], fmt::format("arg{}", i + 1)));
    if (examples.size < 0) {
      user_error(
          "vmap: no argument is an array to map over; give arrays whose last dim is the "
          "batch");
    }
    return in.call(f, std::move(lifted), in.here());
  });
  grad::BatchedCopy copy(in.builder(), record.builder->tape(), examples.size);
  for (size_t i = 0; i < examples.inputs.size(); ++i)
    copy.bind_input(examples.inputs[i], in.tape_var(examples.outer[i]), true);
  for (auto [capture, outer] : record.captures) copy.bind_input(capture, outer, false);
  copy.forward();
  return rebuild(result, nested, [&](const TensorObj& t) {
    Var v = copy[t.var];
    return Value::traced(v, in.builder().type(v), t.number && !copy.batched(t.var));
  });
}

// vmap(f, xs...): f on each example of the arrays among xs (their last dim), the results'
// arrays stacked on a new last dim; what does not depend on the examples as f returns it.
Value vmap(Interpreter& in, Args& args) {
  need_args(args, 2, SIZE_MAX, "vmap");
  std::vector<Value> xs(args.pos.begin() + 1, args.pos.end());
  if (in.tracing()) return vmap_traced(in, args.pos[0], xs);
  Builder b("vmap");
  return run_now(in, b, in.next_seed(), [&] { return vmap_traced(in, args.pos[0], xs); });
}

}  // namespace

void add_vmap_builtins(BuiltinTable& t) {
  t.insert(t.end(), {{"vmap", vmap}});
}

}  // namespace ytape::tracer
