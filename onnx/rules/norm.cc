// Normalization. BatchNormalization in training form is the `batchnorm` primitive (batch
// statistics over all dims but the channel, the tape's second to last); its inference form,
// and instance and layer normalization, are elementwise ops over reductions.
#include <algorithm>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// A per-channel vector (C,) shaped to broadcast along the channel dim of a rank-r tensor.
Var per_channel(Importer& im, Var v, int r) {
  if (r < 2) user_error("the input has rank {}; it needs a channel dim", r);
  Shape s(r, 1);
  s[r - 2] = im.type(v).size();
  return im.reshape(v, s);
}

Var scalar_like(Importer& im, Var x, double v) {
  return im.scalar(im.type(x).dtype, v);
}

// (x - mean) / sqrt(var + eps) over the dims `dims` of x (kept as size 1), and the mean
// and 1 / sqrt(var + eps) it used.
struct Normalized {
  Var y, mean, var, invstd;
};
Normalized normalize(Importer& im, Var x, const std::vector<int64_t>& dims, double eps) {
  Shape kept = im.type(x).shape;
  int64_t count = 1;
  for (int64_t d : dims) count *= kept[d - 1], kept[d - 1] = 1;
  Var m = scalar_like(im, x, static_cast<double>(count));
  Var mean = im.reshape(im.op<Prim::div>({im.op<Prim::sum>({x}, {.dims = dims}), m}), kept);
  Var centered = im.op<Prim::sub>({x, mean});
  Var sq = im.op<Prim::mul>({centered, centered});
  Var var = im.reshape(im.op<Prim::div>({im.op<Prim::sum>({sq}, {.dims = dims}), m}), kept);
  Var stddev = im.op<Prim::sqrt>({im.op<Prim::add>({var, scalar_like(im, x, eps)})});
  Var invstd = im.op<Prim::div>({scalar_like(im, x, 1), stddev});
  return {im.op<Prim::div>({centered, stddev}), mean, var, invstd};
}

// running * momentum + current * (1 - momentum)
Var running(Importer& im, Var old, Var current, double momentum) {
  Var kept = im.op<Prim::mul>({old, scalar_like(im, old, momentum)});
  return im.op<Prim::add>({kept, im.op<Prim::mul>({current, scalar_like(im, old, 1 - momentum)})});
}

// Training form: y from the batch statistics; then the running mean and (biased) variance.
void batch_norm_training(Importer& im, const Node& n, double eps) {
  Var x = im.input(n, 0), scale = im.input(n, 1), bias = im.input(n, 2);
  int r = im.rank(x);
  if (r < 2) user_error("the input has rank {}; it needs a channel dim", r);
  im.set_output(n, 0, im.op<Prim::batchnorm>({x, scale, bias}, {.eps = eps}));
  if (n.output_size() < 2) return;
  std::vector<int64_t> dims;
  for (int d = 1; d <= r; ++d) {
    if (d != r - 1) dims.push_back(d);
  }
  Normalized s = normalize(im, x, dims, eps);
  Shape c{im.type(scale).size()};
  double momentum = attr_float(n, "momentum", 0.9);
  im.set_output(n, 1, running(im, im.input(n, 3), im.reshape(s.mean, c), momentum));
  im.set_output(n, 2, running(im, im.input(n, 4), im.reshape(s.var, c), momentum));
}

// Inference form: (x - mean) / sqrt(var + eps) * scale + bias, with the given statistics.
void batch_norm(Importer& im, const Node& n) {
  double eps = attr_float(n, "epsilon", 1e-5);
  if (attr_int(n, "training_mode", 0) != 0) return batch_norm_training(im, n, eps);
  Var x = im.input(n, 0);
  int r = im.rank(x);
  auto c = [&](int i) { return per_channel(im, im.input(n, i), r); };
  Var stddev = im.op<Prim::sqrt>({im.op<Prim::add>({c(4), scalar_like(im, x, eps)})});
  Var y = im.op<Prim::div>({im.op<Prim::sub>({x, c(3)}), stddev});
  im.set_output(n, 0, im.op<Prim::add>({im.op<Prim::mul>({y, c(1)}), c(2)}));
}

// Over each image's spatial dims: the tape's dims 1 .. r-2.
void instance_norm(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  std::vector<int64_t> dims;
  for (int d = 1; d <= r - 2; ++d) dims.push_back(d);
  Normalized s = normalize(im, x, dims, attr_float(n, "epsilon", 1e-5));
  Var y = im.op<Prim::mul>({s.y, per_channel(im, im.input(n, 1), r)});
  im.set_output(n, 0, im.op<Prim::add>({y, per_channel(im, im.input(n, 2), r)}));
}

