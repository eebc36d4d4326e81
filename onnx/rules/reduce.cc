// Reductions, softmax and argmax. ONNX axes become ytape dims (r - axis); `keepdims`
// reshapes the primitive's result (which drops the reduced dims) back to rank r.
#include <algorithm>
#include <numeric>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

enum class Reducer { sum, mean, max, min, prod, sum_square, l1, l2, log_sum, log_sum_exp };

// The reduced dims of `x`, ascending; all of them for no axes.
std::vector<int64_t> reduced_dims(Importer& im, Var x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> dims;
  for (int64_t a : axes) dims.push_back(ydim(a, im.rank(x)));
  if (axes.empty()) {
    for (int d = 1; d <= im.rank(x); ++d) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

// `x`'s shape with 1 at `dims`: the shape of a result with keepdims.
Shape kept_shape(Importer& im, Var x, const std::vector<int64_t>& dims) {
  Shape s = im.type(x).shape;
  for (int64_t d : dims) s[d - 1] = 1;
  return s;
}

Var sum_of(Importer& im, Var x, const std::vector<int64_t>& dims) {
  return im.op<Prim::sum>({x}, {.dims = dims});
}

// No primitive multiplies along a dim: per dim, neighbours multiplied pairwise (an odd one
// out by a padded 1) until one is left, log2(n) products; an empty dim gives 1.
Var product_of(Importer& im, Var x, const std::vector<int64_t>& dims) {
  Shape out;
  for (int d = 1; d <= im.rank(x); ++d) {
    if (!std::count(dims.begin(), dims.end(), d)) out.push_back(im.type(x).shape[d - 1]);
  }
  for (int64_t d64 : dims) {
    auto d = static_cast<int>(d64);
    for (int64_t len = im.type(x).shape[d - 1]; len != 1; len = (len + 1) / 2) {
      if (len == 0) {
        Shape s = im.type(x).shape;
        s[d - 1] = 1;
        x = im.op<Prim::fill>({}, {.value = 1, .dtype = im.type(x).dtype, .shape = s});
        break;
      }
      if (len % 2 != 0) x = im.pad(x, d, 0, 1, 1);
      x = im.op<Prim::mul>(
          {im.slice(x, d, 0, (len + 1) / 2, 2), im.slice(x, d, 1, (len + 1) / 2, 2)});
    }
  }
  return im.reshape(x, out);
}

Var reduce(Importer& im, Reducer r, Var x, const std::vector<int64_t>& dims) {
  DType dt = im.type(x).dtype;
  switch (r) {
    case Reducer::sum:
      return sum_of(im, x, dims);
    case Reducer::max:
      return im.op<Prim::maximum>({x}, {.dims = dims});
    case Reducer::min:
      return im.op<Prim::minimum>({x}, {.dims = dims});
    case Reducer::prod:
      return product_of(im, x, dims);
    case Reducer::sum_square:
      return sum_of(im, im.op<Prim::mul>({x, x}), dims);
    case Reducer::l1:
      return sum_of(im, im.op<Prim::abs>({x}), dims);
    case Reducer::l2:
      return im.op<Prim::sqrt>({sum_of(im, im.op<Prim::mul>({x, x}), dims)});
    case Reducer::log_sum:
      return im.op<Prim::log>({sum_of(im, x, dims)});
    case Reducer::mean: {
      int64_t count = 1;
      for (int64_t d : dims) count *= im.type(x).shape[d - 1];
      return im.op<Prim::div>({sum_of(im, x, dims), im.scalar(dt, static_cast<double>(count))});
    }
    case Reducer::log_sum_exp: {  // m + log(sum(exp(x - m))), m the max
      Var m = im.op<Prim::maximum>({x}, {.dims = dims});
      Var e = im.op<Prim::exp>({im.op<Prim::sub>({x, im.reshape(m, kept_shape(im, x, dims))})});
      return im.op<Prim::add>({im.op<Prim::log>({sum_of(im, e, dims)}), m});
    }
  }
  internal_error("reduce: reducer {}", static_cast<int>(r));
}

template <Reducer R>
void reduction(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  std::vector<int64_t> axes = attr_ints(n, "axes");
  if (n.op_type() == "ReduceSum" && im.has_input(n, 1)) axes = im.static_ints(n, 1);
  if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) {
    im.set_output(n, 0, x);
    return;
  }
  std::vector<int64_t> dims = reduced_dims(im, x, axes);
  Var y = reduce(im, R, x, dims);
  if (attr_int(n, "keepdims", 1) != 0) y = im.reshape(y, kept_shape(im, x, dims));
  im.set_output(n, 0, y);
}

// Hillis and Steele's scan: the running sums plus themselves shifted by 1, 2, 4, ... along
// the axis (zeros shifted in), log2(n) additions; exclusive shifts the result once more.
// reverse scans from the end, shifting the other way.
void cumsum(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  std::vector<int64_t> axis = im.static_ints(n, 1);
  if (axis.size() != 1) user_error("axis has {} elements, not 1", axis.size());
  int d = ydim(axis[0], im.rank(x));
  bool reverse = attr_int(n, "reverse", 0) != 0;
  int64_t len = im.type(x).shape[d - 1];
  auto shift = [&](Var v, int64_t by) {
    if (by >= len) {
      return im.op<Prim::fill>({},
                               {.value = 0, .dtype = im.type(v).dtype, .shape = im.type(v).shape});
    }
    Var kept = im.slice(v, d, reverse ? by : 0, len - by);
    return reverse ? im.pad(kept, d, 0, by) : im.pad(kept, d, by, 0);
  };
  for (int64_t by = 1; by < len; by *= 2) x = im.op<Prim::add>({x, shift(x, by)});
  if (attr_int(n, "exclusive", 0) != 0) x = shift(x, 1);
  im.set_output(n, 0, x);
}

template <Prim P>
void softmax(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  if (im.opset() < 13) {
    // Softmax-1 and -11 flatten the input to 2-d at `axis` (default 1) and normalize each
    // row: jointly over ONNX axes axis..r-1, the tape's dims 1..r-axis.
    std::vector<int64_t> dims;
    for (int d = 1; d <= ydim(attr_int(n, "axis", 1), im.rank(x)); ++d) dims.push_back(d);
    return im.set_output(n, 0, im.op<P>({x}, {.dims = dims}));
  }
  int dim = ydim(attr_int(n, "axis", -1), im.rank(x));
  im.set_output(n, 0, im.op<P>({x}, {.dims = {dim}}));
}

// The 0-based position of the first (or last) max, or min, along the axis.
template <bool Min>
void arg_extreme(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int dim = ydim(attr_int(n, "axis", 0), im.rank(x));
  int64_t size = im.type(x).shape[dim - 1];
  bool last = attr_int(n, "select_last_index", 0) != 0;
  if (Min) x = im.op<Prim::neg>({x});
  if (last) {  // the first max of the reversed dim is the last one
    std::vector<int64_t> rev(listed(size, "the positions gathered"));
    std::iota(rev.rbegin(), rev.rend(), 0);
    x = im.take(x, dim, rev);
  }
  Var i = im.op<Prim::argmax>({x}, {.dim = dim});
  // 1-based first of the reversed: size - i is 0-based last of the original.
  i = last ? im.op<Prim::sub>({im.scalar(DType::i64, static_cast<double>(size)), i})
           : im.op<Prim::sub>({i, im.scalar(DType::i64, 1)});
  if (attr_int(n, "keepdims", 1) != 0) i = im.reshape(i, kept_shape(im, x, {dim}));
  im.set_output(n, 0, i);
}

// 1 at the first max along the axis, 0 elsewhere.
void hardmax(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int dim = ydim(attr_int(n, "axis", -1), im.rank(x));
  Shape s = im.type(x).shape;
  Var at = im.reshape(im.op<Prim::argmax>({x}, {.dim = dim}), kept_shape(im, x, {dim}));
  Var position = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = s, .dim = dim});
  Var one_hot = im.op<Prim::eq>({position, at});
  im.set_output(n, 0, im.op<Prim::convert>({one_hot}, {.dtype = im.type(x).dtype}));
}

