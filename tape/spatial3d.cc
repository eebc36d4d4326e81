// The depth dim becomes part of the batch: x (W, H, D, C, N) is permuted once to
// (W, H, C, D, N), whose (W, H, C, D * N) reshape is a batch of D 2-d images per volume;
// a depth slice of it is a strided slice of dim 4. Every shape and attribute is checked
// before the first op, so that a mistake is reported against the 3-d op, not one of the 2-d
// ops it is made of.
#include "tape/spatial3d.h"

#include <limits>
#include <optional>

#include "tape/error.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

constexpr int64_t kDepth = 2;  // the 0-based dim of D in (W, H, D, C, N)

// Runs `check`, naming `op` in what it throws.
template <class F>
void checked(const char* op, F check) {
  try {
    check();
  } catch (const UserError& e) {
    user_error("{}: {}", op, e.what());
  }
}

void require_geometry(const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                      const std::vector<int64_t>& window, const char* window_name) {
  require_length(window, 3, window_name);
  require_each_at_least(window, 1, window_name);
  require_length(stride, 3, "stride");
  require_each_at_least(stride, 1, "stride");
  require_length(pad, 6, "pad");
  require_each_at_least(pad, 0, "pad");
}

// conv3d's output (W', H', D', Cout, N) for x and w; a UserError when they do not fit.
Shape conv_output(const Type& x, const Type& w, const Conv3dAttrs& a) {
  require_same_dtype(std::vector<Type>{x, w});
  require_float(x, "the arguments");
  require_rank(x, 5, "x (W, H, D, C, N)");
  require_rank(w, 5, "w (kw, kh, kd, cin/groups, cout)");
  require_geometry(a.stride, a.pad, a.dilation, "dilation");
  if (a.groups < 1) user_error("groups={} must be positive", a.groups);
  int64_t cin = x.shape[3], cout = w.shape[4];
  if (cin % a.groups != 0 || cout % a.groups != 0 || w.shape[3] * a.groups != cin) {
    user_error("w {} (kw, kh, kd, cin/groups, cout) does not fit x {} (W, H, D, C, N) in {} groups",
               type_str(w), type_str(x), a.groups);
  }
  Shape out{0, 0, 0, cout, x.shape[4]};
  for (int i = 0; i < 3; ++i) {
    out[i] = window_positions(x.shape[i], a.pad[2 * i], a.pad[2 * i + 1], w.shape[i], a.dilation[i],
                              a.stride[i]);
    if (out[i] == 0) {
      user_error("the kernel of w {} with dilation={} does not fit in x {} with pad={} (along {})",
                 type_str(w), shape_str(a.dilation), type_str(x), shape_str(a.pad), "WHD"[i]);
    }
  }
  require_sane(out, "the result");
  return out;
}

// A pooling's output (W', H', D', C, N): each pad smaller than the window along its axis, as
// the 2-d primitives require, so that every window holds an element of x.
Shape pool_output(const Type& x, const Pool3dAttrs& a) {
  require_float(x, "x");
  require_rank(x, 5, "x (W, H, D, C, N)");
  require_geometry(a.stride, a.pad, a.window, "window");
  Shape out = x.shape;
  for (int i = 0; i < 3; ++i) {
    int64_t lo = a.pad[2 * i], hi = a.pad[2 * i + 1];
    out[i] = window_positions(x.shape[i], lo, hi, a.window[i], 1, a.stride[i]);
    if (out[i] == 0 || lo >= a.window[i] || hi >= a.window[i]) {
      user_error(
          "window={} and pad={} do not fit x {} along {}, or a pad is not smaller than the "
          "window",
          shape_str(a.window), shape_str(a.pad), type_str(x), "WHD"[i]);
    }
  }
  require_sane(out, "the result");
  return out;
}

Var reshape(OpSink& s, Var x, Shape shape) {
  if (s.type(x).shape == shape) return x;
  return s.op<Prim::reshape>({x}, {.shape = std::move(shape)});
}

// (W, H, D, C, N) <-> (W, H, C, D, N): the permutation is its own inverse.
Var swap_depth(OpSink& s, Var x) {
  return s.op<Prim::permutedims>({x}, {.perm = {1, 2, 4, 3, 5}});
}

// `count` elements along 0-based dim `dim`, from 0-based `first`, `step` apart.
Var slice(OpSink& s, Var x, int dim, int64_t first, int64_t count, int64_t step) {
  Shape shape = s.type(x).shape;
  if (first == 0 && count == shape[dim] && (step == 1 || count == 1)) return x;
  std::vector<int64_t> start(shape.size(), 1), stop(shape), steps(shape.size(), 1);
  start[dim] = first + 1;
  stop[dim] = first + (count - 1) * step + 1;
  steps[dim] = step;
  return s.op<Prim::slice>({x}, {.start = start, .stop = stop, .step = steps});
}

// `lo` and `hi` elements of `value` around dim `dim`, `interior` between its elements.
Var pad(OpSink& s, Var x, int dim, int64_t lo, int64_t hi, int64_t interior = 0, double value = 0) {
  if (lo == 0 && hi == 0 && interior == 0) return x;
  std::vector<int64_t> l(s.type(x).rank(), 0), h = l, in = l;
  l[dim] = lo;
  h[dim] = hi;
  in[dim] = interior;
  return s.op<Prim::pad>({x}, {.lo = l, .hi = h, .interior = in, .value = value});
}

// w[:, :, t, :, :] as a 2-d weight (kw, kh, cin/groups, cout).
Var depth_tap(OpSink& s, Var w, int64_t t) {
  Shape ws = s.type(w).shape;
  return reshape(s, slice(s, w, kDepth, t, 1, 1), {ws[0], ws[1], ws[3], ws[4]});
}

