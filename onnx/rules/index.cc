// Gather, GatherElements, GatherND and the scatters over the `gather` and `scatter_add`
// primitives, whose indices are 1-based and have the data's rank (the scatters' reductions
// mul, max and min over `gather`, `select` and the combining op). ONNX indices are 0-based
// and may count from the end.
#include <algorithm>

#include "onnx/importer.h"
#include "tape/checked.h"

namespace ytape::onnx_import {

namespace {

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

// 0-based indices, negative ones counting back from `size`, as the primitive's 1-based.
Var one_based(Importer& im, Var idx, int64_t size) {
  if (im.type(idx).dtype != DType::i64)
    user_error("indices must be integers, not {}", dtype_name(im.type(idx).dtype));
  Var negative = im.op<Prim::lt>({idx, im.scalar(DType::i64, 0)});
  Var wrapped = im.op<Prim::add>({idx, im.scalar(DType::i64, static_cast<double>(size + 1))});
  Var plain = im.op<Prim::add>({idx, im.scalar(DType::i64, 1)});
  return im.op<Prim::select>({negative, wrapped, plain});
}

// out = data[..., idx, ...] with idx's dims in place of the axis. On the tape: data as
// (inner, n, outer), the indices as (1, k, 1), gathered along dim 2 and reshaped.
void gather(Importer& im, const Node& n) {
  Var x = im.input(n, 0), idx = im.input(n, 1);
  int r = im.rank(x);
  int dim = ydim(attr_int(n, "axis", 0), r);
  Shape s = im.type(x).shape;
  int64_t inner = 1, outer = 1;
  for (int d = 1; d < dim; ++d) inner *= s[d - 1];
  for (int d = dim + 1; d <= r; ++d) outer *= s[d - 1];
  int64_t k = im.type(idx).size();
  Var flat = im.reshape(one_based(im, idx, s[dim - 1]), {1, k, 1});
  Var y = im.op<Prim::gather>({im.reshape(x, {inner, s[dim - 1], outer}), flat}, {.dim = 2});
  Shape out(s.begin(), s.begin() + dim - 1);
  out.insert(out.end(), im.type(idx).shape.begin(), im.type(idx).shape.end());
  out.insert(out.end(), s.begin() + dim, s.end());
  im.set_output(n, 0, im.reshape(y, out));
}

// out[i] = data[i with idx[i] at the axis]: the primitive itself, once the data is cut to
// the indices' size in the other dims.
void gather_elements(Importer& im, const Node& n) {
  Var x = im.input(n, 0), idx = im.input(n, 1);
  int r = im.rank(x);
  int dim = ydim(attr_int(n, "axis", 0), r);
  Shape s = im.type(x).shape, is = im.type(idx).shape;
  if (static_cast<int>(is.size()) != r)
    user_error("indices have rank {}, the data {}", is.size(), r);
  std::vector<int64_t> start(r, 1), stop(s), step(r, 1);
  for (int d = 0; d < r; ++d) {
    if (d != dim - 1) stop[d] = is[d];
  }
  Var cut = stop == s ? x : im.op<Prim::slice>({x}, {.start = start, .stop = stop, .step = step});
  im.set_output(n, 0, im.op<Prim::gather>({cut, one_based(im, idx, s[dim - 1])}, {.dim = dim}));
}

// ---- the reductions mul, max and min, over static indices ----------------------------
// The primitives add scattered values (scatter_add) but do not multiply or compare them, so
// with the indices known at import the updates meeting at each position are grouped: round
// r gathers, for every position at once, the r-th update that lands there, and combines it
// with what the position holds so far where there is one. Each round is a gather, the
// combining op and a select, so gradients flow as through those.

// Per round, the 1-based index along `dim` of the update that lands on each position, and
// whether one does: `at` holds the updates' 0-based positions along a dim of `size` (its
// shape the updates', or 1 where it broadcasts over them); both have `at`'s shape with
// `size` at `dim`.
struct Rounds {
  std::vector<Tensor> index, present;
};

Rounds rounds(const Tensor& at, int dim, int64_t size) {
  const Shape& s = at.shape();
  auto d = static_cast<size_t>(dim);
  int64_t inner = product(s, 0, d - 1), k = s[d - 1], outer = product(s, d, s.size());
  int64_t positions = listed(
      checked::count_mul(checked::count_mul(inner, size, "the positions"), outer, "the positions"),
      "the positions that the updates may reach");
  std::vector<std::vector<int64_t>> hits(static_cast<size_t>(positions));
  size_t most = 0;
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t a = 0; a < inner; ++a) {
        int64_t p = at.data<int64_t>()[a + inner * (j + k * b)];
        auto& h = hits[static_cast<size_t>(a + inner * (p + size * b))];
        h.push_back(j);
        most = std::max(most, h.size());
      }
    }
  }
  Shape shape = s;
  shape[d - 1] = size;
  // Each round is two constants of every position: the rounds times the positions are
  // what the import computes.
  listed(checked::count_mul(static_cast<int64_t>(most), positions, "the rounds"),
         "the rounds of updates (updates meeting at one position) times the positions");
  Rounds r;
  for (size_t round = 0; round < most; ++round) {
    Tensor index(Type{DType::i64, shape}), present(Type{DType::boolean, shape});
    for (size_t i = 0; i < hits.size(); ++i) {
      bool hit = round < hits[i].size();
      index.data<int64_t>()[i] = hit ? hits[i][round] + 1 : 1;
      present.data<bool>()[i] = hit;
    }
    r.index.push_back(std::move(index));
    r.present.push_back(std::move(present));
  }
  return r;
}

