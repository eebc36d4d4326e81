#include "kernel_harness.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <random>

#include "runtime/eval.h"
#include "runtime/kernels/kernel.h"
#include "tape/builder.h"
#include "tape/float16.h"

namespace ytape::testing {

std::vector<Tensor> run_op(Prim p, std::vector<Tensor> args, const Attrs& attrs, KernelSet set) {
  return run_op_in_layouts(p, std::move(args), attrs, {}, set);
}

std::vector<Tensor> run_op_in_layouts(Prim p, std::vector<Tensor> args, const Attrs& attrs,
                                      const std::vector<Layout>& layouts, KernelSet set,
                                      Variant variant) {
  Builder b("kernel_test");
  std::vector<Var> vars;
  for (size_t i = 0; i < args.size(); ++i) {
    vars.push_back(b.input(fmt::format("x{}", i + 1), args[i].type()));
  }
  b.call(p, vars, attrs);
  Tape tape = b.finish();
  const Op& op = tape.ops.back();
  if (kernel_table(set).kernels[static_cast<int>(p)] == nullptr)
    FAIL("no kernel for " << prim_name(p));
  auto layout = [&](size_t i) { return i < layouts.size() ? layouts[i] : Layout::plain; };
  std::vector<Tensor> laid_out;  // the arguments in their layouts
  for (size_t i = 0; i < args.size(); ++i) {
    laid_out.push_back(Tensor::uninitialized(args[i].type()));
    relayout(args[i], Layout::plain, laid_out.back(), layout(i));
  }
  std::vector<Tensor> outs;
  for (Var v : op.outs) {
    Tensor t(tape.type(v));
    // Bytes of 0xA5 are odd, unlikely values in every numeric dtype; bool must stay 0 or 1.
    int fill = t.dtype() == DType::boolean ? 1 : 0xA5;
    if (t.bytes() > 0) std::memset(t.raw(), fill, static_cast<size_t>(t.bytes()));
    outs.push_back(std::move(t));
  }
  std::vector<const Tensor*> arg_ptrs;
  for (const Tensor& a : laid_out) arg_ptrs.push_back(&a);
  std::vector<Tensor*> out_ptrs;
  for (Tensor& o : outs) out_ptrs.push_back(&o);
  std::vector<Layout> all;
  for (size_t i = 0; i < args.size() + outs.size(); ++i) all.push_back(layout(i));
  EvalOptions options;
  options.kernels = set;
  options.layouts = layouts.empty() ? nullptr : all.data();
  options.variant = variant;
  evaluate_into(op, arg_ptrs, out_ptrs, options);
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor plain = Tensor::uninitialized(outs[i].type());
    relayout(outs[i], layout(args.size() + i), plain, Layout::plain);
    outs[i] = plain;
  }
  return outs;
}

Tensor run_op1(Prim p, std::vector<Tensor> args, const Attrs& attrs, KernelSet set) {
  std::vector<Tensor> outs = run_op(p, std::move(args), attrs, set);
  REQUIRE(outs.size() == 1);
  return outs[0];
}

Tensor random_tensor(const Type& type, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(static_cast<size_t>(type.size()));
  for (double& v : values) {
    double u = static_cast<double>(rng() >> 11) * 0x1p-53;
    switch (type.dtype) {
      case DType::f32:
      case DType::f64:
      case DType::f16:
        v = lo + (hi - lo) * u;
        break;
      case DType::i64:
        v = std::floor(lo + (hi - lo + 1) * u);
        break;
      case DType::boolean:
        v = u < 0.5;
        break;
    }
  }
  return make_tensor(type, values);
}

Tensor make_tensor(const Type& type, const std::vector<double>& values) {
  Tensor t(type);
  REQUIRE(static_cast<int64_t>(values.size()) == t.size());
  for (size_t i = 0; i < values.size(); ++i) {
    switch (type.dtype) {
      case DType::f32:
        t.data<float>()[i] = static_cast<float>(values[i]);
        break;
      case DType::f64:
        t.data<double>()[i] = values[i];
        break;
      case DType::i64:
        t.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
        break;
      case DType::boolean:
        t.data<bool>()[i] = values[i] != 0;
        break;
      case DType::f16:
        t.data<uint16_t>()[i] = f16_from_double(values[i]);
        break;
    }
  }
  return t;
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t.dtype()) {
      case DType::f32:
        out[i] = t.data<float>()[i];
        break;
      case DType::f64:
        out[i] = t.data<double>()[i];
        break;
      case DType::i64:
        out[i] = static_cast<double>(t.data<int64_t>()[i]);
        break;
      case DType::boolean:
        out[i] = t.data<bool>()[i];
        break;
      case DType::f16:
        out[i] = f16_to_f32(t.data<uint16_t>()[i]);
        break;
    }
  }
  return out;
}

namespace {

bool close(double got, double want, double tolerance) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::abs(got - want) <= tolerance;
}

// Checks each element against its reference within tolerance(i).
template <typename Tolerance>
void check_each(const Tensor& got, const std::vector<double>& want, const Tolerance& tolerance,
                const std::string& what) {
  REQUIRE_MESSAGE(got.size() == static_cast<int64_t>(want.size()),
                  type_str(got.type())
                      << " has " << got.size() << " elements, want " << want.size());
  std::vector<double> values = to_doubles(got);
  int64_t bad = 0;
  std::string report;
  for (size_t i = 0; i < want.size(); ++i) {
    if (close(values[i], want[i], tolerance(i))) continue;
    if (++bad <= 5) {
      report += fmt::format("\n  at [{}] (linear {}): got {}, want {}",
                            fmt::join(unravel(got.shape(), static_cast<int64_t>(i)), ","), i,
                            values[i], want[i]);
    }
  }
  CHECK_MESSAGE(bad == 0, type_str(got.type()) << ": " << bad << " of " << want.size()
                                               << " elements differ (" << what << ")" << report);
}

}  // namespace

void check_close(const Tensor& got, const std::vector<double>& want, double rtol, double atol) {
  check_each(
      got, want, [&](size_t i) { return atol + rtol * std::abs(want[i]); },
      fmt::format("rtol {}, atol {}", rtol, atol));
}

void check_close_scaled(const Tensor& got, const std::vector<double>& want,
                        const std::vector<double>& scale, double rtol, double atol) {
  REQUIRE(scale.size() == want.size());
  check_each(
      got, want, [&](size_t i) { return atol + rtol * scale[i]; },
      fmt::format("atol {} + {} times the sum of the magnitudes of the terms", atol, rtol));
}

std::vector<int64_t> unravel(const Shape& shape, int64_t i) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

int64_t ravel(const Shape& shape, const std::vector<int64_t>& index) {
  int64_t i = 0, stride = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < index.size()) i += index[d] * stride;
    stride *= shape[d];
  }
  return i;
}

}  // namespace ytape::testing
