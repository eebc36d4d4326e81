// Export rules of the linalg family.
#include <fmt/format.h>

#include "onnx/export_rules.h"
#include "tape/builder.h"
#include "tape/expand.h"
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

// A fused primitive as the nodes of its expansion (tape/expand.h); its mark (export_op)
// makes ytape's import read them back as the primitive. ONNX has no attention before
// opset 23.
template <auto expand>
void expanded(Exporter& ex, const Op& op) {
  Builder mini;
  std::vector<Var> args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    args.push_back(mini.input(fmt::format("x{}", i + 1), ex.type(op.args[i])));
  }
  std::vector<Var> outs = expand(mini, op, args);
  for (size_t k = 0; k < outs.size(); ++k) mini.output(outs[k], fmt::format("y{}", k + 1));
  Tape t = mini.finish();
  Exporter sub(t, ex.graph(), ex.fresh());
  for (size_t i = 0; i < op.args.size(); ++i) sub.name(t.ops[i].outs[0], in(ex, op, i));
  for (size_t i = op.args.size(); i < t.ops.size(); ++i) sub.export_op(t.ops[i]);
  for (size_t k = 0; k < op.outs.size(); ++k) ex.name(op.outs[k], sub.name(t.outputs[k].var));
}

}  // namespace

void register_linalg_export(ExportTable& t) {
  t.set(Prim::matmul, matmul);
  t.set(Prim::attention, expanded<expand_attention>);
  t.set(Prim::attention_backward, expanded<expand_attention_backward>);
}

}  // namespace ytape::onnx_export