// x with the updates y combined into it by `reduction`, where `at` (rounds) says.
Var scatter_reduce(Importer& im, Var x, Var y, const Tensor& at, int dim,
                   const std::string& reduction) {
  Rounds r = rounds(at, dim, im.type(x).shape[dim - 1]);
  for (size_t round = 0; round < r.index.size(); ++round) {
    Var g = im.op<Prim::gather>({y, im.constant(r.index[round])}, {.dim = dim});
    Var combined = reduction == "mul"   ? im.op<Prim::mul>({x, g})
                   : reduction == "max" ? im.op<Prim::max>({x, g})
                                        : im.op<Prim::min>({x, g});
    x = im.op<Prim::select>({im.constant(r.present[round]), combined, x});
  }
  return x;
}

bool combines(const std::string& reduction) {
  return reduction == "mul" || reduction == "max" || reduction == "min";
}

// A static index's 0-based value, negative ones counting back from `size`.
int64_t position(int64_t v, int64_t size) {
  if (v < -size || v >= size) user_error("index {} is out of range for a dim of {}", v, size);
  return v < 0 ? v + size : v;
}

// data with updates added where the indices point along the axis: reduction "add" as the
// primitive scatter_add onto zeros, plus data.
// With reduction 'none' (whose indices ONNX forbids to repeat) the written elements are
// those that a scatter of ones reaches, and take the scattered values. The reductions mul,
// max and min (opset 18's too) need the indices static (scatter_reduce).
void scatter_elements(Importer& im, const Node& n) {
  Var x = im.input(n, 0), idx = im.input(n, 1), y = im.input(n, 2);
  std::string reduction = attr_string(n, "reduction", "none");
  if (reduction != "add" && reduction != "none" && !combines(reduction)) {
    unsupported("ScatterElements with reduction '" + reduction + "'");
  }
  int dim = ydim(attr_int(n, "axis", 0), im.rank(x));
  Shape s = im.type(x).shape, ys = im.type(y).shape;
  if (ys.size() != s.size()) user_error("updates have rank {}, the data {}", ys.size(), s.size());
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    if (d != dim - 1 && ys[d] != s[d]) unsupported("ScatterElements onto a part of the data");
  }
  int64_t size = s[dim - 1];
  if (combines(reduction)) {
    Tensor at = im.static_input(n, 1).clone();  // a copy of its own, to write
    if (at.dtype() != DType::i64)
      user_error("indices must be integers, not {}", dtype_name(at.dtype()));
    if (at.shape() != ys) {
      user_error("indices have shape {}, the updates {} (ONNX order)",
                 shape_str(reversed(at.shape())), shape_str(reversed(ys)));
    }
    for (int64_t& v : at.span<int64_t>()) v = position(v, size);
    return im.set_output(n, 0, scatter_reduce(im, x, y, at, dim, reduction));
  }
  Var at = one_based(im, idx, size);
  Var added = im.op<Prim::scatter_add>({y, at}, {.dim = dim, .size = size});
  if (reduction == "add") return im.set_output(n, 0, im.op<Prim::add>({x, added}));
  DType d = im.type(y).dtype;
  Var ones = im.op<Prim::fill>({}, {.value = 1, .dtype = d, .shape = ys});
  Var hits = im.op<Prim::scatter_add>({ones, at}, {.dim = dim, .size = size});
  Var written = im.op<Prim::gt>({hits, im.scalar(d, 0)});
  im.set_output(n, 0, im.op<Prim::select>({written, added, x}));
}

