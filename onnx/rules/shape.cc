// Shape ops. Shapes, axes and per-axis lists arrive in ONNX order; each rule works out the
// ONNX result shape and hands the primitive its reverse (ytape's shapes are ONNX's
// reversed, so no element moves in a reshape).
#include <algorithm>
#include <numeric>

#include "onnx/importer.h"
#include "tape/checked.h"

namespace ytape::onnx_import {

namespace {

// x reshaped to the ONNX shape `s`.
Var to_onnx_shape(Importer& im, Var x, const Shape& s) {
  return im.reshape(x, reversed(s));
}

int64_t product(const Shape& s, size_t from, size_t to) {
  return std::accumulate(s.begin() + from, s.begin() + to, int64_t{1}, std::multiplies<>());
}

// The target of Reshape: 0 copies the input's dim (unless allowzero), -1 takes the rest.
Shape reshape_target(const Shape& in, std::vector<int64_t> want, bool allow_zero) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0 && !allow_zero) {
      if (i >= in.size()) user_error("shape[{}] is 0 but the input has rank {}", i, in.size());
      want[i] = in[i];
    }
    if (want[i] == -1) {
      if (infer >= 0) user_error("the shape has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (want[i] < 0) {
      user_error("shape[{}] is {}", i, want[i]);
    } else if (want[i] > 0 && known > kMaxElements / want[i]) {
      user_error("the shape has more elements than a tensor may have ({})", kMaxElements);
    } else {
      known *= want[i];
    }
  }
  int64_t total = product(in, 0, in.size());
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      user_error("cannot infer the -1 of the shape: {} elements", total);
    want[infer] = total / known;
  }
  return want;
}

void reshape(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape target =
      reshape_target(im.onnx_shape(x), im.static_ints(n, 1), attr_int(n, "allowzero", 0) != 0);
  im.set_output(n, 0, to_onnx_shape(im, x, target));
}

void flatten(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.onnx_shape(x);
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (axis < 0 || axis > static_cast<int64_t>(s.size()))
    user_error("axis {} is out of range", axis);
  im.set_output(n, 0, to_onnx_shape(im, x, {product(s, 0, axis), product(s, axis, s.size())}));
}

// ONNX's out[i] = in[perm[i]] on reversed dims: ytape's perm'[j] = r - perm[r - 1 - j].
Var onnx_transpose(Importer& im, Var x, const std::vector<int64_t>& perm) {
  int r = im.rank(x);
  if (static_cast<int>(perm.size()) != r)
    user_error("perm has {} entries for rank {}", perm.size(), r);
  std::vector<int64_t> yperm(r);
  for (int j = 0; j < r; ++j) yperm[j] = ydim(perm[r - 1 - j], r);
  return im.op<Prim::permutedims>({x}, {.perm = yperm});
}

void transpose(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  std::vector<int64_t> perm(im.rank(x));
  std::iota(perm.rbegin(), perm.rend(), 0);
  im.set_output(n, 0, onnx_transpose(im, x, attr_ints(n, "perm", perm)));
}

// DepthToSpace and SpaceToDepth, as ONNX defines them: a reshape to 6 dims, a transpose,
// a reshape to 4.
Var regroup(Importer& im, Var x, const Shape& six, const std::vector<int64_t>& perm,
            const Shape& four) {
  return to_onnx_shape(im, onnx_transpose(im, to_onnx_shape(im, x, six), perm), four);
}

// The 4-d input's ONNX shape and the blocksize, at least 1.
std::pair<Shape, int64_t> blocks(Importer& im, const Node& n, Var x) {
  Shape s = im.onnx_shape(x);
  int64_t b = attr_int(n, "blocksize", 0);
  if (s.size() != 4) user_error("the input has rank {}, not 4", s.size());
  if (b < 1) user_error("blocksize is {}, not 1 or more", b);
  return {s, b};
}

