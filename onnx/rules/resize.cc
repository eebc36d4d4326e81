// Resize in its nearest, linear and cubic modes, with static scales or sizes: one ONNX axis
// at a time, from the last (as ONNX's reference interpolates, the first axis last), each a
// gather of the static source positions along the tape's dim, and for linear and cubic a
// weighted sum of two or four with static weights.
//
// Output position x of an axis of `in` elements maps to the source coordinate c that
// coordinate_transformation_mode gives; its neighbours are x0 = ceil(c) - 1 and x0 + 1, cut
// to the axis (ONNX's edge padding), with ratio c - x0 in (0, 1]: linear takes
// (1 - ratio) at x0 and ratio at x0 + 1; nearest one of the two as nearest_mode says; cubic
// x0 - 1 to x0 + 2 with Keys' weights of cubic_coeff_a, those outside the axis set to 0 and
// the rest scaled to sum to 1 with exclude_outside.
#include <algorithm>
#include <array>
#include <cmath>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// The plans below hold a few numbers per output position, each list of them one of the
// importer's (kMaxListed): bounded so that a bad scale is an error before it is planned.
constexpr int64_t kMaxAxis = kMaxListed;

struct AxisPlan {
  std::vector<int64_t> lo, hi;  // 0-based neighbours, per output position
  std::vector<int64_t> x0;      // lo before it is cut to the axis
  std::vector<double> ratio;    // weight of hi
  std::vector<bool> outside;    // tf_crop_and_resize: the extrapolation value instead
};

struct Transform {
  std::string mode;
  double roi_lo = 0, roi_hi = 1;
};

// The source coordinate of output position x; `out_len` is scale * in, not rounded, as in
// ONNX's reference.
double source(const Transform& t, int64_t x, int64_t in, double scale, bool* outside) {
  double out_len = scale * static_cast<double>(in), xd = static_cast<double>(x);
  auto last = static_cast<double>(in - 1);
  if (t.mode == "half_pixel") return (xd + 0.5) / scale - 0.5;
  if (t.mode == "pytorch_half_pixel") return out_len == 1 ? -0.5 : (xd + 0.5) / scale - 0.5;
  if (t.mode == "align_corners") return out_len == 1 ? 0 : xd * last / (out_len - 1);
  if (t.mode == "asymmetric") return xd / scale;
  if (t.mode == "tf_half_pixel_for_nn") return (xd + 0.5) / scale;
  if (t.mode == "tf_crop_and_resize") {
    double span = t.roi_hi - t.roi_lo;
    double c = out_len == 1 ? span * last / 2 : xd * span * last / (out_len - 1);
    c += t.roi_lo * last;
    *outside = c < 0 || c > last;
    return c;
  }
  unsupported("Resize with coordinate_transformation_mode '" + t.mode + "'");
}

AxisPlan plan_axis(const Transform& t, int64_t in, int64_t out, double scale) {
  AxisPlan p;
  for (int64_t x = 0; x < out; ++x) {
    bool outside = false;
    double c = source(t, x, in, scale, &outside);
    if (!std::isfinite(c) || std::abs(c) > 1e15)
      user_error("scale {} maps outside any axis", scale);
    double x0 = std::ceil(c) - 1;
    p.x0.push_back(static_cast<int64_t>(x0));
    p.lo.push_back(std::clamp<int64_t>(static_cast<int64_t>(x0), 0, in - 1));
    p.hi.push_back(std::clamp<int64_t>(static_cast<int64_t>(x0) + 1, 0, in - 1));
    p.ratio.push_back(c - x0);
    p.outside.push_back(outside);
  }
  return p;
}

// Whether nearest mode `mode` takes the higher neighbour at `ratio` (in (0, 1]).
bool nearest_takes_hi(const std::string& mode, double ratio) {
  if (ratio == 1) return true;
  if (mode == "round_prefer_floor") return ratio > 0.5;
  if (mode == "round_prefer_ceil") return ratio >= 0.5;
  if (mode == "floor") return false;
  if (mode == "ceil") return true;
  unsupported("Resize with nearest_mode '" + mode + "'");
}

// A tensor of `x`'s rank, `values` along `dim` and size 1 elsewhere.
template <typename T>
Tensor along(const Importer& im, DType dtype, int rank, int dim, const std::vector<T>& values) {
  Shape s(rank, 1);
  s[dim - 1] = static_cast<int64_t>(values.size());
  Tensor t = im.listed_tensor(Type{dtype, s}, "Resize's positions or weights along an axis");
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32) t.data<float>()[i] = static_cast<float>(values[i]);
    if (dtype == DType::f64) t.data<double>()[i] = static_cast<double>(values[i]);
    if (dtype == DType::i64) t.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
    if (dtype == DType::boolean) t.data<bool>()[i] = static_cast<bool>(values[i]);
  }
  return t;
}

