// GridSample (opset 16, 4-d): each output position reads X at the position its grid entry
// gives, normalized to [-1, 1] over the width and height, interpolated from its neighbours.
// The positions are values of the model, so the neighbours are gathered at run time: X's
// planes flattened to (W H, C, N) in the tape, each neighbour's linear index y W + x
// (1-based) gathered along the first dim, times its weight, summed. Per axis, as
// PyTorch's grid_sample, whose results ONNX's tests hold:
// - the coordinate is ((g + 1) size - 1) / 2, or (g + 1) (size - 1) / 2 with align_corners;
// - nearest takes it rounded half to even, bilinear its floor and the next with weights
//   1 - t and t (t the fraction), bicubic the floor's neighbours -1 .. 2 with Keys' weights
//   of a = -0.75;
// - padding: zeros gives 0 for a neighbour outside the axis; border clamps the coordinate
//   (bicubic: each neighbour) into the axis; reflection reflects it about the axis' ends
//   (its edges' centres with align_corners, else their outer sides), then clamps.
#include <optional>

#include "onnx/rules/arith.h"

namespace ytape::onnx_import {

namespace {

struct Tap {
  Var index, weight;  // the neighbour's 0-based index along the axis (i64), and weight
};

struct Sampling {
  std::string mode, padding;
  bool align_corners = false;
};

using arith::add, arith::k, arith::mul, arith::sub;
Var clamp(Importer& im, Var c, double hi) {
  return im.op<Prim::min>({im.op<Prim::max>({c, k(im, c, 0)}), k(im, c, hi)});
}

// PyTorch's reflect_coordinates over [lo, hi], then clamped into the axis.
Var reflect(Importer& im, Var c, int64_t size, bool align_corners) {
  double lo = align_corners ? 0 : -0.5, hi = align_corners ? size - 1.0 : size - 0.5;
  if (hi <= lo) return im.op<Prim::mul>({c, k(im, c, 0)});
  double span = hi - lo;
  Var in = im.op<Prim::abs>({sub(im, c, k(im, c, lo))});
  Var extra = im.op<Prim::rem>({in, k(im, c, span)});
  Var flips = im.op<Prim::floor>({im.op<Prim::div>({in, k(im, c, span)})});
  Var even = im.op<Prim::eq>({im.op<Prim::rem>({flips, k(im, c, 2)}), k(im, c, 0)});
  Var forward = add(im, extra, k(im, c, lo)), back = sub(im, k(im, c, span + lo), extra);
  return clamp(im, im.op<Prim::select>({even, forward, back}), static_cast<double>(size - 1));
}

// The coordinate `c` moved into the axis as the padding mode says (zeros: left as it is).
Var pad_coordinate(Importer& im, Var c, int64_t size, const Sampling& s) {
  if (s.padding == "border") return clamp(im, c, static_cast<double>(size - 1));
  if (s.padding == "reflection") return reflect(im, c, size, s.align_corners);
  return c;
}

// A neighbour at the (float, integral) index `at`, weighing `w`: with zeros padding, 0
// outside the axis.
Tap tap(Importer& im, Var at, Var w, int64_t size, const Sampling& s) {
  if (s.padding == "zeros") {
    Var inside = im.op<Prim::select>({im.op<Prim::ge>({at, k(im, at, 0)}),
                                      im.op<Prim::le>({at, k(im, at, size - 1.0)}),
                                      im.scalar(DType::boolean, 0)});
    w = im.op<Prim::select>({inside, w, k(im, w, 0)});
  }
  Var index = clamp(im, at, static_cast<double>(size - 1));
  return {im.op<Prim::convert>({index}, {.dtype = DType::i64}), w};
}

std::vector<Tap> taps(Importer& im, Var g, int64_t size, const Sampling& s) {
  auto n = static_cast<double>(size);
  // One op per statement where two would be arguments of one call (C++ leaves their order
  // open; the tape's must not depend on the compiler).
  Var one = k(im, g, 1);
  Var from_zero = add(im, g, one);  // g + 1, in [0, 2]
  Var c;
  if (s.align_corners) {
    c = mul(im, from_zero, k(im, g, (n - 1) / 2));
  } else {
    Var spread = sub(im, mul(im, from_zero, k(im, g, n)), one);
    c = im.op<Prim::div>({spread, k(im, g, 2)});
  }
  if (s.mode == "nearest") {
    Var at = im.op<Prim::round>({pad_coordinate(im, c, size, s)});
    return {tap(im, at, k(im, g, 1), size, s)};
  }
  if (s.mode == "bilinear") {
    c = pad_coordinate(im, c, size, s);
    Var x0 = im.op<Prim::floor>({c}), t = sub(im, c, x0);
    return {tap(im, x0, sub(im, k(im, g, 1), t), size, s),
            tap(im, add(im, x0, k(im, g, 1)), t, size, s)};
  }
  // Keys' weights: ((a + 2) t - (a + 3)) t^2 + 1 within 1, ((a t - 5a) t + 8a) t - 4a
  // within 2, at the distances t + 1, t, 1 - t, 2 - t.
  Var x0 = im.op<Prim::floor>({c}), t = sub(im, c, x0);
  const double a = -0.75;
  auto near = [&](Var d) {
    Var p = mul(im, d, k(im, d, a + 2));
    p = sub(im, p, k(im, d, a + 3));
    Var pdd = mul(im, mul(im, p, d), d);
    return add(im, pdd, k(im, d, 1));
  };
  auto far = [&](Var d) {
    Var p = mul(im, d, k(im, d, a));
    p = sub(im, p, k(im, d, 5 * a));
    Var pd = mul(im, p, d);
    Var q = add(im, pd, k(im, d, 8 * a));
    Var qd = mul(im, q, d);
    return sub(im, qd, k(im, d, 4 * a));
  };
  Var two = k(im, g, 2);
  std::vector<Var> w = {far(add(im, t, one)), near(t), near(sub(im, one, t)), far(sub(im, two, t))};
  std::vector<Tap> out;
  for (int j = 0; j < 4; ++j) {
    Var at = pad_coordinate(im, add(im, x0, k(im, g, j - 1.0)), size, s);
    out.push_back(tap(im, at, w[j], size, s));
  }
  return out;
}

void grid_sample(Importer& im, const Node& n) {
  Var x = im.input(n, 0), grid = im.input(n, 1);
  DType d = im.type(x).dtype;
  if (!is_float(d) || im.type(grid).dtype != d)
    user_error("X and grid must be floats of one dtype");
  Shape xs = im.type(x).shape, gs = im.type(grid).shape;  // (W, H, C, N), (2, Wo, Ho, N)
  if (xs.size() != 4) unsupported(fmt::format("GridSample of rank {} (only 4)", xs.size()));
  if (xs[0] == 0 || xs[1] == 0) user_error("X's planes are empty");
  if (gs.size() != 4 || gs[0] != 2 || gs[3] != xs[3])
    user_error("the grid's shape must be (N, H_out, W_out, 2) for X's N");
  Sampling s{attr_string(n, "mode", "bilinear"), attr_string(n, "padding_mode", "zeros"),
             attr_int(n, "align_corners", 0) != 0};
  if (s.mode != "nearest" && s.mode != "bilinear" && s.mode != "bicubic")
    user_error("mode '{}' is not nearest, bilinear or bicubic", s.mode);
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    user_error("padding_mode '{}' is not zeros, border or reflection", s.padding);
  int64_t positions = gs[1] * gs[2];
  auto coordinate = [&](int64_t j) {
    return im.reshape(im.slice(grid, 1, j, 1), {positions, 1, gs[3]});
  };
  std::vector<Tap> across = taps(im, coordinate(0), xs[0], s),
                   down = taps(im, coordinate(1), xs[1], s);
  Var planes = im.reshape(x, {xs[0] * xs[1], xs[2], xs[3]});
  std::optional<Var> y;
  for (const Tap& v : down) {
    for (const Tap& h : across) {
      Var row = mul(im, v.index, im.scalar(DType::i64, static_cast<double>(xs[0])));
      Var zero_based = add(im, row, h.index);
      Var at = add(im, zero_based, im.scalar(DType::i64, 1));
      Var picked = im.op<Prim::gather>({planes, at}, {.dim = 1});
      Var term = mul(im, picked, mul(im, v.weight, h.weight));
      y = y ? add(im, *y, term) : term;
    }
  }
  im.set_output(n, 0, im.reshape(*y, {gs[1], gs[2], xs[2], xs[3]}));
}

}  // namespace

void add_sample_rules(Rules& r) {
  r["GridSample"] = grid_sample;
}

}  // namespace ytape::onnx_import
