// RoiAlign (opsets 10 and 16): per region of interest and output bin, the average (or
// maximum) of bilinear samples of X, as ONNX Runtime computes them (ONNX's tests hold its
// values). The regions are values of the model, so the samples' positions, their
// neighbours' linear indices into X's planes and their weights are computed in the tape
// and the neighbours gathered, as GridSample's are (grid_sample.cc). The samples of all
// regions form one (gw, gh, Wo, Ho, R) block of the tape: gw x gh samples per bin, Wo x Ho
// bins, R regions. Per axis (x across the width W, y down the height) and region, with
// s = spatial_scale and o = 0.5 for half_pixel (0 for output_half_pixel, opset 10's):
// - start = x1 s - o, length = (x2 - x1) s (at least 1 for output_half_pixel), and
//   bin = length / Wo;
// - sample ix of bin pw at start + pw bin + (ix + 0.5) bin / gw;
// - a sample outside [-1, W] weighs 0; any other is clamped into [0, W - 1], its neighbours
//   floor(x) and floor(x) + 1 (at most W - 1) weighing 1 - t and t, t its fraction.
// The maximum, as ONNX Runtime's, is over the samples of the largest of the four weighted
// neighbours.
#include <optional>

#include "onnx/rules/arith.h"
#include "tape/checked.h"