// The k largest (or smallest) elements along the axis, sorted, and their 0-based indices,
// the lower index first among equal values: no sort primitive, so each element's rank (the
// elements that come before it) is counted over all pairs along the axis (n^2 comparisons),
// and output r gathers the element of rank r. Exact for every value, infinities included.
void top_k(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  std::vector<int64_t> kv = im.static_ints(n, 1);
  int r = im.rank(x);
  if (r == 0) user_error("TopK of a scalar");
  int dim = ydim(attr_int(n, "axis", -1), r);
  const Shape s = im.type(x).shape;
  int64_t size = s[dim - 1];
  if (kv.size() != 1 || kv[0] < 0 || kv[0] > size)
    user_error("k must be one number in 0..{}, the axis' size", size);
  int64_t k = kv[0];
  bool largest = attr_int(n, "largest", 1) != 0;
  // Pairs: i along `dim`, j along the new dim + 1.
  Shape si = s, sj = s, pair(r + 1, 1);
  si.insert(si.begin() + dim, 1);
  sj.insert(sj.begin() + dim - 1, 1);
  pair[dim - 1] = size, pair[dim] = size;
  Var xi = im.reshape(x, si), xj = im.reshape(x, sj);
  Var i = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = pair, .dim = dim});
  Var j = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = pair, .dim = dim + 1});
  Var better = largest ? im.op<Prim::gt>({xj, xi}) : im.op<Prim::lt>({xj, xi});
  Var tie_before = im.op<Prim::select>(
      {im.op<Prim::eq>({xj, xi}), im.op<Prim::lt>({j, i}), im.scalar(DType::boolean, 0)});
  Var before = im.op<Prim::select>({better, im.scalar(DType::boolean, 1), tie_before});
  Var ranks = im.op<Prim::sum>({im.op<Prim::convert>({before}, {.dtype = DType::i64})},
                               {.dims = {dim + 1}});
  // (i along dim) == (r along dim + 1), as i64 for argmax: the first i of rank r.
  Shape wanted(r + 1, 1);
  wanted[dim] = k;
  Var rank = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = wanted, .dim = dim + 1});
  Var hit =
      im.op<Prim::eq>({im.reshape(ranks, si), im.op<Prim::sub>({rank, im.scalar(DType::i64, 1)})});
  Var at = im.op<Prim::argmax>({im.op<Prim::convert>({hit}, {.dtype = DType::i64})}, {.dim = dim});
  im.set_output(n, 0, im.op<Prim::gather>({x, at}, {.dim = dim}));
  im.set_output(n, 1, im.op<Prim::sub>({at, im.scalar(DType::i64, 1)}));
}

}  // namespace

void add_reduce_rules(Rules& r) {
  r["ReduceSum"] = reduction<Reducer::sum>;
  r["ReduceMean"] = reduction<Reducer::mean>;
  r["ReduceMax"] = reduction<Reducer::max>;
  r["ReduceMin"] = reduction<Reducer::min>;
  r["ReduceProd"] = reduction<Reducer::prod>;
  r["ReduceSumSquare"] = reduction<Reducer::sum_square>;
  r["CumSum"] = cumsum;
  r["ReduceL1"] = reduction<Reducer::l1>;
  r["ReduceL2"] = reduction<Reducer::l2>;
  r["ReduceLogSum"] = reduction<Reducer::log_sum>;
  r["ReduceLogSumExp"] = reduction<Reducer::log_sum_exp>;
  r["Softmax"] = softmax<Prim::softmax>;
  r["LogSoftmax"] = softmax<Prim::log_softmax>;
  r["ArgMax"] = arg_extreme<false>;
  r["ArgMin"] = arg_extreme<true>;
  r["Hardmax"] = hardmax;
  r["TopK"] = top_k;
}

}  // namespace ytape::onnx_import
