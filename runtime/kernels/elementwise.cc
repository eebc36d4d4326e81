// Kernels of the elementwise family. Each op is a functor inlined into a row loop over raw
// pointers, one instantiation per dtype, so that contiguous loops vectorize; the layout
// (same shape, a broadcast scalar, strided broadcasting, threads) is handled once in
// common.cc for every op.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernels/common.h"
#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/fast_math.h"
#include "tape/float16.h"

namespace ytape {

namespace {

using namespace kernels;

// The rows are compiled per instruction set (YTAPE_ROW_TARGETS), this file without fused
// multiply-adds, so every variant gives the same bits.

template <typename T, typename R, typename F>
YTAPE_ROW_TARGETS void unary_row(void* out, const void* const* in, const int64_t*, int64_t n) {
  R* o = static_cast<R*>(out);
  const T* x = static_cast<const T*>(in[0]);
  for (int64_t i = 0; i < n; ++i) o[i] = F::f(x[i]);
}

// The four cases of steps are separate loops so that each is a plain vectorizable loop.
template <typename T, typename R, typename F>
YTAPE_ROW_TARGETS void binary_row(void* out, const void* const* in, const int64_t* step,
                                  int64_t n) {
  R* o = static_cast<R*>(out);
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  if (step[0] != 0 && step[1] != 0) {
    for (int64_t i = 0; i < n; ++i) o[i] = F::f(a[i], b[i]);
  } else if (step[1] != 0) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = F::f(x, b[i]);
  } else if (step[0] != 0) {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = F::f(a[i], y);
  } else {
    const R v = F::f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

[[noreturn]] void bad_dtype(const KernelCall& call, DType d) {
  internal_error("{} has no kernel for {}", prim_name(call.op.prim), dtype_name(d));
}

// The row of F on elements of T (dtype D) where ops of class C take D, else null: R, the
// result's element type, is bool for a comparison and T otherwise.
template <int Arity, DTypes C, typename F, DType D, typename T>
RowFn row_if_taken() {
  if constexpr (accepts(C, D)) {
    using R = std::conditional_t<compares(C), bool, T>;
    if constexpr (Arity == 1) {
      return unary_row<T, R, F>;
    } else {
      return binary_row<T, R, F>;
    }
  } else {
    return nullptr;
  }
}

// Row functions by dtype for an op of class C (the dtypes column of its row in ops.def).
// f16 has none: the executor lowers f16 ops to f32 ones (runtime/lower_f16.h).
template <int Arity, DTypes C, typename F>
RowFn typed_rows(DType d) {
  switch (d) {
    case DType::f32:
      return row_if_taken<Arity, C, F, DType::f32, float>();
    case DType::f64:
      return row_if_taken<Arity, C, F, DType::f64, double>();
    case DType::i64:
      return row_if_taken<Arity, C, F, DType::i64, int64_t>();
    case DType::boolean:
      return row_if_taken<Arity, C, F, DType::boolean, bool>();
    case DType::f16:
      return nullptr;
  }
  return nullptr;
}

// The kernel of an op whose row `rows` picks by the dtype of its last argument.
template <RowFn (*rows)(DType)>
void row_kernel(const KernelCall& call) {
  DType d = call.args.back()->dtype();
  RowFn row = rows(d);
  if (row == nullptr) bad_dtype(call, d);
  broadcast_call(row, call);
}

// Registers the kernel and its rows (for Fusion::elementwise).
template <RowFn (*rows)(DType)>
void set_rows(KernelTable& t, Prim p) {
  t.set(p, row_kernel<rows>);
  for (int d = 0; d < kNumDTypes; ++d) {
    t.rows[KernelTable::entry(p)][d] = rows(static_cast<DType>(d));
  }
}

// Registers P's kernel, F over one argument or two, for the dtypes of P's row in ops.def.
template <Prim P, typename F>
void set_unary(KernelTable& t) {
  set_rows<typed_rows<1, dtypes_of(P), F>>(t, P);
}
template <Prim P, typename F>
void set_binary(KernelTable& t) {
  set_rows<typed_rows<2, dtypes_of(P), F>>(t, P);
}

// ---- the ops -------------------------------------------------------------------------

// i64 negation and arithmetic wrap (two's complement), as Julia's Int64 does.
struct Neg {
  template <typename T>
  static T f(T x) {
    if constexpr (std::is_same_v<T, int64_t>) {
      return wrap_sub(0, x);
    } else {
      return -x;
    }
  }
};
struct Abs {
  template <typename T>
  static T f(T x) {
    if constexpr (std::is_same_v<T, int64_t>) {
      return x < 0 ? wrap_sub(0, x) : x;
    } else {
      return std::abs(x);
    }
  }
};
// Zeros (of either sign) and NaN map to themselves.
struct Sign {
  template <typename T>
  static T f(T x) {
    return x > 0 ? T(1) : x < 0 ? T(-1) : x;
  }
};
// NaN fails `x < 0` and stays.
struct Relu {
  template <typename T>
  static T f(T x) {
    return x < 0 ? T(0) : x;
  }
};

template <typename T>
T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_f32(x);
  return std::exp(x);
}
template <typename T>
T tanh_of(T x) {
  if constexpr (std::is_same_v<T, float>) return tanh_f32(x);
  return std::tanh(x);
}
// exp only ever sees -|x|, so neither form overflows.
template <typename T>
T sigmoid_of(T x) {
  if constexpr (std::is_same_v<T, float>) return sigmoid_f32(x);
  return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}

#define YTAPE_MATH(Name, expr) \
  struct Name {                \
    template <typename T>      \
    static T f(T x) {          \
      return expr;             \
    }                          \
  };
// f32 e^x, tanh and sigmoid vectorize (fast_math.h); f64 calls the C library.
YTAPE_MATH(Exp, exp_of(x))
YTAPE_MATH(Log, std::log(x))
YTAPE_MATH(Log1p, std::log1p(x))
YTAPE_MATH(Expm1, std::expm1(x))
YTAPE_MATH(Sqrt, std::sqrt(x))
YTAPE_MATH(Sin, std::sin(x))
YTAPE_MATH(Cos, std::cos(x))
YTAPE_MATH(Tan, std::tan(x))
YTAPE_MATH(Tanh, tanh_of(x))
YTAPE_MATH(Sigmoid, sigmoid_of(x))
YTAPE_MATH(Softplus, (x > 0 ? x : T(0)) + std::log1p(std::exp(-std::abs(x))))
YTAPE_MATH(Erf, std::erf(x))
// gelu as its ops compute it one by one, rounded to T after each (no contraction here):
// the same bits as the seven ops the prelude's formula traced to before it was one.
template <typename T>
T gelu_of(T x) {
  T inner = T(0.7978845608028654) * (x + T(0.044715) * ((x * x) * x));
  return (T(0.5) * x) * (T(1) + tanh_of(inner));
}
YTAPE_MATH(Gelu, gelu_of(x))
YTAPE_MATH(Asin, std::asin(x))
YTAPE_MATH(Acos, std::acos(x))
YTAPE_MATH(Atan, std::atan(x))
YTAPE_MATH(Floor, std::floor(x))
YTAPE_MATH(Ceil, std::ceil(x))
// Ties to even (ONNX's Round, Julia's round) whatever the rounding mode: nearbyint would
// follow the current mode, std::round takes ties away from zero. A tie is rounded as half
// of it is, twice (exact: halving and doubling a float lose nothing); Clang 14, which
// builds the fuzz targets, has no __builtin_roundeven.
template <typename T>
T round_even(T x) {
  if (std::abs(x - std::trunc(x)) == T(0.5)) return T(2) * std::round(x / T(2));
  return std::round(x);
}
YTAPE_MATH(Round, round_even(x))
#undef YTAPE_MATH

#define YTAPE_BINARY(Name, expr) \
  struct Name {                  \
    template <typename T>        \
    static auto f(T a, T b) {    \
      return expr;               \
    }                            \
  };
YTAPE_BINARY(Add, add_values(a, b))
YTAPE_BINARY(Sub, sub_values(a, b))
YTAPE_BINARY(Mul, mul_values(a, b))
YTAPE_BINARY(Div, a / b)
YTAPE_BINARY(Pow, std::pow(a, b))
YTAPE_BINARY(Rem, std::fmod(a, b))
YTAPE_BINARY(Max, max_nan(a, b))
YTAPE_BINARY(Min, min_nan(a, b))
YTAPE_BINARY(Eq, a == b)
YTAPE_BINARY(Ne, a != b)
YTAPE_BINARY(Lt, a < b)
YTAPE_BINARY(Le, a <= b)
YTAPE_BINARY(Gt, a > b)
YTAPE_BINARY(Ge, a >= b)
#undef YTAPE_BINARY

// The fused kernels (Fusion, runtime/fusion.h) of same-shape floats: relu(a + b), and the
// relu gradient select(z > 0, g, 0) of (z, g), which never stores the mask.
struct AddRelu {
  template <typename T>
  static T f(T a, T b) {
    return Relu::f(a + b);
  }
};
struct ReluBackward {
  template <typename T>
  static T f(T z, T g) {
    return z > 0 ? g : T(0);
  }
};

// broadcast_to in an elementwise group (Fusion::elementwise): its argument is one of the
// group's broadcast arguments, given a block at a time (step 1) or one value for the block
// (step 0: a single element, or a per-row value over a row longer than the block).
template <typename T>
YTAPE_ROW_TARGETS void copy_row(void* out, const void* const* in, const int64_t* step, int64_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(in[0]);
  if (step[0] != 0) {
    for (int64_t i = 0; i < n; ++i) o[i] = x[i];
  } else {
    const T v = x[0];
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

RowFn copy_rows(DType d) {
  switch (d) {
    case DType::f32:
      return copy_row<float>;
    case DType::f64:
      return copy_row<double>;
    case DType::i64:
      return copy_row<int64_t>;
    case DType::boolean:
      return copy_row<bool>;
    case DType::f16:
      return nullptr;
  }
  return nullptr;
}

// ---- select and convert --------------------------------------------------------------

// select moves bits, so one instantiation per element size serves every dtype. The loops
// vectorize (GCC 12) only as written: the condition read as bytes, not bool, and both
// operands read before the choice.
template <typename U>
YTAPE_ROW_TARGETS void select_row(void* out, const void* const* in, const int64_t* step,
                                  int64_t n) {
  U* o = static_cast<U*>(out);
  const uint8_t* c = static_cast<const uint8_t*>(in[0]);
  const U* x = static_cast<const U*>(in[1]);
  const U* y = static_cast<const U*>(in[2]);
  if (step[0] != 0 && step[1] != 0 && step[2] != 0) {
    for (int64_t i = 0; i < n; ++i) {
      const U a = x[i], b = y[i];
      o[i] = c[i] ? a : b;
    }
  } else if (step[0] != 0 && step[1] != 0) {  // the relu gradient: select(x > 0, g, 0)
    const U b = y[0];
    for (int64_t i = 0; i < n; ++i) {
      const U a = x[i];
      o[i] = c[i] ? a : b;
    }
  } else if (step[0] != 0 && step[2] != 0) {
    const U a = x[0];
    for (int64_t i = 0; i < n; ++i) {
      const U b = y[i];
      o[i] = c[i] ? a : b;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = c[i * step[0]] ? x[i * step[1]] : y[i * step[2]];
  }
}

RowFn select_rows(DType d) {
  switch (dtype_size(d)) {
    case 1:
      return select_row<uint8_t>;
    case 2:
      return select_row<uint16_t>;
    case 4:
      return select_row<uint32_t>;
    default:
      return select_row<uint64_t>;
  }
}

// float -> i64 truncates toward zero; NaN gives 0 and values beyond the i64 range
// saturate, where a plain cast would be undefined. uint16_t is f16's bits: read through
// f32 (exact) and written by one rounding from the source value, never through f32, so
// that f64 -> f16 rounds once.
template <typename R>
struct To {
  template <typename T>
  static R f(T x) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      return To<R>::f(f16_to_f32(x));
    } else if constexpr (std::is_same_v<R, uint16_t>) {
      return f16_from_double(static_cast<double>(x));
    } else if constexpr (std::is_same_v<R, bool>) {
      return x != 0;
    } else if constexpr (std::is_same_v<R, int64_t> && std::is_floating_point_v<T>) {
      constexpr T lo = -0x1p63, hi = 0x1p63;
      return x != x    ? 0
             : x <= lo ? std::numeric_limits<int64_t>::min()
             : x >= hi ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(x);
    } else {
      return static_cast<R>(x);
    }
  }
};

template <typename R>
RowFn convert_row(DType from) {
  switch (from) {
    case DType::f32:
      return unary_row<float, R, To<R>>;
    case DType::f64:
      return unary_row<double, R, To<R>>;
    case DType::i64:
      return unary_row<int64_t, R, To<R>>;
    case DType::boolean:
      return unary_row<bool, R, To<R>>;
    case DType::f16:
      return unary_row<uint16_t, R, To<R>>;
  }
  return nullptr;
}

void convert_kernel(const KernelCall& call) {
  DType from = call.args[0]->dtype();
  switch (call.outs[0]->dtype()) {
    case DType::f32:
      return broadcast_call(convert_row<float>(from), call);
    case DType::f64:
      return broadcast_call(convert_row<double>(from), call);
    case DType::i64:
      return broadcast_call(convert_row<int64_t>(from), call);
    case DType::boolean:
      return broadcast_call(convert_row<bool>(from), call);
    case DType::f16:
      return broadcast_call(convert_row<uint16_t>(from), call);
  }
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  set_unary<Prim::neg, Neg>(t);
  set_unary<Prim::abs, Abs>(t);
  set_unary<Prim::sign, Sign>(t);
  set_unary<Prim::relu, Relu>(t);
  set_unary<Prim::exp, Exp>(t);
  set_unary<Prim::log, Log>(t);
  set_unary<Prim::log1p, Log1p>(t);
  set_unary<Prim::expm1, Expm1>(t);
  set_unary<Prim::sqrt, Sqrt>(t);
  set_unary<Prim::sin, Sin>(t);
  set_unary<Prim::cos, Cos>(t);
  set_unary<Prim::tan, Tan>(t);
  set_unary<Prim::tanh, Tanh>(t);
  set_unary<Prim::sigmoid, Sigmoid>(t);
  set_unary<Prim::softplus, Softplus>(t);
  set_unary<Prim::erf, Erf>(t);
  set_unary<Prim::gelu, Gelu>(t);
  set_unary<Prim::asin, Asin>(t);
  set_unary<Prim::acos, Acos>(t);
  set_unary<Prim::atan, Atan>(t);
  set_unary<Prim::floor, Floor>(t);
  set_unary<Prim::ceil, Ceil>(t);
  set_unary<Prim::round, Round>(t);
  set_binary<Prim::add, Add>(t);
  set_binary<Prim::sub, Sub>(t);
  set_binary<Prim::mul, Mul>(t);
  set_binary<Prim::max, Max>(t);
  set_binary<Prim::min, Min>(t);
  set_binary<Prim::div, Div>(t);
  set_binary<Prim::pow, Pow>(t);
  set_binary<Prim::rem, Rem>(t);
  set_binary<Prim::eq, Eq>(t);
  set_binary<Prim::ne, Ne>(t);
  set_binary<Prim::lt, Lt>(t);
  set_binary<Prim::le, Le>(t);
  set_binary<Prim::gt, Gt>(t);
  set_binary<Prim::ge, Ge>(t);
  set_rows<select_rows>(t, Prim::select);
  for (int d = 0; d < kNumDTypes; ++d) {  // the rows alone: its kernel is the shape family's
    t.rows[KernelTable::entry(Prim::broadcast_to)][d] = copy_rows(static_cast<DType>(d));
  }
  t.set(Prim::convert, convert_kernel);
  // Element i of every operand is the same position whatever the layout, as long as all
  // share one (the executor's rule for BlockedOut::follow), so these kernels need not know.
  if (t.kernels_set == KernelSet::fast) {
    for (Prim p : all_prims()) {
      if (!prim_info(p).elementwise()) continue;
      t.allow_blocked(p, ~uint32_t{0}, BlockedOut::follow);
      t.allow_channel_args(p);  // broadcast_call handles them
    }
    t.set(Fusion::add_relu, row_kernel<typed_rows<2, DTypes::floating, AddRelu>>);
    t.set(Fusion::relu_backward, row_kernel<typed_rows<2, DTypes::floating, ReluBackward>>);
    for (Fusion f : {Fusion::add_relu, Fusion::relu_backward}) {
      t.allow_in_place(f);
      t.allow_blocked(f, 0b11, BlockedOut::follow);
    }
    t.set(Fusion::elementwise, elementwise_program);
    t.allow_in_place(Fusion::elementwise);
    t.allow_blocked(Fusion::elementwise, ~uint32_t{0}, BlockedOut::follow);
    t.allow_channel_args(Fusion::elementwise);
  }
}

}  // namespace ytape
