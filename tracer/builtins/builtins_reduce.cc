// Reductions (keeping reduced dims as size 1, like Julia) and array creation, including
// the seedable random generator.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

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

// The element type and the dims of zeros(T, dims...), rand(T, (dims)), ...
std::pair<DType, Shape> type_and_dims(const Args& args, size_t first, DType fallback) {
  DType d = fallback;
  size_t i = first;
  if (i < args.pos.size() && args.pos[i].kind == VKind::type) {
    TypeTag tag = args.pos[i].type_ref()->tag;
    if (tag == TypeTag::float32)
      d = DType::f32;
    else if (tag == TypeTag::float64)
      d = DType::f64;
    else if (tag == TypeTag::float16)
      d = DType::f16;
    else if (tag == TypeTag::int64)
      d = DType::i64;
    else if (tag == TypeTag::boolean)
      d = DType::boolean;
    else
      user_error("unsupported element type {}", args.pos[i].type_ref()->name);
    ++i;
  }
  Shape shape;
  for (; i < args.pos.size(); ++i) {
    for (int64_t n : int_list(args.pos[i], "dimensions")) {
      if (n < 0) user_error("dimensions must be ≥ 0, got {}", n);
      shape.push_back(n);
    }
  }
  return {d, shape};
}

Value filled(Interpreter& in, DType d, Shape shape, double value) {
  Value v = in.prim1<Prim::fill>({}, {.value = value, .dtype = d, .shape = std::move(shape)});
  return v;
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
Value zeros(Interpreter& in, Args& args) {
  auto [d, shape] = type_and_dims(args, 0, DType::f64);
  return filled(in, d, shape, 0);
}

Value ones(Interpreter& in, Args& args) {
  auto [d, shape] = type_and_dims(args, 0, DType::f64);
  return filled(in, d, shape, 1);
}

Value fill(Interpreter& in, Args& args) {
  need_args(args, 1, 1 << 30, "fill");
  Value v = args.pos[0];
  if (!v.is_number() || v.is_tensor()) user_error("fill takes a number first");
  DType d = v.kind == VKind::float_    ? v.dtype
            : v.kind == VKind::boolean ? DType::boolean
                                       : DType::i64;
  auto [unused, shape] = type_and_dims(args, 1, d);
  return filled(in, d, shape, as_double(v));
}

// The elements a collection holds, as a concrete array: a range, an array, or a tuple of
// integers or of floats; a null value for anything else.
Value pool_of(const Value& c) {
  if (c.kind == VKind::range) return range_array(c.rng());
  if (c.is_tensor() && !c.tensor().number) return c;
  if (c.kind != VKind::tuple || c.tup().items.empty()) return Value();
  const std::vector<Value>& items = c.tup().items;
  bool ints = std::all_of(items.begin(), items.end(),
                          [](const Value& v) { return v.kind == VKind::integer; });
  bool floats = std::all_of(items.begin(), items.end(),
                            [](const Value& v) { return v.kind == VKind::float_; });
  if (!ints && !floats) return Value();
  Tensor t(Type{ints ? DType::i64 : DType::f64, {static_cast<int64_t>(items.size())}});
  for (size_t k = 0; k < items.size(); ++k) {
    if (ints) {
      t.data<int64_t>()[k] = items[k].i;
    } else {
      t.data<double>()[k] = items[k].f;
    }
  }
  return Value::concrete(std::move(t));
}

// n uniform draws in [0, 1) from the program's generator (concrete, Float64).
Tensor uniforms(Interpreter& in, Shape shape) {
  auto seed = static_cast<int64_t>(in.next_seed() >> 1);
  return in.prim1<Prim::rand>({}, {.dtype = DType::f64, .shape = std::move(shape), .seed = seed})
      .tensor()
      .data;
}

// The permutation of 1:n that orders its positions by `less` (stable), as an Int64 vector.
template <typename Less>
Tensor ordered(int64_t n, const Less& less) {
  Tensor order(Type{DType::i64, {n}});
  int64_t* p = order.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) p[k] = k + 1;
  std::stable_sort(p, p + n, less);
  return order;
}

