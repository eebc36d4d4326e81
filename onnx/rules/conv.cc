// Conv and ConvTranspose. ONNX's NCHW images and (M, C/group, kH, kW) weights are the
// tape's WHCN images and (kw, kh, cin/groups, cout) weights as they are; only the
// attributes are reordered (spatial.h). ConvTranspose is the gradient of a convolution
// with respect to its input, whose weights (C, M/group, kH, kW) read the same way. Over
// NCDHW volumes both are composed of the 2-d primitives (tape/spatial3d.h).
#include <algorithm>

#include "onnx/rules/spatial.h"
#include "tape/checked.h"

namespace ytape::onnx_import {

Window window_of(const Node& node, const Shape& in, const std::vector<int64_t>& kernel) {
  size_t k = in.size();
  if (k < 1 || k > 3)
    unsupported(fmt::format("{} with {} spatial dims (ytape has 1 to 3)", node.op_type(), k));
  std::vector<int64_t> ones(k, 1), stride = attr_ints(node, "strides", ones),
                                   dilation = attr_ints(node, "dilations", ones),
                                   pads = attr_ints(node, "pads", std::vector<int64_t>(2 * k, 0));
  if (kernel.size() != k || stride.size() != k || dilation.size() != k || pads.size() != 2 * k) {
    user_error("kernel_shape, strides, dilations or pads do not have one entry per spatial dim");
  }
  // Each at most 2^48, as any size, and the dilated kernel too: the sums and products of
  // them below (and in the pooling and ConvTranspose rules) cannot overflow.
  auto in_range = [](int64_t v, int64_t lo) { return v >= lo && v <= kMaxElements; };
  for (size_t i = 0; i < k; ++i) {
    if (!in_range(kernel[i], 1) || !in_range(stride[i], 1) || !in_range(dilation[i], 1) ||
        !in_range(pads[i], 0) || !in_range(pads[i + k], 0) ||
        (kernel[i] - 1) > kMaxElements / dilation[i]) {
      user_error(
          "kernel_shape {}, strides {}, dilations {}, pads {}: sizes, strides and "
          "dilations are 1 to 2^48, pads 0 to 2^48, and a dilated kernel at most 2^48",
          shape_str(kernel), shape_str(stride), shape_str(dilation), shape_str(pads));
    }
  }
  // The window's area too, which kernels multiply out (an average's divisor).
  checked::elements(kernel, "kernel_shape's window");
  std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  for (size_t i = 0; i < k; ++i) {
    if (auto_pad == "VALID") {
      pads[i] = pads[i + k] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (in[i] + stride[i] - 1) / stride[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - in[i]);
      int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + k] = total - pads[i];
    } else if (auto_pad != "NOTSET") {
      user_error("auto_pad '{}' is none of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
    }
  }
  // ONNX lists the spatial dims outermost first (D, H, W), the primitives w first.
  if (k == 1) return {{kernel[0], 1}, {stride[0], 1}, {dilation[0], 1}, {pads[0], pads[1], 0, 0}};
  Window win;
  for (size_t i = k; i-- > 0;) {
    win.kernel.push_back(kernel[i]);
    win.stride.push_back(stride[i]);
    win.dilation.push_back(dilation[i]);
    win.pad.insert(win.pad.end(), {pads[i], pads[i + k]});
  }
  return win;
}

void check_depth_taps(const Node& node, int64_t depth) {
  if (depth > kMaxTaps) {
    unsupported(fmt::format("a 3-d {} of a kernel or window {} deep (ytape's are at most {})",
                            node.op_type(), depth, kMaxTaps));
  }
}

Shape spatial_of(const Node& node, const Shape& onnx_shape) {
  if (onnx_shape.size() < 3) {
    user_error("{} takes images (N, C, spatial...) and weights (M, C, kernel...); one has rank {}",
               node.op_type(), onnx_shape.size());
  }
  return Shape(onnx_shape.begin() + 2, onnx_shape.end());
}

Var as_image(Importer& im, Var x) {
  Shape s = im.type(x).shape;
  if (s.size() == 3) return im.reshape(x, {s[0], 1, s[1], s[2]});
  if (s.size() != 4 && s.size() != 5)
    unsupported(fmt::format("an input of rank {} (ytape has 1-d to 3-d images)", s.size()));
  return x;
}

Var from_image(Importer& im, Var y, int rank) {
  Shape s = im.type(y).shape;
  return rank == 3 ? im.reshape(y, {s[0], s[2], s[3]}) : y;
}

Var add_channel_bias(Importer& im, Var y, Var bias) {
  Shape s(static_cast<size_t>(im.rank(y)), 1);
  s[s.size() - 2] = im.type(bias).size();
  return im.op<Prim::add>({y, im.reshape(bias, s)});
}

Var convolve(Importer& im, const Node& n, Var x, Var w) {
  int rank = im.rank(x);
  Shape ws = im.onnx_shape(w);
  std::vector<int64_t> kernel = attr_ints(n, "kernel_shape", spatial_of(n, ws));
  Shape xs = im.onnx_shape(x);
  Window win = window_of(n, spatial_of(n, xs), kernel);
  int64_t groups = attr_int(n, "group", 1);
  if (rank == 5) {
    check_depth_taps(n, ws[2]);
    ImporterSink s(im);
    return conv3d(s, x, w, {win.stride, win.pad, win.dilation, groups});
  }
  Var y = im.op<Prim::conv2d>(
      {as_image(im, x), as_image(im, w)},
      {.stride = win.stride, .pad = win.pad, .dilation = win.dilation, .groups = groups});
  return from_image(im, y, rank);
}

namespace {

// y + bias per output channel, where input `bias_input` is given.
Var add_bias(Importer& im, const Node& n, Var y, int bias_input) {
  return im.has_input(n, bias_input) ? add_channel_bias(im, y, im.input(n, bias_input)) : y;
}

void conv(Importer& im, const Node& n) {
  im.set_output(n, 0, add_bias(im, n, convolve(im, n, im.input(n, 0), im.input(n, 1)), 2));
}

// The output size along one dim: given, or stride * (in - 1) + output_padding +
// ((kernel - 1) * dilation + 1) - pads.
// The pads of a ConvTranspose whose output_shape is given, or implied by auto_pad SAME_*
// (the input's size times the stride), as ONNX defines them: the total stride (in - 1) +
// output_padding + (kernel - 1) dilation + 1 - out, its larger half at the end for
// SAME_UPPER, at the start otherwise (halves floored, as ONNX's reference does). A negative
// pad at the end extends the output there, as output_padding does. `in` is ONNX's spatial
// sizes; `extra` (output_padding) and `win` are the primitives' [w, h, d] lists.
// The unpadded output size of a ConvTranspose along the primitives' dim `j`, of an input
// of `in`: stride (in - 1) + output_padding + (kernel - 1) dilation + 1, each term at most
// 2^48 (window_of; output_padding checked by the caller).
int64_t transposed_size(const Window& win, const std::vector<int64_t>& extra, size_t j,
                        int64_t in) {
  int64_t spread = checked::mul(win.stride[j], in - 1, "the output's size");
  return checked::add(spread, extra[j] + (win.kernel[j] - 1) * win.dilation[j] + 1,
                      "the output's size");
}

void transposed_pads(const Node& n, const Shape& in, std::vector<int64_t>& extra, Window& win) {
  std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!find_attr(n, "output_shape") && !same) return;
  size_t k = in.size();
  std::vector<int64_t> out = attr_ints(n, "output_shape");
  if (out.size() == k + 2) out.erase(out.begin(), out.begin() + 2);
  if (!find_attr(n, "output_shape")) {
    for (size_t i = 0; i < k; ++i)
      out.push_back(checked::count_mul(in[i], win.stride[k - 1 - i], "the output's size"));
  }
  if (out.size() != k) user_error("output_shape does not have one entry per spatial dim");
  for (size_t i = 0; i < k; ++i) {
    size_t j = k - 1 - i;  // the primitives' order
    checked::count(out[i], "output_shape");
    int64_t total = transposed_size(win, extra, j, in[i]) - out[i];
    int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2)
    int64_t lo = auto_pad == "SAME_UPPER" ? half : total - half, hi = total - lo;
    if (lo < 0 || extra[j] - std::min<int64_t>(hi, 0) >= win.stride[j])
      unsupported("a ConvTranspose's output_shape beyond what its windows reach");
    win.pad[2 * j] = lo;
    win.pad[2 * j + 1] = std::max<int64_t>(hi, 0);
    extra[j] -= std::min<int64_t>(hi, 0);
  }
}