namespace ytape::onnx_import {

namespace {

using arith::add, arith::k, arith::mul, arith::sub;

struct Samples {
  Var low, high;  // the neighbours' 0-based indices along the axis (as floats)
  Var w_low, w_high, inside;
};

struct Region {
  double scale, offset;
  bool half_pixel;
};

// 0 .. count - 1 along the tape's dim `dim` of a rank-5 block, in `like`'s dtype.
Var steps(Importer& im, Var like, int64_t count, int dim) {
  Shape s(5, 1);
  s[dim - 1] = count;
  Tensor t = im.listed_tensor(Type{DType::f64, s}, "the bins or samples along an axis");
  for (int64_t i = 0; i < count; ++i) t.data<double>()[i] = static_cast<double>(i);
  return im.op<Prim::convert>({im.constant(t)}, {.dtype = im.type(like).dtype});
}

// The samples along one axis of X of `size`, between the regions' ends `lo` and `hi`, in
// `bins` bins along block dim `bin_dim` of `grid` samples along `grid_dim`.
Samples samples(Importer& im, Var lo, Var hi, int64_t size, int64_t bins, int64_t grid, int bin_dim,
                int grid_dim, const Region& r) {
  // One op per statement where two would be arguments of one call (C++ leaves their order
  // open; the tape's must not depend on the compiler).
  Var scaled = mul(im, lo, k(im, lo, r.scale));
  Var start = sub(im, scaled, k(im, lo, r.offset));
  Var extent = sub(im, hi, lo);
  Var length = mul(im, extent, k(im, lo, r.scale));
  if (!r.half_pixel) length = im.op<Prim::max>({length, k(im, lo, 1)});
  Var bin = im.op<Prim::div>({length, k(im, lo, static_cast<double>(bins))});
  Var sample = steps(im, lo, grid, grid_dim);
  Var centre = add(im, sample, k(im, lo, 0.5));
  Var within = im.op<Prim::div>({centre, k(im, lo, static_cast<double>(grid))});
  Var at = add(im, start, mul(im, bin, add(im, steps(im, lo, bins, bin_dim), within)));
  Var inside = im.op<Prim::select>({im.op<Prim::ge>({at, k(im, at, -1)}),
                                    im.op<Prim::le>({at, k(im, at, static_cast<double>(size))}),
                                    im.scalar(DType::boolean, 0)});
  Var last = k(im, at, static_cast<double>(size - 1));
  Var c = im.op<Prim::min>({im.op<Prim::max>({at, k(im, at, 0)}), last});
  Var low = im.op<Prim::floor>({c});
  Var t = sub(im, c, low);
  return {low, im.op<Prim::min>({add(im, low, k(im, low, 1)), last}), sub(im, k(im, t, 1), t), t,
          inside};
}

// Attribute `name`, from 1 to 2^22 (its positions are listed at import, `steps`).
int64_t positive(const Node& n, std::string_view name, int64_t fallback) {
  int64_t v = attr_int(n, name, fallback);
  if (v < 1 || v > kMaxListed) user_error("{} is {}, not 1 to 2^22", name, v);
  return v;
}

// Each sample's four neighbours in X (W, H, C, N), gathered from the planes of the regions'
// `batch` elements and weighed, then summed (`avg`) or the largest taken: (samples, C).
Var neighbours(Importer& im, Var x, Var batch, const Samples& across, const Samples& down,
               const Shape& block, bool avg) {
  const Shape xs = im.type(x).shape;
  Var inside = im.op<Prim::select>({across.inside, down.inside, im.scalar(DType::boolean, 0)});
  // With no channels X holds no element, whatever the size of its planes: check them.
  int64_t pixels = checked::elements({xs[0], xs[1], xs[3]}, "X's planes");
  Var planes = im.reshape(im.op<Prim::permutedims>({x}, {.perm = {1, 2, 4, 3}}), {pixels, xs[2]});
  auto i64 = [&](Var v) { return im.op<Prim::convert>({v}, {.dtype = DType::i64}); };
  auto number = [&](int64_t v) { return im.scalar(DType::i64, static_cast<double>(v)); };
  Var image = im.reshape(batch, {1, 1, 1, 1, block[4]});
  Var image_start = mul(im, image, number(xs[0] * xs[1]));
  Var base = add(im, image_start, number(1));
  int64_t count = block[0] * block[1] * block[2] * block[3] * block[4];
  auto flat = [&](Var v) {
    return im.reshape(im.op<Prim::broadcast_to>({v}, {.shape = block}), {count, 1});
  };
  std::optional<Var> y;
  for (auto [at_y, w_y] : {std::pair{down.low, down.w_low}, std::pair{down.high, down.w_high}}) {
    for (auto [at_x, w_x] :
         {std::pair{across.low, across.w_low}, std::pair{across.high, across.w_high}}) {
      Var row = i64(at_y);
      row = mul(im, row, number(xs[0]));
      Var column = i64(at_x);
      Var index = flat(add(im, base, add(im, row, column)));
      Var w = im.op<Prim::select>({inside, mul(im, w_y, w_x), k(im, w_x, 0)});
      Var picked = im.op<Prim::gather>({planes, index}, {.dim = 1});
      Var term = mul(im, picked, flat(w));
      y = !y ? term : avg ? add(im, *y, term) : im.op<Prim::max>({*y, term});
    }
  }
  return *y;
}

void roi_align(Importer& im, const Node& n) {
  Var x = im.input(n, 0), rois = im.input(n, 1), batch = im.input(n, 2);
  const Shape xs = im.type(x).shape;  // (W, H, C, N)
  DType d = im.type(x).dtype;
  if (!is_float(d) || im.type(rois).dtype != d)
    user_error("X and rois must be floats of one dtype");
  if (xs.size() != 4 || xs[0] == 0 || xs[1] == 0)
    user_error("X must be (N, C, H, W) with H, W > 0");
  const Shape rs = im.type(rois).shape;
  if (rs.size() != 2 || rs[0] != 4) user_error("rois must be (num_rois, 4)");
  if (im.type(batch).dtype != DType::i64 || im.type(batch).shape != Shape{rs[1]})
    user_error("batch_indices must be integers, one per region");
  std::string mode = attr_string(n, "mode", "avg");
  if (mode != "avg" && mode != "max") user_error("mode '{}' is not avg or max", mode);
  std::string coordinates = attr_string(n, "coordinate_transformation_mode",
                                        im.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (coordinates != "half_pixel" && coordinates != "output_half_pixel")
    user_error("coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel",
               coordinates);
  bool half = coordinates == "half_pixel";
  Region region{attr_float(n, "spatial_scale", 1), half ? 0.5 : 0, half};
  int64_t wo = positive(n, "output_width", 1), ho = positive(n, "output_height", 1);
  if (attr_int(n, "sampling_ratio", 0) == 0)
    unsupported("RoiAlign with sampling_ratio 0 (its samples per bin depend on the rois)");
  int64_t ratio = positive(n, "sampling_ratio", 0), r = rs[1];
  Shape block{ratio, ratio, wo, ho, r};
  // The block of samples is gathered for every channel: its size is checked before any op.
  checked::count_mul(checked::elements(block, "the samples"), xs[2], "the samples");
  auto corner = [&](int64_t j) { return im.reshape(im.slice(rois, 1, j, 1), {1, 1, 1, 1, r}); };
  Var x1 = corner(0), y1 = corner(1), x2 = corner(2), y2 = corner(3);
  Samples across = samples(im, x1, x2, xs[0], wo, ratio, 3, 1, region),
          down = samples(im, y1, y2, xs[1], ho, ratio, 4, 2, region);
  Var y = neighbours(im, x, batch, across, down, block, mode == "avg");
  Var bins = im.reshape(y, {ratio * ratio, wo, ho, r, xs[2]});
  Var pooled = mode == "avg" ? im.op<Prim::div>({im.op<Prim::sum>({bins}, {.dims = {1}}),
                                                 k(im, bins, static_cast<double>(ratio * ratio))})
                             : im.op<Prim::maximum>({bins}, {.dims = {1}});
  pooled = im.reshape(pooled, {wo, ho, r, xs[2]});
  im.set_output(n, 0, im.op<Prim::permutedims>({pooled}, {.perm = {1, 2, 4, 3}}));
}

}  // namespace

void add_roi_rules(Rules& r) {
  r["RoiAlign"] = roi_align;
}

}  // namespace ytape::onnx_import