// rand(collection[, dims...]): elements drawn uniformly from a range, array or tuple, as
// Julia's. Top level only: no primitive draws integers or picks elements, and a draw made
// while tracing would be one sample frozen into the tape.
Value rand_from(Interpreter& in, Args& args) {
  Value pool = pool_of(args.pos[0]);
  if (pool.kind != VKind::tensor || pool.tensor().traced) {
    user_error(
        "rand draws from a range, an array or a tuple of numbers, or takes an element "
        "type and dims; got {}",
        a_type_name(args.pos[0]));
  }
  if (in.tracing()) {
    user_error(
        "rand(collection) inside a traced function would be one sample frozen into the tape; "
        "draw it at top level, or draw floats with rand(Float32, dims...), a random op of "
        "the tape");
  }
  const Tensor& from = pool.tensor().data;
  if (from.size() == 0) user_error("rand: the collection is empty");
  auto [unused, shape] = type_and_dims(args, 1, DType::f64);
  bool number = shape.empty() && args.pos.size() == 1;
  // Inside f.(x) of a user function, one draw per element (as random<P>).
  const Shape* each = number ? in.element_shape() : nullptr;
  if (each != nullptr) {
    shape = *each;
    number = false;
  }
  Tensor u = uniforms(in, shape);
  Tensor out = Tensor::uninitialized(Type{from.dtype(), shape});
  auto size = static_cast<size_t>(dtype_size(from.dtype()));
  for (int64_t k = 0; k < out.size(); ++k) {
    int64_t i = std::min(from.size() - 1, static_cast<int64_t>(u.data<double>()[k] * from.size()));
    std::memcpy(static_cast<uint8_t*>(out.raw()) + k * size,
                static_cast<const uint8_t*>(from.raw()) + i * size, size);
  }
  return number ? to_scalar(Value::concrete(std::move(out), true))
                : with_element(Value::concrete(std::move(out)), each != nullptr);
}

// randperm(n): a random permutation of 1:n from the program's generator (the order of n
// uniform draws). Top level only, as rand(collection).
Value randperm(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "randperm");
  if (args.pos[0].kind != VKind::integer || args.pos[0].i < 0)
    user_error("randperm takes a count ≥ 0, got {}", a_type_name(args.pos[0]));
  if (in.tracing())
    user_error(
        "randperm inside a traced function would be one order frozen into the tape; "
        "draw it at top level");
  int64_t n = args.pos[0].i;
  Tensor u = uniforms(in, {n});
  const double* key = u.data<double>();
  return Value::concrete(ordered(n, [&](int64_t a, int64_t b) { return key[a - 1] < key[b - 1]; }));
}

// sortperm(x; rev=false) and sort(x; rev=false) of a concrete vector: the stable order
// of its elements, as Julia's (NaN last). No primitive sorts, so not of traced values.
Tensor sorted_order(const Args& args, std::string_view name) {
  need_args(args, 1, 1, name);
  const Value& x = args.pos[0];
  if (!x.is_tensor() || x.tensor().number || x.tensor().type.rank() != 1)
    user_error("{} takes a vector, got {}", name, a_type_name(x));
  if (x.tensor().traced)
    user_error("{} of a traced vector is not supported: no primitive sorts", name);
  const Value* rev = keyword(args, "rev");
  bool descending = rev != nullptr && rev->kind == VKind::boolean && rev->b;
  const Tensor& t = x.tensor().data;
  return ordered(t.size(), [&](int64_t a, int64_t b) {
    double u = element_value(t, a - 1), v = element_value(t, b - 1);
    if (std::isnan(u) || std::isnan(v)) return !std::isnan(u) && std::isnan(v);
    return descending ? u > v : u < v;
  });
}

