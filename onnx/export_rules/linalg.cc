// Export rules of the linalg family.
#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

// C' = op(B)' op(A)', the tape's tensors being ONNX's transposed matrices.
void matmul(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::matmul>(op.attrs);
  int r = rank(ex, op.args[0]);
  if (r == 2) {
    onnx::NodeProto& n = ex.node("Gemm", {in(ex, op, 1), in(ex, op, 0)});
    set_attr(n, "transA", int64_t{a.transpose_b}), set_attr(n, "transB", int64_t{a.transpose_a});
    return done(ex, op, n);
  }
  std::vector<int64_t> swap(r);
  for (int i = 0; i < r; ++i) swap[i] = i;
  std::swap(swap[r - 1], swap[r - 2]);
  auto maybe_swapped = [&](size_t i, bool t) {
    if (!t) return in(ex, op, i);
    onnx::NodeProto& n = ex.node("Transpose", {in(ex, op, i)});
    set_attr(n, "perm", swap);
    return n.output(0);
  };
  done(ex, op,
       ex.node("MatMul", {maybe_swapped(1, a.transpose_b), maybe_swapped(0, a.transpose_a)}));
}

}  // namespace

void register_linalg_export(ExportTable& t) {
  t.set(Prim::matmul, matmul);
}

}  // namespace ytape::onnx_export
