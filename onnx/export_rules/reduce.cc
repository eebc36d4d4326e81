// Export rules of the reduce family: ytape's reductions drop the reduced dims, so the
// Reduce ops keep none (keepdims 0); argmax is 1-based.
#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

std::vector<int64_t> axes(Exporter& ex, Var x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> a;
  for (int64_t d : dims) a.push_back(axis(ex, x, d));
  return a;
}
// ReduceSum takes its axes as an input at opset 13, ReduceMax and ReduceMin as an
// attribute until opset 18.
template <Prim P>
void reduction(Exporter& ex, const Op& op) {
  const auto& dims = attrs_of<P>(op.attrs).dims;
  if (dims.empty()) return done(ex, op, ex.node("Identity", {in(ex, op, 0)}));
  std::vector<int64_t> a = axes(ex, op.args[0], dims);
  onnx::NodeProto& n =
      P == Prim::sum ? ex.node("ReduceSum", {in(ex, op, 0), ex.ints(a)})
                     : ex.node(P == Prim::maximum ? "ReduceMax" : "ReduceMin", {in(ex, op, 0)});
  if (P != Prim::sum) set_attr(n, "axes", a);
  set_attr(n, "keepdims", int64_t{0});
  done(ex, op, n);
}
void argmax(Exporter& ex, const Op& op) {  // 0-based, plus 1
  onnx::NodeProto& n = ex.node("ArgMax", {in(ex, op, 0)});
  set_attr(n, "axis", axis(ex, op.args[0], attrs_of<Prim::argmax>(op.attrs).dim));
  set_attr(n, "keepdims", int64_t{0});
  done(ex, op, ex.node("Add", {n.output(0), ex.scalar(DType::i64, 1)}));
}
template <Prim P>
void softmax(Exporter& ex, const Op& op) {
  const auto& dims = attrs_of<P>(op.attrs).dims;
  if (dims.size() != 1) refuse("a softmax over other than one dim");
  onnx::NodeProto& n = ex.node(P == Prim::softmax ? "Softmax" : "LogSoftmax", {in(ex, op, 0)});
  set_attr(n, "axis", axis(ex, op.args[0], dims[0]));
  done(ex, op, n);
}

}  // namespace

void register_reduce_export(ExportTable& t) {
  t.set(Prim::sum, reduction<Prim::sum>);
  t.set(Prim::maximum, reduction<Prim::maximum>);
  t.set(Prim::minimum, reduction<Prim::minimum>);
  t.set(Prim::argmax, argmax);
  t.set(Prim::softmax, softmax<Prim::softmax>);
  t.set(Prim::log_softmax, softmax<Prim::log_softmax>);
}

}  // namespace ytape::onnx_export