void depth_to_space(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  auto [s, b] = blocks(im, n, x);
  // b^2 may overflow only where it is past the channels, which it then cannot divide.
  if (s[1] != 0 && (b > s[1] / b || s[1] % (b * b) != 0))
    user_error("blocksize {}: its square does not divide the {} channels", b, s[1]);
  int64_t c = s[1] == 0 ? 0 : s[1] / (b * b);
  Shape out{s[0], c, checked::count_mul(s[2], b, "the output's height"),
            checked::count_mul(s[3], b, "the output's width")};
  bool crd = attr_string(n, "mode", "DCR") == "CRD";
  Var y = crd ? regroup(im, x, {s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, out)
              : regroup(im, x, {s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, out);
  im.set_output(n, 0, y);
}

void space_to_depth(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  auto [s, b] = blocks(im, n, x);
  if (s[2] % b != 0 || s[3] % b != 0)
    user_error("blocksize {} does not divide the height {} and width {}", b, s[2], s[3]);
  // Of an empty image any blocksize divides, so the channels times b^2 may overflow.
  int64_t c = checked::count_mul(checked::count_mul(s[1], b, "the output's channels"), b,
                                 "the output's channels");
  Shape six{s[0], s[1], s[2] / b, b, s[3] / b, b};
  im.set_output(n, 0, regroup(im, x, six, {0, 3, 5, 1, 2, 4}, {s[0], c, s[2] / b, s[3] / b}));
}

void concat(Importer& im, const Node& n) {
  VarList xs{im.input(n, 0)};  // one at least
  for (int i = 1; i < n.input_size(); ++i) xs.push_back(im.input(n, i));
  int dim = ydim(attr_int(n, "axis", 0), im.rank(xs[0]));
  im.set_output(n, 0, xs.size() == 1 ? xs[0] : im.op<Prim::concat>(xs, {.dim = dim}));
}

void squeeze(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.onnx_shape(x), out;
  std::vector<bool> drop(s.size(), false);
  if (std::optional<std::vector<int64_t>> axes = im.ints_input_or_attr(n, 1, "axes")) {
    for (int64_t a : *axes) {
      int i = static_cast<int>(s.size()) - ydim(a, static_cast<int>(s.size()));
      if (s[i] != 1) user_error("axis {} has size {}, not 1", a, s[i]);
      drop[i] = true;
    }
  } else {
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!drop[i]) out.push_back(s[i]);
  }
  im.set_output(n, 0, to_onnx_shape(im, x, out));
}

void unsqueeze(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.onnx_shape(x);
  std::optional<std::vector<int64_t>> given = im.ints_input_or_attr(n, 1, "axes");
  if (!given) user_error("the axes are missing");
  std::vector<int64_t> axes = *given;
  int r = static_cast<int>(s.size() + axes.size());
  std::vector<bool> one(r, false);
  for (int64_t a : axes) {
    if (one[r - ydim(a, r)]) user_error("axes names axis {} twice", a);
    one[r - ydim(a, r)] = true;
  }
  Shape out;
  for (int i = 0, j = 0; i < r; ++i) out.push_back(one[i] ? 1 : s.at(j++));
  im.set_output(n, 0, to_onnx_shape(im, x, out));
}

// ONNX's Shape: the dims of the input in ONNX order, from `start` to `end`.
void shape(Importer& im, const Node& n) {
  Shape s = im.onnx_shape(im.input(n, 0));
  auto r = static_cast<int64_t>(s.size());
  auto clamp = [r](int64_t i) { return std::clamp(i < 0 ? i + r : i, int64_t{0}, r); };
  int64_t start = clamp(attr_int(n, "start", 0)), end = clamp(attr_int(n, "end", r));
  im.set_output(n, 0, im.ints(start < end ? Shape(s.begin() + start, s.begin() + end) : Shape{}));
}

void size(Importer& im, const Node& n) {
  im.set_output(n, 0, im.scalar(DType::i64, static_cast<double>(im.type(im.input(n, 0)).size())));
}

// Bidirectional broadcasting of the input to the shape.
void expand(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.onnx_shape(x), want = im.static_ints(n, 1);
  size_t r = std::max(s.size(), want.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t a = i + s.size() >= r ? s[i + s.size() - r] : 1;
    int64_t b = i + want.size() >= r ? want[i + want.size() - r] : 1;
    if (a != b && a != 1 && b != 1) user_error("shape {} does not broadcast to the input's", i);
    out[i] = a == 1 ? b : a;
  }
  Shape y = reversed(out);
  im.set_output(n, 0, im.type(x).shape == y ? x : im.op<Prim::broadcast_to>({x}, {.shape = y}));
}

// Each dim d repeated r times: (d, 1) broadcast to (d, r) column-major is d's elements r
// times over.
void tile(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  std::vector<int64_t> reps = im.static_ints(n, 1);
  Shape s = im.type(x).shape;
  if (reps.size() != s.size())
    user_error("repeats has {} entries for rank {}", reps.size(), s.size());
  Shape spread, wide, out;
  for (size_t d = 0; d < s.size(); ++d) {
    int64_t rep = reps[s.size() - 1 - d];
    if (rep < 0) user_error("repeats has {} for axis {}, not 0 or more", rep, s.size() - 1 - d);
    spread.insert(spread.end(), {s[d], 1});
    wide.insert(wide.end(), {s[d], rep});
    out.push_back(checked::count_mul(s[d], rep, "the tiled shape"));
  }
  Var y = im.op<Prim::broadcast_to>({im.reshape(x, spread)}, {.shape = wide});
  im.set_output(n, 0, im.reshape(y, out));
}

}  // namespace

void add_shape_rules(Rules& r) {
  r["Reshape"] = reshape;
  r["Flatten"] = flatten;
  r["Transpose"] = transpose;
  r["DepthToSpace"] = depth_to_space;
  r["SpaceToDepth"] = space_to_depth;
  r["Concat"] = concat;
  r["Squeeze"] = squeeze;
  r["Unsqueeze"] = unsqueeze;
  r["Shape"] = shape;
  r["Size"] = size;
  r["Expand"] = expand;
  r["Tile"] = tile;
}

}  // namespace ytape::onnx_import