Var gather_at(Importer& im, Var x, int dim, const std::vector<int64_t>& at) {
  std::vector<int64_t> one_based;
  for (int64_t i : at) one_based.push_back(i + 1);
  Tensor idx = along(im, DType::i64, im.rank(x), dim, one_based);
  return im.op<Prim::gather>({x, im.constant(idx)}, {.dim = dim});
}

struct Options {
  std::string mode, nearest_mode;
  double extrapolation = 0, cubic_a = -0.75;
  bool exclude_outside = false;
};

// Keys' cubic convolution weights of the neighbours x0 - 1 .. x0 + 2 at `ratio` (ONNX's
// reference's cubic_coeffs), with parameter a.
std::array<double, 4> cubic_weights(double ratio, double a) {
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // |t| <= 1
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < |t| < 2
  return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
}

// The weighted sum over k of the neighbours x0 - 1 + k (cut to the axis) with Keys' weights.
Var cubic_axis(Importer& im, Var x, int dim, const AxisPlan& p, const Options& o, int64_t in) {
  DType d = im.type(x).dtype;
  std::array<std::vector<int64_t>, 4> at;
  std::array<std::vector<double>, 4> weight;
  for (size_t i = 0; i < p.x0.size(); ++i) {
    std::array<double, 4> w = cubic_weights(p.ratio[i], o.cubic_a);
    double total = 0;
    for (int k = 0; k < 4; ++k) {
      int64_t j = p.x0[i] - 1 + k;
      if (o.exclude_outside && (j < 0 || j >= in)) w[k] = 0;
      total += w[k];
      at[k].push_back(std::clamp<int64_t>(j, 0, in - 1));
    }
    for (int k = 0; k < 4; ++k) weight[k].push_back(o.exclude_outside ? w[k] / total : w[k]);
  }
  Var y;
  for (int k = 0; k < 4; ++k) {
    Var w = im.constant(along(im, d, im.rank(x), dim, weight[k]));
    Var term = im.op<Prim::mul>({gather_at(im, x, dim, at[k]), w});
    y = k == 0 ? term : im.op<Prim::add>({y, term});
  }
  return y;
}

// `x` resized along the tape's `dim` by the plan.
Var resize_axis(Importer& im, Var x, int dim, const AxisPlan& p, const Options& o, int64_t in) {
  DType d = im.type(x).dtype;
  int r = im.rank(x);
  Var y;
  if (o.mode == "cubic") {
    y = cubic_axis(im, x, dim, p, o, in);
  } else if (o.mode == "nearest") {
    std::vector<int64_t> at;
    for (size_t i = 0; i < p.lo.size(); ++i)
      at.push_back(nearest_takes_hi(o.nearest_mode, p.ratio[i]) ? p.hi[i] : p.lo[i]);
    y = gather_at(im, x, dim, at);
  } else {
    std::vector<double> keep;
    for (double w : p.ratio) keep.push_back(1 - w);
    Var lo =
        im.op<Prim::mul>({gather_at(im, x, dim, p.lo), im.constant(along(im, d, r, dim, keep))});
    Var hi =
        im.op<Prim::mul>({gather_at(im, x, dim, p.hi), im.constant(along(im, d, r, dim, p.ratio))});
    y = im.op<Prim::add>({lo, hi});
  }
  if (std::find(p.outside.begin(), p.outside.end(), true) == p.outside.end()) return y;
  Var outside = im.constant(along(im, DType::boolean, r, dim, p.outside));
  return im.op<Prim::select>({outside, im.scalar(d, o.extrapolation), y});
}

// Whether the plan gives every position its own element back, with weight 1.
bool identity(const AxisPlan& p, int64_t in) {
  if (static_cast<int64_t>(p.lo.size()) != in) return false;
  for (int64_t x = 0; x < in; ++x) {
    if (p.ratio[x] != 1 || p.hi[x] != x || p.outside[x]) return false;
  }
  return true;
}