Value sortperm(Interpreter&, Args& args) {
  return Value::concrete(sorted_order(args, "sortperm"));
}

Value sort(Interpreter& in, Args& args) {
  Tensor order = sorted_order(args, "sort");
  return index_tensor(in, args.pos[0], {Value::concrete(std::move(order))});
}

template <Prim P>
Value random(Interpreter& in, Args& args) {
  if (P == Prim::rand && !args.pos.empty() && args.pos[0].kind != VKind::type &&
      args.pos[0].kind != VKind::integer)
    return rand_from(in, args);
  auto [d, shape] = type_and_dims(args, 0, DType::f64);
  bool coin = P == Prim::rand && d == DType::boolean;  // rand(Bool, dims...): fair coins
  if (coin) d = DType::f32;
  if (!is_float(d))
    user_error("{} draws floats{}: give Float16, Float32 or Float64", prim_name(P),
               P == Prim::rand ? " or Bools" : "");
  bool number = shape.empty() && args.pos.size() <= 1;
  // Inside f.(x) of a user function a number drawn is one draw per element, as Julia
  // calls f once per element: an array of the broadcast's shape standing for elements.
  const Shape* each = number ? in.element_shape() : nullptr;
  if (each != nullptr) {
    shape = *each;
    number = false;
  }
  if (coin) {
    Args floats;
    floats.pos.push_back(Value::type(dtype_type(DType::f32)));
    floats.pos.insert(floats.pos.end(), args.pos.begin() + 1, args.pos.end());
    return elementwise_binary(in, Prim::lt, random<P>(in, floats),
                              Value::floating(0.5, DType::f32));
  }
  auto seed = static_cast<int64_t>(in.next_seed() >> 1);
  Attrs attrs = AttrsOf<P>{.dtype = d, .shape = shape, .seed = seed}.to_attrs();
  if (in.tracing()) {
    // Inside a trace a draw is an op of the tape, never a frozen sample: each run draws
    // from its own random key.
    Var v = in.record(P, {}, attrs).outs.front();
    return with_element(Value::traced(v, Type{d, shape}, number), each != nullptr);
  }
  Value v = in.prim1(P, {}, attrs);
  return number ? to_scalar(Value::concrete(v.tensor().data, true))
                : with_element(std::move(v), each != nullptr);
}

Value rand(Interpreter& in, Args& args) {
  return random<Prim::rand>(in, args);
}
Value randn(Interpreter& in, Args& args) {
  return random<Prim::randn>(in, args);
}

Value seed(Interpreter& in, Args& args) {
  need_args(args, 1, 1, "seed!");
  if (args.pos[0].kind != VKind::integer) user_error("seed! takes an integer");
  in.seed(static_cast<uint64_t>(args.pos[0].i));
  return Value();
}

// _random_stream(seed, draws): makes (seed, draws) the state of the generator of rand and
// randn and returns the state it had, a tuple alike; for the prelude's RNG objects.
Value random_stream(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "_random_stream");
  for (const Value& v : args.pos) {
    if (v.kind != VKind::integer) user_error("_random_stream takes two integers");
  }
  auto [seed, draws] = in.stream();
  in.set_stream({static_cast<uint64_t>(args.pos[0].i), static_cast<uint64_t>(args.pos[1].i)});
  return Value::tuple(
      {Value::integer(static_cast<int64_t>(seed)), Value::integer(static_cast<int64_t>(draws))});
}

}  // namespace

void add_reduce_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"sum", sum},
                        {"maximum", maximum},
                        {"minimum", minimum},
                        {"mean", mean},
                        {"zeros", zeros},
                        {"ones", ones},
                        {"fill", fill},
                        {"rand", rand},
                        {"randn", randn},
                        {"randperm", randperm},
                        {"sort", sort},
                        {"sortperm", sortperm},
                        {"seed!", seed},
                        {"_random_stream", random_stream},
                        {"prod", prod},
                    });
}

}  // namespace ytape::tracer