// The elements on and above (upper) or below the k-th diagonal of the last two ONNX dims,
// zeros elsewhere: column j - row i >= k, or <= k, where the tape's dim 1 is the column.
void trilu(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.type(x).shape;
  if (s.size() < 2) user_error("the input has rank {}, not 2 or more", s.size());
  Shape plane{s[0], s[1]};
  Var col = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = plane, .dim = 1});
  Var row = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = plane, .dim = 2});
  Var diagonal = im.op<Prim::sub>({col, row});
  Var k = im.has_input(n, 1) ? im.input(n, 1) : im.scalar(DType::i64, 0);
  bool upper = attr_int(n, "upper", 1) != 0;
  Var keep = upper ? im.op<Prim::ge>({diagonal, k}) : im.op<Prim::le>({diagonal, k});
  Var zero = im.scalar(im.type(x).dtype, 0);
  im.set_output(n, 0, im.op<Prim::select>({keep, x, zero}));
}

// values[1] where the position along the new axis is the index, values[0] elsewhere.
void one_hot(Importer& im, const Node& n) {
  Var idx = im.input(n, 0), values = im.input(n, 2);
  // A float depth counts as its integer part, as ONNX says; the result's size is the
  // tape's, checked by the builder.
  double given = im.static_number(n, 1);
  if (!(given >= 0 && given <= static_cast<double>(kMaxElements)))
    user_error("depth is {}, not 0 to 2^48", given);
  auto depth = static_cast<int64_t>(given);
  // Other indices than integers are cast to int64 first, as ONNX says.
  if (im.type(idx).dtype != DType::i64) idx = im.op<Prim::convert>({idx}, {.dtype = DType::i64});
  Shape s = im.type(idx).shape;
  int r = static_cast<int>(s.size()) + 1;
  int dim = ydim(attr_int(n, "axis", -1), r);
  Shape with_one = s, out = s;
  with_one.insert(with_one.begin() + dim - 1, 1);
  out.insert(out.begin() + dim - 1, depth);
  Var at = im.reshape(one_based(im, idx, depth), with_one);
  Var position = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = out, .dim = dim});
  Var off = im.reshape(im.op<Prim::slice>({values}, {.start = {1}, .stop = {1}, .step = {1}}), {});
  Var on = im.reshape(im.op<Prim::slice>({values}, {.start = {2}, .stop = {2}, .step = {1}}), {});
  im.set_output(n, 0, im.op<Prim::select>({im.op<Prim::eq>({position, at}), on, off}));
}

// The slices along the axis (of the flattened input without one) whose condition, static,
// is true.
void compress(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Tensor cond = im.static_input(n, 1);
  int dim = 1;
  if (find_attr(n, "axis")) {
    dim = ydim(attr_int(n, "axis", 0), im.rank(x));
  } else {
    x = im.reshape(x, {im.type(x).size()});
  }
  if (cond.size() > im.type(x).shape[dim - 1]) {
    user_error("the condition has {} elements, the axis {}", cond.size(),
               im.type(x).shape[dim - 1]);
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < cond.size(); ++i) {
    if (element_value(cond, i) != 0) kept.push_back(i);
  }
  im.set_output(n, 0, im.take(x, dim, kept));
}