// Every axis resized, the last ONNX axis first; `roi` is empty or ONNX's [starts, ends].
Var resize_axes(Importer& im, Var x, Transform t, const Options& o,
                const std::vector<double>& scales, const std::vector<int64_t>& out,
                const std::vector<double>& roi) {
  const Shape in = im.onnx_shape(x);
  auto r = static_cast<int64_t>(in.size());
  for (int64_t a = r - 1; a >= 0; --a) {
    if (in[a] == 0 || out[a] == 0) user_error("Resize of an empty axis, or to one");
    if (!roi.empty()) t.roi_lo = roi[a], t.roi_hi = roi[a + r];
    // The constants of the axis, a few per output position, before they are planned.
    int64_t per_position = (o.mode == "cubic"    ? 8
                            : o.mode == "linear" ? 4
                                                 : 1) +
                           (t.mode == "tf_crop_and_resize" ? 1 : 0);
    im.check_computed(out[a] * per_position, "Resize's positions and weights of an axis");
    AxisPlan p = plan_axis(t, in[a], out[a], scales[a]);
    if (identity(p, in[a])) continue;
    x = resize_axis(im, x, static_cast<int>(r - a), p, o, in[a]);
  }
  return x;
}

// The scales in input `i`, and the output sizes they give: floor(scale * size).
std::vector<double> read_scales(Importer& im, const Node& n, int i, const Shape& in,
                                std::vector<int64_t>* out) {
  Tensor s = im.static_input(n, i);
  auto r = static_cast<int64_t>(in.size());
  if (s.size() != r) user_error("scales has {} elements for rank {}", s.size(), r);
  std::vector<double> scales(r);
  for (int64_t a = 0; a < r; ++a) {
    scales[a] = element_value(s, a);
    double size = std::floor(scales[a] * static_cast<double>(in[a]));
    if (!(scales[a] > 0) || !(size <= static_cast<double>(kMaxAxis))) {
      user_error("scale {} of an axis of {} is not positive, or makes more than 2^22", scales[a],
                 in[a]);
    }
    out->push_back(static_cast<int64_t>(size));
  }
  return scales;
}

void check_float(Importer& im, const Node& n, Var x) {
  DType d = im.type(x).dtype;
  if (!is_float(d)) unsupported(n.op_type() + " of " + std::string(dtype_name(d)));
}

// Resize (opsets 11 and 13): X, roi, scales, sizes; the sizes when given, else the scales.
void resize(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  check_float(im, n, x);
  std::string mode = attr_string(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    unsupported("Resize in " + mode + " mode");
  const Shape in = im.onnx_shape(x);
  auto r = static_cast<int64_t>(in.size());
  Transform t{attr_string(n, "coordinate_transformation_mode", "half_pixel")};
  std::vector<double> scales, roi;
  std::vector<int64_t> out;
  if (im.has_input(n, 3) && im.static_input(n, 3).size() > 0) {
    out = im.static_ints(n, 3);
    if (static_cast<int64_t>(out.size()) != r)
      user_error("sizes has {} elements for rank {}", out.size(), r);
    for (int64_t a = 0; a < r; ++a) {
      if (out[a] < 0 || out[a] > kMaxAxis) user_error("size {} is not in 0..2^22", out[a]);
      scales.push_back(static_cast<double>(out[a]) / static_cast<double>(in[a]));
    }
  } else {
    if (!im.has_input(n, 2)) user_error("Resize needs scales or sizes");
    scales = read_scales(im, n, 2, in, &out);
  }
  if (t.mode == "tf_crop_and_resize") {
    Tensor roi_t = im.static_input(n, 1);
    if (roi_t.size() != 2 * r) user_error("roi has {} elements for rank {}", roi_t.size(), r);
    for (int64_t i = 0; i < 2 * r; ++i) roi.push_back(element_value(roi_t, i));
  }
  Options o{mode, attr_string(n, "nearest_mode", "round_prefer_floor"),
            attr_float(n, "extrapolation_value", 0), attr_float(n, "cubic_coeff_a", -0.75),
            attr_int(n, "exclude_outside", 0) != 0};
  im.set_output(n, 0, resize_axes(im, x, t, o, scales, out, roi));
}

// Upsample (opset 9, deprecated since 10): X, scales; as Resize-10, whose definition it
// became, from the coordinate x / scale: nearest takes its floor, as ONNX's reference
// repeats each element; linear its two neighbours, the last cut to the axis (ONNX Runtime's
// edge). ONNX has no node test of the linear mode; the unit tests check it by hand.
void upsample(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  check_float(im, n, x);
  std::string mode = attr_string(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear") user_error("mode '{}' is not nearest or linear", mode);
  std::vector<int64_t> out;
  std::vector<double> scales = read_scales(im, n, 1, im.onnx_shape(x), &out);
  Options o{mode, "floor"};
  im.set_output(n, 0, resize_axes(im, x, Transform{"asymmetric"}, o, scales, out, {}));
}

}  // namespace

void add_resize_rules(Rules& r) {
  r["Resize"] = resize;
  r["Upsample"] = upsample;
}

}  // namespace ytape::onnx_import
