// Pooling: MaxPool, AveragePool and the global forms, over 1-d and 2-d images and 3-d
// volumes (composed of 2-d pools, tape/spatial3d.h).
#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "onnx/rules/integer.h"
#include "onnx/rules/spatial.h"

namespace ytape::onnx_import {

namespace {

// The window of a pooling node on `image` (ytape (W, H, C, N)); with ceil_mode the high
// pads grow so that the floor of the primitives' size formula gives ONNX's ceiling.
Window pool_window(Importer& im, const Node& n, Var x, Var image) {
  Shape xs = im.onnx_shape(x);
  Window win = window_of(n, spatial_of(n, xs), attr_ints(n, "kernel_shape"));
  bool dilated =
      std::any_of(win.dilation.begin(), win.dilation.end(), [](int64_t d) { return d != 1; });
  if (dilated && (n.op_type() != "MaxPool" || im.rank(x) == 5))
    unsupported(n.op_type() + "'s dilations" + (im.rank(x) == 5 ? " over 3 spatial dims" : ""));
  if (attr_int(n, "ceil_mode", 0) != 0) {
    for (size_t d = 0; d < win.kernel.size(); ++d) {
      int64_t size = im.type(image).shape[d], lo = win.pad[2 * d], &hi = win.pad[2 * d + 1];
      int64_t reach = (win.kernel[d] - 1) * win.dilation[d] + 1;
      int64_t span = size + lo + hi - reach;
      int64_t out = (span + win.stride[d] - 1) / win.stride[d] + 1;
      if ((out - 1) * win.stride[d] >= size + lo) --out;  // no window may start in the padding
      hi = std::max(hi, (out - 1) * win.stride[d] + reach - size - lo);
    }
  }
  if (im.rank(x) == 5) check_depth_taps(n, win.kernel[2]);
  return win;
}

// The indices, when asked for, count over the whole tensor, row-major: ((n C + c) H + h) W
// + w; the primitive's within the plane, 1-based. Adding (n C + c) H W - 1 turns one into
// the other. Returns the values, and the indices when the node names them.
// With dilations (no primitive has them): the elementwise max over the kernel's taps, each
// a strided slice of the image padded with the lowest value.
Var dilated_max_pool(Importer& im, Var image, const Window& w) {
  DType d = im.type(image).dtype;
  double lowest = d == DType::f32 ? std::numeric_limits<float>::lowest()
                                  : std::numeric_limits<double>::lowest();
  if (w.kernel[0] > kMaxTaps / w.kernel[1])
    unsupported(fmt::format("a dilated MaxPool of more than {} taps", kMaxTaps));
  Var padded = im.pad(im.pad(image, 1, w.pad[0], w.pad[1], lowest), 2, w.pad[2], w.pad[3], lowest);
  Shape s = im.type(padded).shape;
  std::array<int64_t, 2> out{};
  for (int k = 0; k < 2; ++k) {
    out[k] = (s[k] - (w.kernel[k] - 1) * w.dilation[k] - 1) / w.stride[k] + 1;
    if (out[k] < 1) user_error("the window is larger than the padded input");
  }
  std::optional<Var> y;
  for (int64_t b = 0; b < w.kernel[1]; ++b) {
    Var rows = im.slice(padded, 2, b * w.dilation[1], out[1], w.stride[1]);
    for (int64_t a = 0; a < w.kernel[0]; ++a) {
      Var tap = im.slice(rows, 1, a * w.dilation[0], out[0], w.stride[0]);
      y = y ? im.op<Prim::max>({*y, tap}) : tap;
    }
  }
  return *y;
}

std::pair<Var, std::optional<Var>> pool_max(Importer& im, const Node& n, Var x) {
  Var image = as_image(im, x);
  Window w = pool_window(im, n, x, image);
  bool indices = n.output_size() >= 2 && !n.output(1).empty();
  if (std::any_of(w.dilation.begin(), w.dilation.end(), [](int64_t d) { return d != 1; })) {
    if (indices) unsupported("MaxPool's indices with dilations");
    return {from_image(im, dilated_max_pool(im, image, w), im.rank(x)), std::nullopt};
  }
  AttrsOf<Prim::max_pool2d> a{.window = w.kernel, .stride = w.stride, .pad = w.pad};
  if (im.rank(x) == 5) {
    if (indices) unsupported("MaxPool's indices over 3 spatial dims");
    ImporterSink s(im);
    return {max_pool3d(s, x, {w.kernel, w.stride, w.pad}), std::nullopt};
  }
  if (!indices) return {from_image(im, im.op<Prim::max_pool2d>({image}, a), im.rank(x)), {}};
  std::vector<Var> y = im.emit_all(Prim::max_pool2d_with_indices, {image}, a.to_attrs());
  Shape s = im.type(image).shape;
  Tensor offsets = im.listed_tensor(Type{DType::i64, {1, 1, s[2], s[3]}}, "the indices' offsets");
  for (int64_t k = 0; k < offsets.size(); ++k) offsets.data<int64_t>()[k] = k * s[0] * s[1] - 1;
  Var idx = y[1];
  // storage_order 1 counts within the plane column-major, h + w H: from w + h W + 1.
  if (attr_int(n, "storage_order", 0) != 0) {
    Var at = im.op<Prim::sub>({idx, im.scalar(DType::i64, 1)}), width = im.scalar(DType::i64, s[0]);
    Var w_at = integer_mod(im, at, width, false), h_at = integer_div(im, at, width);
    Var column = im.op<Prim::mul>({w_at, im.scalar(DType::i64, static_cast<double>(s[1]))});
    idx = im.op<Prim::add>({im.op<Prim::add>({column, h_at}), im.scalar(DType::i64, 1)});
  }
  idx = im.op<Prim::add>({idx, im.constant(offsets)});
  return {from_image(im, y[0], im.rank(x)), from_image(im, idx, im.rank(x))};
}

// ONNX pools int8 and uint8 too (from opset 12), which the tape holds as i64 and the
// primitive pools as floats: as f64 and back, exact for every value those types hold.
void max_pool(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  bool ints = im.type(x).dtype == DType::i64;
  if (ints) x = im.op<Prim::convert>({x}, {.dtype = DType::f64});
  auto [y, indices] = pool_max(im, n, x);
  if (ints) y = im.op<Prim::convert>({y}, {.dtype = DType::i64});
  im.set_output(n, 0, y);
  if (indices) im.set_output(n, 1, *indices);
}

// Without count_include_pad the divisor counts only the input's elements in the window:
// the average of x over the average of ones (a constant, folded at import).
void average_pool(Importer& im, const Node& n) {
  Var x = im.input(n, 0), image = as_image(im, x);
  Window w = pool_window(im, n, x, image);
  ImporterSink sink(im);
  auto pool = [&](Var v) {
    if (im.rank(v) == 5) return avg_pool3d(sink, v, {w.kernel, w.stride, w.pad});
    return im.op<Prim::avg_pool2d>({v}, {.window = w.kernel, .stride = w.stride, .pad = w.pad});
  };
  Var y = pool(image);
  bool padded = std::any_of(w.pad.begin(), w.pad.end(), [](int64_t p) { return p != 0; });
  bool include = attr_int(n, "count_include_pad", 0) != 0;
  if (include && attr_int(n, "ceil_mode", 0) != 0) {
    unsupported("AveragePool with both ceil_mode and count_include_pad");
  }
  if (padded && !include) {
    Shape s = im.type(image).shape;
    s[s.size() - 2] = s[s.size() - 1] = 1;
    Var ones = im.op<Prim::fill>({}, {.value = 1, .dtype = im.type(x).dtype, .shape = s});
    y = im.op<Prim::div>({y, pool(ones)});
  }
  im.set_output(n, 0, from_image(im, y, im.rank(x)));
}

// Over all spatial dims, which stay as size 1.
template <Prim P>
void global_pool(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.type(x).shape;
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int d = 1; d + 2 <= static_cast<int>(s.size()); ++d) {
    dims.push_back(d);
    count *= s[d - 1];
    s[d - 1] = 1;
  }
  Var y = im.emit(P, {x}, AttrsOf<Prim::sum>{.dims = dims}.to_attrs());
  if (P == Prim::sum)
    y = im.op<Prim::div>({y, im.scalar(im.type(x).dtype, static_cast<double>(count))});
  im.set_output(n, 0, im.reshape(y, s));
}

// The inverse of MaxPool with indices: zeros of the shape the window gives ((in - 1) stride
// + kernel - pads), each x added where its index points, then padded at the end to the
// output_shape input (static) if there is one. The indices count over the whole tensor,
// row-major, the order of the tape's elements too: one scatter over flattened tensors.
Shape unpooled_shape(const Node& n, const Shape& xs) {
  size_t spatial = spatial_of(n, xs).size();
  std::vector<int64_t> k = attr_ints(n, "kernel_shape"),
                       s = attr_ints(n, "strides", std::vector<int64_t>(spatial, 1)),
                       p = attr_ints(n, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (k.size() != spatial || s.size() != spatial || p.size() != 2 * spatial) {
    user_error("kernel_shape, strides or pads do not have one entry per spatial dim");
  }
  Shape out = {xs[0], xs[1]};
  for (size_t d = 0; d < spatial; ++d) {
    int64_t lo = p[d], hi = p[d + spatial], steps = xs[2 + d] - 1;
    if (k[d] < 1 || s[d] < 1 || k[d] > kMaxElements || (steps > 0 && s[d] > kMaxElements / steps) ||
        lo < 0 || hi < 0 || lo > kMaxElements || hi > kMaxElements) {
      user_error("kernel_shape {}, strides {}, pads {}: out of range", shape_str(k), shape_str(s),
                 shape_str(p));
    }
    out.push_back((xs[2 + d] - 1) * s[d] + k[d] - p[d] - p[d + spatial]);
  }
  if (std::string why = shape_problem(out); !why.empty()) user_error("the unpooled shape: {}", why);
  return out;
}

void max_unpool(Importer& im, const Node& n) {
  Var x = im.input(n, 0), idx = im.input(n, 1);
  if (im.type(idx).dtype != DType::i64) user_error("the indices must be int64");
  Shape out = unpooled_shape(n, im.onnx_shape(x));
  int64_t total = num_elements(out), count = im.type(x).size();
  Var at = im.op<Prim::add>({im.reshape(idx, {count}), im.scalar(DType::i64, 1)});
  Var y = im.op<Prim::scatter_add>({im.reshape(x, {count}), at}, {.dim = 1, .size = total});
  y = im.reshape(y, reversed(out));
  if (!im.has_input(n, 2)) return im.set_output(n, 0, y);
  Shape want = reversed(im.static_ints(n, 2)), have = im.type(y).shape;
  if (want.size() != have.size())
    user_error("output_shape has rank {}, not {}", want.size(), have.size());
  std::vector<int64_t> zeros(have.size(), 0), hi(have.size());
  for (size_t d = 0; d < have.size(); ++d) {
    if (want[d] < have[d]) user_error("output_shape is smaller than the unpooled shape");
    hi[d] = want[d] - have[d];
  }
  im.set_output(n, 0, im.op<Prim::pad>({y}, {.lo = zeros, .hi = hi, .interior = zeros}));
}

}  // namespace

void add_pool_rules(Rules& r) {
  r["MaxUnpool"] = max_unpool;
  r["MaxPool"] = max_pool;
  r["AveragePool"] = average_pool;
  r["GlobalAveragePool"] = global_pool<Prim::sum>;
  r["GlobalMaxPool"] = global_pool<Prim::maximum>;
}

}  // namespace ytape::onnx_import
