// Export rules of the index family: ytape's 1-based indices made 0-based in the graph.
#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

// GatherElements wants indices of the result's shape, 0-based.
void gather(Exporter& ex, const Op& op) {
  std::string idx =
      ex.node("Expand", {in(ex, op, 1), ex.ints(reversed(ex.type(op.outs[0]).shape))}).output(0);
  idx = ex.node("Sub", {idx, ex.scalar(DType::i64, 1)}).output(0);
  onnx::NodeProto& n = ex.node("GatherElements", {in(ex, op, 0), idx});
  set_attr(n, "axis", axis(ex, op.args[0], attrs_of<Prim::gather>(op.attrs).dim));
  done(ex, op, n);
}

void scatter_add(Exporter& ex, const Op& op) {
  const Type& yt = ex.type(op.args[0]);
  int64_t a = axis(ex, op.args[0], attrs_of<Prim::scatter_add>(op.attrs).dim);
  ex.name(op.outs[0],
          scatter_added(ex, in(ex, op, 0), yt, in(ex, op, 1), ex.type(op.outs[0]).shape, a));
}

}  // namespace

// ScatterElements adds (its `add` reduction) from opset 16 on; its indices are 0-based and
// of the updates' shape.
std::string scatter_added(Exporter& ex, const std::string& y, const Type& yt, std::string idx,
                          const Shape& out, int64_t axis) {
  idx = ex.node("Expand", {idx, ex.ints(reversed(yt.shape))}).output(0);
  idx = ex.node("Sub", {idx, ex.scalar(DType::i64, 1)}).output(0);
  onnx::NodeProto& n = ex.node("ScatterElements", {filled(ex, yt.dtype, out, 0), idx, y});
  set_attr(n, "axis", axis);
  set_attr(n, "reduction", std::string("add"));
  return n.output(0);
}

void register_index_export(ExportTable& t) {
  t.set(Prim::gather, gather);
  t.set(Prim::scatter_add, scatter_add);
}

}  // namespace ytape::onnx_export
