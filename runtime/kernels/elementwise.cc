// Kernels of the elementwise family. Each op is a functor inlined into a row loop over raw
// pointers, one instantiation per dtype, so that contiguous loops vectorize; the layout
// (same shape, a broadcast scalar, strided broadcasting, threads) is handled once in
// common.cc for every op.
#include <cmath>
#include <limits>

#include "runtime/kernels/common.h"

namespace ytape {

namespace {

using namespace kernels;

template <typename T, typename R, typename F>
void unary_row(void* out, const void* const* in, const int64_t*, int64_t n) {
  R* o = static_cast<R*>(out);
  const T* x = static_cast<const T*>(in[0]);
  for (int64_t i = 0; i < n; ++i) o[i] = F::f(x[i]);
}

// The four cases of steps are separate loops so that each is a plain vectorizable loop.
template <typename T, typename R, typename F>
void binary_row(void* out, const void* const* in, const int64_t* step, int64_t n) {
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

// Kernels by the dtypes they accept; the row type R is the result element type.
template <typename F>
void float_unary(const KernelCall& call) {
  switch (DType d = call.args[0]->dtype()) {
    case DType::f32:
      return broadcast_call(unary_row<float, float, F>, call);
    case DType::f64:
      return broadcast_call(unary_row<double, double, F>, call);
    default:
      bad_dtype(call, d);
  }
}

template <typename F>
void numeric_unary(const KernelCall& call) {
  if (call.args[0]->dtype() == DType::i64) {
    return broadcast_call(unary_row<int64_t, int64_t, F>, call);
  }
  float_unary<F>(call);
}

template <typename F>
void float_binary(const KernelCall& call) {
  switch (DType d = call.args[0]->dtype()) {
    case DType::f32:
      return broadcast_call(binary_row<float, float, F>, call);
    case DType::f64:
      return broadcast_call(binary_row<double, double, F>, call);
    default:
      bad_dtype(call, d);
  }
}

template <typename F>
void numeric_binary(const KernelCall& call) {
  if (call.args[0]->dtype() == DType::i64) {
    return broadcast_call(binary_row<int64_t, int64_t, F>, call);
  }
  float_binary<F>(call);
}

template <typename F>
void comparison(const KernelCall& call) {
  switch (DType d = call.args[0]->dtype()) {
    case DType::f32:
      return broadcast_call(binary_row<float, bool, F>, call);
    case DType::f64:
      return broadcast_call(binary_row<double, bool, F>, call);
    case DType::i64:
      return broadcast_call(binary_row<int64_t, bool, F>, call);
    default:
      bad_dtype(call, d);
  }
}

template <typename F>
void equality(const KernelCall& call) {
  if (call.args[0]->dtype() == DType::boolean) {
    return broadcast_call(binary_row<bool, bool, F>, call);
  }
  comparison<F>(call);
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

#define YTAPE_MATH(Name, expr) \
  struct Name {                \
    template <typename T>      \
    static T f(T x) {          \
      return expr;             \
    }                          \
  };
YTAPE_MATH(Exp, std::exp(x))
YTAPE_MATH(Log, std::log(x))
YTAPE_MATH(Log1p, std::log1p(x))
YTAPE_MATH(Expm1, std::expm1(x))
YTAPE_MATH(Sqrt, std::sqrt(x))
YTAPE_MATH(Sin, std::sin(x))
YTAPE_MATH(Cos, std::cos(x))
YTAPE_MATH(Tan, std::tan(x))
YTAPE_MATH(Tanh, std::tanh(x))
// exp only ever sees -|x|, so neither form overflows.
YTAPE_MATH(Sigmoid, x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x)))
YTAPE_MATH(Softplus, (x > 0 ? x : T(0)) + std::log1p(std::exp(-std::abs(x))))
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

// ---- select and convert --------------------------------------------------------------

// select moves bits, so one instantiation per element size serves every dtype. The loops
// vectorize (GCC 12) only as written: the condition read as bytes, not bool, and both
// operands read before the choice.
template <typename U>
void select_row(void* out, const void* const* in, const int64_t* step, int64_t n) {
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

void select_kernel(const KernelCall& call) {
  switch (dtype_size(call.args[1]->dtype())) {
    case 1:
      return broadcast_call(select_row<uint8_t>, call);
    case 4:
      return broadcast_call(select_row<uint32_t>, call);
    default:
      return broadcast_call(select_row<uint64_t>, call);
  }
}

// float -> i64 truncates toward zero; NaN gives 0 and values beyond the i64 range
// saturate, where a plain cast would be undefined.
template <typename R>
struct To {
  template <typename T>
  static R f(T x) {
    if constexpr (std::is_same_v<R, bool>) {
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
  }
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  t.set(Prim::neg, numeric_unary<Neg>);
  t.set(Prim::abs, numeric_unary<Abs>);
  t.set(Prim::sign, numeric_unary<Sign>);
  t.set(Prim::relu, numeric_unary<Relu>);
  t.set(Prim::exp, float_unary<Exp>);
  t.set(Prim::log, float_unary<Log>);
  t.set(Prim::log1p, float_unary<Log1p>);
  t.set(Prim::expm1, float_unary<Expm1>);
  t.set(Prim::sqrt, float_unary<Sqrt>);
  t.set(Prim::sin, float_unary<Sin>);
  t.set(Prim::cos, float_unary<Cos>);
  t.set(Prim::tan, float_unary<Tan>);
  t.set(Prim::tanh, float_unary<Tanh>);
  t.set(Prim::sigmoid, float_unary<Sigmoid>);
  t.set(Prim::softplus, float_unary<Softplus>);
  t.set(Prim::add, numeric_binary<Add>);
  t.set(Prim::sub, numeric_binary<Sub>);
  t.set(Prim::mul, numeric_binary<Mul>);
  t.set(Prim::max, numeric_binary<Max>);
  t.set(Prim::min, numeric_binary<Min>);
  t.set(Prim::div, float_binary<Div>);
  t.set(Prim::pow, float_binary<Pow>);
  t.set(Prim::eq, equality<Eq>);
  t.set(Prim::ne, equality<Ne>);
  t.set(Prim::lt, comparison<Lt>);
  t.set(Prim::le, comparison<Le>);
  t.set(Prim::gt, comparison<Gt>);
  t.set(Prim::ge, comparison<Ge>);
  t.set(Prim::select, select_kernel);
  t.set(Prim::convert, convert_kernel);
  // Element i of every operand is the same position whatever the layout, as long as all
  // share one (the executor's rule for BlockedOut::follow), so these kernels need not know.
  if (t.kernels_set == KernelSet::fast) {
    for (Prim p : all_prims()) {
      if (prim_info(p).elementwise()) t.allow_blocked(p, ~uint32_t{0}, BlockedOut::follow);
    }
    t.set(Fusion::add_relu, float_binary<AddRelu>);
    t.set(Fusion::relu_backward, float_binary<ReluBackward>);
    for (Fusion f : {Fusion::add_relu, Fusion::relu_backward}) {
      t.allow_in_place(f);
      t.allow_blocked(f, 0b11, BlockedOut::follow);
    }
  }
}

}  // namespace ytape
