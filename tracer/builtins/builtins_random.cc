// The program's seedable random generator: rand and randn (of an element type and dims,
// or drawn from a collection), randperm, seed!, and the streams of the prelude's RNG
// objects. Inside a trace a draw of floats is a random op of the tape, never a frozen
// sample.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "runtime/parallel.h"
#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

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
  return Value::concrete(
      stable_order(n, [&](int64_t a, int64_t b) { return key[a - 1] < key[b - 1]; }));
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

// x = (x - shift) * scale in x's own buffer, in x's element type, as the elementwise
// kernels compute it.
template <typename T>
void shift_and_scale(Tensor& x, T shift, T scale) {
  T* p = x.data<T>();
  parallel_for(x.size(), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] = (p[i] - shift) * scale;
  });
}

// Whether `v` is a float number that takes dtype `d` in arithmetic with a `d` array: of
// that type, or an untyped literal.
bool adopts(const Value& v, DType d) {
  return v.kind == VKind::float_ && (v.dtype == d || v.weak);
}

// _scaled_rand(T, shift, scale, dims...): (rand(T, dims...) .- shift) .* scale, the
// prelude's uniform initializers. A draw at top level is shifted and scaled in its own
// buffer: ResNet-18's 11.7 M example weights in one buffer instead of three (the pages of
// the two others faulted in, a fifth of the trace's time). Elsewhere (in a trace, inside
// f.(x), other types), the two broadcasts as written.
Value scaled_rand(Interpreter& in, Args& args) {
  need_args(args, 3, 1000, "_scaled_rand");
  Value shift = args.pos[1], scale = args.pos[2];
  args.pos.erase(args.pos.begin() + 1, args.pos.begin() + 3);
  Value x = random<Prim::rand>(in, args);
  if (x.is_tensor() && !x.tensor().traced && !x.tensor().element && x.obj.use_count() == 1 &&
      x.tensor().data.sole_owner()) {
    // Made by the draw above and held by x alone: its buffer is x's to write.
    Tensor& data = const_cast<TensorObj&>(x.tensor()).data;
    DType d = data.dtype();
    if (d == DType::f32 && adopts(shift, d) && adopts(scale, d)) {
      shift_and_scale(data, static_cast<float>(shift.f), static_cast<float>(scale.f));
      return x;
    }
    if (d == DType::f64 && adopts(shift, d) && adopts(scale, d)) {
      shift_and_scale(data, shift.f, scale.f);
      return x;
    }
  }
  return elementwise_binary(in, Prim::mul, elementwise_binary(in, Prim::sub, x, shift), scale);
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

void add_random_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"rand", rand},
                        {"randn", randn},
                        {"randperm", randperm},
                        {"_scaled_rand", scaled_rand},
                        {"seed!", seed},
                        {"_random_stream", random_stream},
                    });
}

}  // namespace ytape::tracer