// Over ONNX axes axis .. r-1: the tape's dims 1 .. r - axis. Scale and bias have the shape
// of those dims and broadcast as they are.
void layer_norm(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  if (attr_int(n, "stash_type", 1) != 1)
    unsupported("LayerNormalization's stash_type other than 1");
  std::vector<int64_t> dims;
  for (int d = 1; d <= ydim(attr_int(n, "axis", -1), r); ++d) dims.push_back(d);
  Normalized s = normalize(im, x, dims, attr_float(n, "epsilon", 1e-5));
  Var y = im.op<Prim::mul>({s.y, im.input(n, 1)});
  if (im.has_input(n, 2)) y = im.op<Prim::add>({y, im.input(n, 2)});
  im.set_output(n, 0, y);
  im.set_output(n, 1, s.mean);
  im.set_output(n, 2, s.invstd);
}

// (x - E[x]) / (sqrt(E[(x - E[x])^2]) + 1e-9) over ONNX axes `axes` (default N, H, W).
void mean_variance_norm(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  std::vector<int64_t> dims;
  for (int64_t a : attr_ints(n, "axes", {0, 2, 3})) dims.push_back(ydim(a, r));
  std::sort(dims.begin(), dims.end());
  Normalized s = normalize(im, x, dims, 0);
  Var stddev = im.op<Prim::add>({im.op<Prim::sqrt>({s.var}), scalar_like(im, x, 1e-9)});
  im.set_output(n, 0, im.op<Prim::div>({im.op<Prim::sub>({x, s.mean}), stddev}));
}

// x / (bias + alpha / size * Σ x^2)^beta, the sum over the `size` channels around each one
// (floor((size - 1) / 2) before it, the rest after): the squares padded with zeros along the
// channel dim, then `size` shifted slices added.
void local_response_norm(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  if (r < 3) user_error("the input has rank {}; LRN needs (N, C, D1, ...)", r);
  int64_t size = attr_int(n, "size", 0), c = r - 1;
  if (size < 1) user_error("LRN's size must be positive, got {}", size);
  // A copy: the builder's types move as ops are added. Channels beyond the data add zeros,
  // so the window is cut to at most C - 1 channels on each side.
  const Shape shape = im.type(x).shape;
  int64_t channels = shape[c - 1];
  if (channels == 0) return im.set_output(n, 0, x);  // nothing to normalize
  int64_t before = std::min((size - 1) / 2, channels - 1);
  int64_t after = std::min(size - 1 - (size - 1) / 2, channels - 1);
  if (before + after >= kMaxTaps)
    unsupported(fmt::format("an LRN window of more than {} channels", kMaxTaps));
  std::vector<int64_t> lo(r, 0), hi(r, 0), none(r, 0);
  lo[c - 1] = before, hi[c - 1] = after;
  Var padded = im.op<Prim::pad>({im.op<Prim::mul>({x, x})},
                                {.lo = lo, .hi = hi, .interior = none, .value = 0});
  Var sum;
  for (int64_t j = 0; j <= before + after; ++j) {
    std::vector<int64_t> start(r, 1), stop(shape.begin(), shape.end()), step(r, 1);
    start[c - 1] = 1 + j, stop[c - 1] = channels + j;
    Var part = im.op<Prim::slice>({padded}, {.start = start, .stop = stop, .step = step});
    sum = j == 0 ? part : im.op<Prim::add>({sum, part});
  }
  double alpha = attr_float(n, "alpha", 1e-4), beta = attr_float(n, "beta", 0.75);
  Var base = im.op<Prim::add>({scalar_like(im, x, attr_float(n, "bias", 1)),
                               im.op<Prim::mul>({sum, scalar_like(im, x, alpha / size)})});
  im.set_output(n, 0, im.op<Prim::div>({x, im.op<Prim::pow>({base, scalar_like(im, x, beta)})}));
}

}  // namespace

void add_norm_rules(Rules& r) {
  r["LRN"] = local_response_norm;
  r["MeanVarianceNormalization"] = mean_variance_norm;
  r["BatchNormalization"] = batch_norm;
  r["InstanceNormalization"] = instance_norm;
  r["LayerNormalization"] = layer_norm;
}

}  // namespace ytape::onnx_import