void conv_transpose(Importer& im, const Node& n) {
  Var x = im.input(n, 0), w = im.input(n, 1);
  int rank = im.rank(x);
  Shape xs = im.onnx_shape(x), ws = im.onnx_shape(w);
  size_t k = spatial_of(n, xs).size();
  std::vector<int64_t> kernel = attr_ints(n, "kernel_shape", spatial_of(n, ws));
  Window win = window_of(n, spatial_of(n, xs), kernel);
  std::vector<int64_t> extra = attr_ints(n, "output_padding", std::vector<int64_t>(k, 0));
  if (extra.size() != k) user_error("output_padding does not have one entry per spatial dim");
  for (int64_t e : extra) checked::count(e, "output_padding");
  std::reverse(extra.begin(), extra.end());  // [w, h, d]
  if (k == 1) extra.push_back(0);
  transposed_pads(n, spatial_of(n, xs), extra, win);
  int64_t groups = attr_int(n, "group", 1);
  Var image = as_image(im, x);
  Shape is = im.type(image).shape;
  Shape out = is;
  out[out.size() - 2] = checked::count_mul(ws[1], groups, "the output's channels (group)");
  for (size_t d = 0; d + 2 < out.size(); ++d)
    out[d] = transposed_size(win, extra, d, is[d]) - win.pad[2 * d] - win.pad[2 * d + 1];
  // The convolution that maps an input of `out` to x has the same pads: output_padding
  // (less than the stride) adds positions no window of it reads, whose gradient is 0.
  Var y;
  if (rank == 5) {
    check_depth_taps(n, ws[2]);
    ImporterSink s(im);
    y = conv3d_backward_input(s, image, w, out, {win.stride, win.pad, win.dilation, groups});
  } else {
    y = im.op<Prim::conv2d_backward_input>({image, as_image(im, w)}, {.shape = out,
                                                                      .stride = win.stride,
                                                                      .pad = win.pad,
                                                                      .dilation = win.dilation,
                                                                      .groups = groups});
  }
  im.set_output(n, 0, from_image(im, add_bias(im, n, y, 2), rank));
}

// ConvTranspose-1 differs from -11 only where auto_pad is SAME_*, whose padding ONNX then
// derived from the input's size modulo the stride.
void conv_transpose_1(Importer& im, const Node& n) {
  std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
    unsupported("ConvTranspose-1 with auto_pad " + auto_pad);
  conv_transpose(im, n);
}

}  // namespace

void add_conv_rules(Rules& r) {
  r["Conv"] = conv;
  r["ConvTranspose"] = conv_transpose;
  r["ConvTranspose-1"] = conv_transpose_1;
}

}  // namespace ytape::onnx_import
