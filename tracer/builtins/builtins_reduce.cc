// Reductions: sum, maximum, minimum, mean and prod, over whole arrays or along dims
// (kept as size 1, as Julia keeps them), and over tuples, ranges and numbers.
#include <algorithm>
#include <utility>
#include <vector>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// Calls `f` with `args` as a broadcast would: elementwise on whole arrays.
Value call_elementwise(Interpreter& in, const Value& f, std::vector<Value> args) {
  Args a;
  a.pos = std::move(args);
  return in.broadcast(f, std::move(a), in.here());
}

Value fold_values(Interpreter& in, const char* op, const std::vector<Value>& items) {
  if (items.empty()) user_error("reducing an empty collection needs an init value");
  Value acc = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    Args args;
    args.pos = {acc, items[i]};
    acc = in.call(*in.global(op), std::move(args), in.here());
  }
  return acc;
}

// sum/maximum/minimum of an array over `dims` (all when absent): the primitive drops the
// reduced dims; Julia keeps them as size 1, so reshape back unless all were reduced.
Value reduce_array(Interpreter& in, Prim p, const Value& x, const Value* dims_value) {
  const Shape& shape = x.tensor().type.shape;
  std::vector<int64_t> dims;
  if (dims_value == nullptr || (dims_value->kind == VKind::symbol && dims_value->text() == ":")) {
    for (int d = 1; d <= static_cast<int>(shape.size()); ++d) dims.push_back(d);
  } else {
    dims = int_list(*dims_value, "dims");
  }
  Value v = x;
  if (p == Prim::sum && v.tensor().type.dtype == DType::boolean) v = in.as_tensor(v, DType::i64);
  std::vector<int64_t> inside;
  for (int64_t d : dims) {
    if (d < 1) user_error("dims must be ≥ 1, got {}", d);
    if (d <= static_cast<int64_t>(shape.size())) inside.push_back(d);
  }
  std::sort(inside.begin(), inside.end());
  inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
  Value r = in.prim1(p, {v}, reduce_attrs(p, inside));
  if (dims_value == nullptr) {
    return as_number(r);
  }
  Shape kept = shape;
  for (int64_t d : inside) kept[d - 1] = 1;
  return reshape_to(in, r, kept);
}

Value reduction(Interpreter& in, Args& args, Prim p, const char* op) {
  need_args(args, 1, 2, prim_name(p));
  Value x = args.pos.back();
  // A number, or one element of a broadcast function's argument, is its own sum.
  bool one = x.is_number() || is_element(x);
  if (args.pos.size() == 2) {
    // sum(f, x): f applied elementwise first.
    if (x.kind == VKind::tuple || x.kind == VKind::range) {
      std::vector<Value> mapped;
      const Value& f = args.pos[0];
      for (const Value& item : x.kind == VKind::tuple ? x.tup().items : std::vector<Value>{}) {
        Args a;
        a.pos = {item};
        mapped.push_back(in.call(f, std::move(a), in.here()));
      }
      return fold_values(in, op, mapped);
    }
    x = call_elementwise(in, args.pos[0], {x});
  }
  if (x.kind == VKind::tuple) return fold_values(in, op, x.tup().items);
  if (x.kind == VKind::range) return fold_values(in, op, in.range_items(x.rng(), in.here()));
  if (one) return x;
  if (!x.is_tensor()) not_defined_for(prim_name(p), x);
  return reduce_array(in, p, x, keyword(args, "dims"));
}

Value sum(Interpreter& in, Args& args) {
  return reduction(in, args, Prim::sum, "+");
}
Value maximum(Interpreter& in, Args& args) {
  return reduction(in, args, Prim::maximum, "max");
}
Value minimum(Interpreter& in, Args& args) {
  return reduction(in, args, Prim::minimum, "min");
}

Value mean(Interpreter& in, Args& args) {
  Value total = sum(in, args);
  const Value& x = args.pos.back();
  int64_t count = 1;
  if (x.kind == VKind::tuple) count = static_cast<int64_t>(x.tup().items.size());
  if (x.is_tensor() && !is_element(x)) {
    const Shape& shape = x.tensor().type.shape;
    const Value* dims = keyword(args, "dims");
    if (dims == nullptr) {
      count = x.tensor().type.size();
    } else {
      for (int64_t d : int_list(*dims, "dims")) {
        if (d >= 1 && d <= static_cast<int64_t>(shape.size())) count *= shape[d - 1];
      }
    }
  }
  Args div;
  div.pos = {total, Value::floating(static_cast<double>(count), DType::f64, true)};
  return in.broadcast(*in.global("/"), std::move(div), in.here());
}