// total + term, or term when there is no total yet.
Var accumulate(OpSink& s, Prim combine, const std::optional<Var>& total, Var term) {
  return total ? s.call(combine, {*total, term}, {}) : term;
}

// max_pool3d (P2d max_pool2d, combined by max) and avg_pool3d (avg_pool2d, by add).
template <Prim P2d, Prim Combine>
Var pool3d(OpSink& s, Var x, const Pool3dAttrs& a, const char* name) {
  Shape out;
  checked(name, [&] { out = pool_output(s.type(x), a); });
  Type xt = s.type(x);
  int64_t depth = xt.shape[kDepth], channels = xt.shape[3], batch = xt.shape[4];
  Var planes = reshape(s, swap_depth(s, x), {xt.shape[0], xt.shape[1], channels, depth * batch});
  Var p = s.op<P2d>({planes}, {.window = {a.window[0], a.window[1]},
                               .stride = {a.stride[0], a.stride[1]},
                               .pad = {a.pad[0], a.pad[1], a.pad[2], a.pad[3]}});
  p = reshape(s, p, {out[0], out[1], channels, depth, batch});
  // -inf is never a window's maximum, since every window holds an element of x.
  double padding = Combine == Prim::max ? -std::numeric_limits<double>::infinity() : 0.0;
  p = pad(s, p, 3, a.pad[4], a.pad[5], 0, padding);
  std::optional<Var> y;
  for (int64_t t = 0; t < a.window[kDepth]; ++t) {
    y = accumulate(s, Combine, y, slice(s, p, 3, t, out[kDepth], a.stride[kDepth]));
  }
  if (Combine == Prim::add && a.window[kDepth] > 1) {
    Var size = s.op<Prim::fill>(
        {}, {.value = static_cast<double>(a.window[kDepth]), .dtype = xt.dtype, .shape = {}});
    y = s.op<Prim::div>({*y, size});
  }
  return swap_depth(s, *y);
}

}  // namespace

Var conv3d(OpSink& s, Var x, Var w, const Conv3dAttrs& a) {
  Shape out;
  checked("conv3d", [&] { out = conv_output(s.type(x), s.type(w), a); });
  Shape xs = s.type(x).shape;
  int64_t depth = out[kDepth], batch = xs[4];
  Var padded = pad(s, swap_depth(s, x), 3, a.pad[4], a.pad[5]);
  AttrsOf<Prim::conv2d> a2{.stride = {a.stride[0], a.stride[1]},
                           .pad = {a.pad[0], a.pad[1], a.pad[2], a.pad[3]},
                           .dilation = {a.dilation[0], a.dilation[1]},
                           .groups = a.groups};
  std::optional<Var> y;
  for (int64_t t = 0; t < s.type(w).shape[kDepth]; ++t) {
    Var slab = slice(s, padded, 3, t * a.dilation[kDepth], depth, a.stride[kDepth]);
    slab = reshape(s, slab, {xs[0], xs[1], xs[3], depth * batch});
    y = accumulate(s, Prim::add, y, s.op<Prim::conv2d>({slab, depth_tap(s, w, t)}, a2));
  }
  return swap_depth(s, reshape(s, *y, {out[0], out[1], out[3], depth, batch}));
}

Var conv3d_backward_input(OpSink& s, Var dy, Var w, const std::vector<int64_t>& shape,
                          const Conv3dAttrs& a) {
  checked("conv3d_backward_input", [&] {
    Type x = shape_attr_type(s.type(dy).dtype, shape, 5);
    Shape expected = conv_output(x, s.type(w), a);
    if (s.type(dy).shape != expected) {
      user_error("dy {} must have shape {}, the output of conv3d for x {} and w {}",
                 type_str(s.type(dy)), shape_str(expected), shape_str(shape),
                 shape_str(s.type(w).shape));
    }
  });
  Shape ds = s.type(dy).shape;
  int64_t depth = ds[kDepth], batch = ds[4], stride = a.stride[kDepth];
  int64_t padded = shape[kDepth] + a.pad[4] + a.pad[5];
  Var planes = reshape(s, swap_depth(s, dy), {ds[0], ds[1], ds[3], depth * batch});
  AttrsOf<Prim::conv2d_backward_input> a2{.shape = {shape[0], shape[1], shape[3], depth * batch},
                                          .stride = {a.stride[0], a.stride[1]},
                                          .pad = {a.pad[0], a.pad[1], a.pad[2], a.pad[3]},
                                          .dilation = {a.dilation[0], a.dilation[1]},
                                          .groups = a.groups};
  std::optional<Var> y;
  for (int64_t t = 0; t < s.type(w).shape[kDepth]; ++t) {
    Var u = s.op<Prim::conv2d_backward_input>({planes, depth_tap(s, w, t)}, a2);
    u = reshape(s, u, {shape[0], shape[1], shape[3], depth, batch});
    // conv3d read its slice j of tap t at padded depth first + j * stride.
    int64_t first = t * a.dilation[kDepth];
    u = pad(s, u, 3, first, padded - first - (depth - 1) * stride - 1, stride - 1);
    y = accumulate(s, Prim::add, y, u);
  }
  return swap_depth(s, slice(s, *y, 3, a.pad[4], shape[kDepth], 1));
}

Var max_pool3d(OpSink& s, Var x, const Pool3dAttrs& a) {
  return pool3d<Prim::max_pool2d, Prim::max>(s, x, a, "max_pool3d");
}

Var avg_pool3d(OpSink& s, Var x, const Pool3dAttrs& a) {
  return pool3d<Prim::avg_pool2d, Prim::add>(s, x, a, "avg_pool3d");
}

}  // namespace ytape