// Each batch's first sequence_lens[b] steps reversed, the rest kept: a gather along the time
// dim whose static indices, (time, batch), broadcast over the other dims.
void reverse_sequence(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  std::vector<int64_t> lens = im.static_ints(n, 1);
  int r = im.rank(x);
  int time = ydim(attr_int(n, "time_axis", 0), r), batch = ydim(attr_int(n, "batch_axis", 1), r);
  if (time == batch) user_error("time_axis and batch_axis are one axis");
  const Shape s = im.type(x).shape;  // a copy: the builder's types move as ops are added
  if (static_cast<int64_t>(lens.size()) != s[batch - 1]) {
    user_error("sequence_lens has {} elements, the batch {}", lens.size(), s[batch - 1]);
  }
  Shape shape(r, 1);
  shape[time - 1] = s[time - 1], shape[batch - 1] = s[batch - 1];
  Tensor idx = im.listed_tensor(Type{DType::i64, shape}, "the positions gathered");
  int64_t time_step = time < batch ? 1 : s[batch - 1], batch_step = time < batch ? s[time - 1] : 1;
  for (int64_t b = 0; b < s[batch - 1]; ++b) {
    int64_t len = std::clamp<int64_t>(lens[b], 0, s[time - 1]);
    for (int64_t t = 0; t < s[time - 1]; ++t) {
      idx.data<int64_t>()[t * time_step + b * batch_step] = (t < len ? len - 1 - t : t) + 1;
    }
  }
  im.set_output(n, 0, im.op<Prim::gather>({x, im.constant(idx)}, {.dim = time}));
}

// ---- GatherND and ScatterND: the index tuples as linear indices into flattened dims ----

// The 1-based linear indices, ytape shape (1, L, B), of the index tuples `idx` (ONNX
// shape (B..., L..., k), each tuple's last element fastest) into the row-major dims `dims`
// (k of them), negative elements counting back from their dim's size.
Var linear_index(Importer& im, Var idx, const Shape& dims, int64_t l, int64_t batch) {
  if (im.type(idx).dtype != DType::i64)
    user_error("indices must be integers, not {}", dtype_name(im.type(idx).dtype));
  auto k = static_cast<int64_t>(dims.size());
  Tensor sizes(Type{DType::i64, {k, 1, 1}}), strides(Type{DType::i64, {k, 1, 1}});
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    sizes.data<int64_t>()[j] = dims[j];
    strides.data<int64_t>()[j] = stride;
    stride *= dims[j];
  }
  Var tuples = im.reshape(idx, {k, l, batch});
  Var size = im.constant(sizes);
  Var negative = im.op<Prim::lt>({tuples, im.scalar(DType::i64, 0)});
  Var wrapped = im.op<Prim::select>({negative, im.op<Prim::add>({tuples, size}), tuples});
  Var offsets = im.op<Prim::mul>({wrapped, im.constant(strides)});
  Var linear = im.op<Prim::sum>({offsets}, {.dims = {1}});
  return im.reshape(im.op<Prim::add>({linear, im.scalar(DType::i64, 1)}), {1, l, batch});
}

// The 0-based linear positions, ytape shape (1, L, 1), of the L static index tuples `idx`
// into the row-major dims `dims`, as linear_index computes them in the tape.
Tensor linear_positions(const Tensor& idx, const Shape& dims, int64_t l) {
  if (idx.dtype() != DType::i64)
    user_error("indices must be integers, not {}", dtype_name(idx.dtype()));
  auto k = static_cast<int64_t>(dims.size());
  Tensor at(Type{DType::i64, {1, l, 1}});
  for (int64_t j = 0; j < l; ++j) {
    int64_t p = 0;
    for (int64_t i = 0; i < k; ++i)
      p = p * dims[i] + position(idx.data<int64_t>()[j * k + i], dims[i]);
    at.data<int64_t>()[j] = p;
  }
  return at;
}

