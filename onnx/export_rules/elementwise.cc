// Export rules of the elementwise family beyond the namesakes of onnx/namesakes.def: the
// primitives that ONNX writes with an attribute or as two nodes.
#include "onnx/export_rules.h"
#include "onnx/proto.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

void log1p(Exporter& ex, const Op& op) {  // log(1 + x)
  DType d = ex.type(op.args[0]).dtype;
  done(ex, op, ex.node("Log", {ex.node("Add", {in(ex, op, 0), ex.scalar(d, 1)}).output(0)}));
}
void expm1(Exporter& ex, const Op& op) {  // exp(x) - 1
  DType d = ex.type(op.args[0]).dtype;
  done(ex, op, ex.node("Sub", {ex.node("Exp", {in(ex, op, 0)}).output(0), ex.scalar(d, 1)}));
}
// 0.5x (1 + tanh(k (x + c x^3))), in the order the kernel computes it (ONNX's Gelu is of
// opset 20).
void gelu(Exporter& ex, const Op& op) {
  DType d = ex.type(op.args[0]).dtype;
  std::string x = in(ex, op, 0);
  auto apply = [&](const char* type, const std::string& a, const std::string& b) {
    return ex.node(type, {a, b}).output(0);
  };
  std::string cube = apply("Mul", apply("Mul", x, x), x);
  std::string inner = apply("Mul", ex.scalar(d, 0.7978845608028654),
                            apply("Add", x, apply("Mul", ex.scalar(d, 0.044715), cube)));
  std::string t = ex.node("Tanh", {inner}).output(0);
  done(ex, op,
       ex.node("Mul", {apply("Mul", ex.scalar(d, 0.5), x), apply("Add", ex.scalar(d, 1), t)}));
}
void ne(Exporter& ex, const Op& op) {
  done(ex, op, ex.node("Not", {ex.node("Equal", {in(ex, op, 0), in(ex, op, 1)}).output(0)}));
}
void rem(Exporter& ex, const Op& op) {  // C's fmod: ONNX's Mod with fmod = 1
  onnx::NodeProto& n = ex.node("Mod", {in(ex, op, 0), in(ex, op, 1)});
  set_attr(n, "fmod", int64_t{1});
  done(ex, op, n);
}
void convert(Exporter& ex, const Op& op) {
  onnx::NodeProto& n = ex.node("Cast", {in(ex, op, 0)});
  set_attr(n, "to", int64_t{onnx_import::to_onnx_dtype(attrs_of<Prim::convert>(op.attrs).dtype)});
  done(ex, op, n);
}

}  // namespace

void register_elementwise_export(ExportTable& t) {
  t.set(Prim::log1p, log1p);
  t.set(Prim::expm1, expm1);
  t.set(Prim::gelu, gelu);
  t.set(Prim::ne, ne);
  t.set(Prim::rem, rem);
  t.set(Prim::convert, convert);
}

}  // namespace ytape::onnx_export
