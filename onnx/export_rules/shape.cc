// Export rules of the shape family: shapes and per-dim lists reversed, dims as axes.
#include <algorithm>

#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

// A 0 in the shape is a 0, not "copy the input's dim": allowzero.
void reshape(Exporter& ex, const Op& op) {
  const Shape& shape = ex.type(op.outs[0]).shape;
  bool zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  onnx::NodeProto& n = ex.node("Reshape", {in(ex, op, 0), ex.ints(reversed(shape))});
  if (zero) set_attr(n, "allowzero", int64_t{1});
  done(ex, op, n);
}
void broadcast_to(Exporter& ex, const Op& op) {
  done(ex, op, ex.node("Expand", {in(ex, op, 0), ex.ints(reversed(ex.type(op.outs[0]).shape))}));
}
// ytape's perm'[j] = r - perm[r - 1 - j], inverted: perm[i] = r - perm'[r - 1 - i].
void permutedims(Exporter& ex, const Op& op) {
  const auto& yperm = attrs_of<Prim::permutedims>(op.attrs).perm;
  int r = static_cast<int>(yperm.size());
  // A scalar's: ONNX's checker wants a perm of one entry or more.
  if (r == 0) return done(ex, op, ex.node("Identity", {in(ex, op, 0)}));
  std::vector<int64_t> perm(r);
  for (int i = 0; i < r; ++i) perm[i] = r - yperm[r - 1 - i];
  onnx::NodeProto& n = ex.node("Transpose", {in(ex, op, 0)});
  set_attr(n, "perm", perm);
  done(ex, op, n);
}
// 1-based inclusive [start, stop] by step: 0-based start - 1, exclusive end stop.
void slice(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::slice>(op.attrs);
  std::vector<int64_t> starts, ends, ax;
  for (size_t d = 0; d < a.start.size(); ++d) {
    starts.push_back(a.start[d] - 1), ends.push_back(a.stop[d]);
    ax.push_back(axis(ex, op.args[0], static_cast<int64_t>(d) + 1));
  }
  done(ex, op,
       ex.node("Slice",
               {in(ex, op, 0), ex.ints(starts), ex.ints(ends), ex.ints(ax), ex.ints(a.step)}));
}
void concat(Exporter& ex, const Op& op) {
  std::vector<std::string> args;
  for (size_t i = 0; i < op.args.size(); ++i) args.push_back(in(ex, op, i));
  onnx::NodeProto& n = ex.node("Concat", args);
  set_attr(n, "axis", axis(ex, op.args[0], attrs_of<Prim::concat>(op.attrs).dim));
  done(ex, op, n);
}
// x (of ytape shape `shape`, updated) with `interior` elements `value` between each two
// along ytape dim `dim`: a unit dim before it, concatenated there with the filler, merges
// with it into n (1 + interior) elements, whose last `interior` are cut.
std::string interleave(Exporter& ex, std::string x, Shape& shape, int dim, int64_t interior,
                       DType dtype, double value) {
  int64_t n = shape[dim - 1];
  if (interior == 0 || n == 0) return x;
  Shape wide = shape;
  wide.insert(wide.begin() + (dim - 1), 1);
  x = ex.node("Reshape", {x, ex.ints(reversed(wide))}).output(0);
  Shape filler = wide;
  filler[dim - 1] = interior;
  onnx::NodeProto& joined = ex.node("Concat", {x, filled(ex, dtype, filler, value)});
  set_attr(joined, "axis", static_cast<int64_t>(wide.size()) - dim);
  shape[dim - 1] = n * (1 + interior);
  x = ex.node("Reshape", {joined.output(0), ex.ints(reversed(shape))}).output(0);
  shape[dim - 1] = (n - 1) * (1 + interior) + 1;
  int64_t ax = static_cast<int64_t>(shape.size()) - dim;
  return ex.node("Slice", {x, ex.ints({0}), ex.ints({shape[dim - 1]}), ex.ints({ax})}).output(0);
}
// An Identity node; its mark brings the primitive back, so that a model re-imported and
// differentiated again still stops the gradient there.
void stop_gradient(Exporter& ex, const Op& op) {
  done(ex, op, ex.node("Identity", {in(ex, op, 0)}));
}

void pad(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::pad>(op.attrs);
  DType d = ex.type(op.args[0]).dtype;
  Shape shape = ex.type(op.args[0]).shape;
  std::string x = in(ex, op, 0);
  for (size_t i = 0; i < a.interior.size(); ++i) {
    x = interleave(ex, x, shape, static_cast<int>(i) + 1, a.interior[i], d, a.value);
  }
  std::vector<int64_t> pads = reversed(a.lo), hi = reversed(a.hi);
  pads.insert(pads.end(), hi.begin(), hi.end());
  done(ex, op, ex.node("Pad", {x, ex.ints(pads), ex.scalar(d, a.value)}));
}

}  // namespace

void register_shape_export(ExportTable& t) {
  t.set(Prim::reshape, reshape);
  t.set(Prim::broadcast_to, broadcast_to);
  t.set(Prim::permutedims, permutedims);
  t.set(Prim::slice, slice);
  t.set(Prim::concat, concat);
  t.set(Prim::pad, pad);
  t.set(Prim::stop_gradient, stop_gradient);
}

}  // namespace ytape::onnx_export