// out[b, l] = data[b, idx[b, l]]: the data as (inner, M, B) on the tape, gathered along M.
void gather_nd(Importer& im, const Node& n) {
  Var x = im.input(n, 0), idx = im.input(n, 1);
  const Shape d = im.onnx_shape(x), is = im.onnx_shape(idx);
  int64_t b = attr_int(n, "batch_dims", 0);
  if (is.empty()) user_error("indices have rank 0");
  int64_t k = is.back();
  auto r = static_cast<int64_t>(d.size()), q = static_cast<int64_t>(is.size());
  if (b < 0 || b >= q || b + k > r) {
    user_error(
        "batch_dims {} and index tuples of {} do not fit data of rank {} and indices "
        "of rank {}",
        b, k, r, q);
  }
  for (int64_t i = 0; i < b; ++i) {
    if (d[i] != is[i])
      user_error("batch dim {} is {} in the data, {} in the indices", i, d[i], is[i]);
  }
  auto ub = static_cast<size_t>(b), uk = static_cast<size_t>(k);
  int64_t batch = product(d, 0, ub), inner = product(d, ub + uk, d.size());
  int64_t l = product(is, ub, is.size() - 1);
  Shape tuple_dims(d.begin() + b, d.begin() + b + k);
  Var at = linear_index(im, idx, tuple_dims, l, batch);
  Var flat = im.reshape(x, {inner, product(d, ub, ub + uk), batch});
  Var y = im.op<Prim::gather>({flat, at}, {.dim = 2});
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), d.begin() + b + k, d.end());
  im.set_output(n, 0, im.reshape(y, reversed(out)));
}

// data with the slices that the index tuples point at replaced by (reduction none) or
// increased by (add) the updates: scatter_add onto the data as (inner, M), as
// ScatterElements does along one dim; or multiplied (mul), or their max or min taken, with
// static indices (scatter_reduce).
void scatter_nd(Importer& im, const Node& n) {
  Var x = im.input(n, 0), idx = im.input(n, 1), u = im.input(n, 2);
  std::string reduction = attr_string(n, "reduction", "none");
  if (reduction != "add" && reduction != "none" && !combines(reduction)) {
    unsupported("ScatterND with reduction '" + reduction + "'");
  }
  const Shape d = im.onnx_shape(x), is = im.onnx_shape(idx), us = im.onnx_shape(u);
  if (is.empty()) user_error("indices have rank 0");
  int64_t k = is.back();
  if (k > static_cast<int64_t>(d.size()))
    user_error("index tuples of {} into data of rank {}", k, d.size());
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), d.begin() + k, d.end());
  if (us != want) {
    user_error("updates have shape {}, the indices and data need {} (ONNX order)", shape_str(us),
               shape_str(want));
  }
  auto uk = static_cast<size_t>(k);
  int64_t m = product(d, 0, uk), inner = product(d, uk, d.size());
  int64_t l = product(is, 0, is.size() - 1);
  Var flat = im.reshape(x, {inner, m, 1});
  if (combines(reduction)) {
    Tensor at = linear_positions(im.static_input(n, 1), Shape(d.begin(), d.begin() + k), l);
    Var y = scatter_reduce(im, flat, im.reshape(u, {inner, l, 1}), at, 2, reduction);
    return im.set_output(n, 0, im.reshape(y, reversed(d)));
  }
  Var at = linear_index(im, idx, Shape(d.begin(), d.begin() + k), l, 1);
  Var added = im.op<Prim::scatter_add>({im.reshape(u, {inner, l, 1}), at}, {.dim = 2, .size = m});
  Var y;
  if (reduction == "add") {
    y = im.op<Prim::add>({flat, added});
  } else {
    DType dt = im.type(u).dtype;
    Var ones = im.op<Prim::fill>({}, {.value = 1, .dtype = dt, .shape = {1, l, 1}});
    Var hits = im.op<Prim::scatter_add>({ones, at}, {.dim = 2, .size = m});
    y = im.op<Prim::select>({im.op<Prim::gt>({hits, im.scalar(dt, 0)}), added, flat});
  }
  im.set_output(n, 0, im.reshape(y, reversed(d)));
}

}  // namespace

void add_index_rules(Rules& r) {
  r["Compress"] = compress;
  r["ReverseSequence"] = reverse_sequence;
  r["Gather"] = gather;
  r["GatherElements"] = gather_elements;
  r["ScatterElements"] = scatter_elements;
  r["Scatter"] = scatter_elements;  // ScatterElements' name until opset 11
  r["Trilu"] = trilu;
  r["GatherND"] = gather_nd;
  r["ScatterND"] = scatter_nd;
  r["OneHot"] = one_hot;
}

}  // namespace ytape::onnx_import