Value slice_dim(Interpreter& in, const Value& x, int64_t d, int64_t lo, int64_t hi) {
  const Shape& s = x.tensor().type.shape;
  std::vector<int64_t> start(s.size(), 1), stop(s.begin(), s.end()), step(s.size(), 1);
  start[d - 1] = lo;
  stop[d - 1] = hi;
  return in.prim1<Prim::slice>({x}, {.start = start, .stop = stop, .step = step});
}

// The product along dim `d`, kept as size 1. There is no product primitive: the dim is
// halved repeatedly, multiplying the halves, so the tape holds ~log2(n) `mul`s (which the
// grad stage differentiates like any product) rather than n.
Value prod_along(Interpreter& in, Value x, int64_t d) {
  Shape s = x.tensor().type.shape;
  int64_t n = s[d - 1];
  if (n == 0) {
    s[d - 1] = 1;
    return filled(in, x.tensor().type.dtype, s, 1);
  }
  while (n > 1) {
    int64_t half = n / 2;
    Value p = in.prim1(Prim::mul,
                       {slice_dim(in, x, d, 1, half), slice_dim(in, x, d, half + 1, 2 * half)});
    if (n % 2 == 1) p = in.prim1<Prim::concat>({p, slice_dim(in, x, d, n, n)}, {.dim = d});
    x = p;
    n = half + n % 2;
  }
  return x;
}

// prod of an array, all of it or over `dims` (kept as size 1, as Julia does). Bools
// multiply as integers and come back as Bools.
Value prod_array(Interpreter& in, const Value& x, const Value* dims_value) {
  DType dtype = x.tensor().type.dtype;
  Value v = dtype == DType::boolean ? in.as_tensor(x, DType::i64) : x;
  if (dims_value == nullptr || (dims_value->kind == VKind::symbol && dims_value->text() == ":")) {
    v = prod_along(in, reshape_to(in, v, {v.tensor().type.size()}), 1);
    v = reshape_to(in, in.as_tensor(v, dtype), {});
    return as_number(v);
  }
  std::vector<int64_t> dims = int_list(*dims_value, "dims");
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  for (int64_t d : dims) {
    if (d < 1) user_error("dims must be ≥ 1, got {}", d);
    if (d <= v.tensor().type.rank()) v = prod_along(in, v, d);
  }
  return in.as_tensor(v, dtype);
}

// prod(x), prod(f, x), prod(x; dims): products of arrays, tuples, ranges and numbers.
Value prod(Interpreter& in, Args& args) {
  need_args(args, 1, 2, "prod");
  Value x = args.pos.back();
  bool element = is_element(x);
  if (args.pos.size() == 2 && x.is_tensor()) x = call_elementwise(in, args.pos[0], {x});
  if (element) return x;
  if (x.is_tensor() && !x.tensor().number) return prod_array(in, x, keyword(args, "dims"));
  if (x.is_number()) return args.pos.size() == 2 ? call_elementwise(in, args.pos[0], {x}) : x;
  std::vector<Value> items;
  if (x.kind == VKind::tuple) items = x.tup().items;
  if (x.kind == VKind::range) items = in.range_items(x.rng(), in.here());
  if (x.kind != VKind::tuple && x.kind != VKind::range) {
    user_error("prod of {} is not defined", a_type_name(x));
  }
  Value acc = Value::integer(1);
  for (const Value& item : items) {
    Args a;
    a.pos = {item};
    Value factor = args.pos.size() == 2 ? in.call(args.pos[0], std::move(a), in.here()) : item;
    Args m;
    m.pos = {acc, factor};
    acc = in.call(*in.global("*"), std::move(m), in.here());
  }
  return acc;
}

}  // namespace

void add_reduce_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"sum", sum},
                        {"maximum", maximum},
                        {"minimum", minimum},
                        {"mean", mean},
                        {"prod", prod},
                    });
}

}  // namespace ytape::tracer
