// Export rules of the norm family: batch norm in plain ops (ReduceMean, ReduceSum, Sub, Mul,
// Sqrt, Reciprocal), with ytape's formulas.
#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

// Training form in plain ops, as ytape computes it: statistics over every axis but the
// channel axis (ONNX's 1), mean = E[x], invstd = 1/sqrt(E[(x - mean)²] + eps). ONNX's
// BatchNormalization in training mode would need running statistics, which ytape lacks.
struct BatchStats {
  std::string centered, invstd;  // x - mean, and 1/sqrt(var + eps) kept as (1, C, 1, ...)
  std::string mean;              // kept as (1, C, 1, ...)
};
std::vector<int64_t> non_channel_axes(Exporter& ex, Var x) {
  std::vector<int64_t> a = {0};
  for (int i = 2; i < rank(ex, x); ++i) a.push_back(i);
  return a;
}
std::string reduce_mean(Exporter& ex, const std::string& v, const std::vector<int64_t>& a) {
  onnx::NodeProto& n = ex.node("ReduceMean", {v});
  set_attr(n, "axes", a);
  return n.output(0);
}
BatchStats batch_stats(Exporter& ex, const Op& op, double eps) {
  DType d = ex.type(op.args[0]).dtype;
  std::vector<int64_t> a = non_channel_axes(ex, op.args[0]);
  BatchStats s;
  s.mean = reduce_mean(ex, in(ex, op, 0), a);
  s.centered = ex.node("Sub", {in(ex, op, 0), s.mean}).output(0);
  std::string var = reduce_mean(ex, ex.node("Mul", {s.centered, s.centered}).output(0), a);
  std::string sd = ex.node("Sqrt", {ex.node("Add", {var, ex.scalar(d, eps)}).output(0)}).output(0);
  s.invstd = ex.node("Reciprocal", {sd}).output(0);
  return s;
}
// A (C,) vector as (1, C, 1, ...), to broadcast over x, and back.
std::string kept(Exporter& ex, Var x, const std::string& v) {
  std::vector<int64_t> shape(rank(ex, x), 1);
  shape[1] = ex.type(x).shape[rank(ex, x) - 2];
  return ex.node("Reshape", {v, ex.ints(shape)}).output(0);
}
std::string channel_vector(Exporter& ex, Var x, const std::string& v) {
  return ex.node("Reshape", {v, ex.ints({ex.type(x).shape[rank(ex, x) - 2]})}).output(0);
}
// y = (x - mean) · invstd · scale + bias
std::string normalized(Exporter& ex, const Op& op, const BatchStats& s) {
  Var x = op.args[0];
  std::string xhat = ex.node("Mul", {s.centered, s.invstd}).output(0);
  std::string scaled = ex.node("Mul", {xhat, kept(ex, x, in(ex, op, 1))}).output(0);
  return ex.node("Add", {scaled, kept(ex, x, in(ex, op, 2))}).output(0);
}
void batchnorm(Exporter& ex, const Op& op) {
  BatchStats s = batch_stats(ex, op, attrs_of<Prim::batchnorm>(op.attrs).eps);
  ex.name(op.outs[0], normalized(ex, op, s));
}
void batchnorm_with_stats(Exporter& ex, const Op& op) {
  BatchStats s = batch_stats(ex, op, attrs_of<Prim::batchnorm_with_stats>(op.attrs).eps);
  ex.name(op.outs[0], normalized(ex, op, s));
  ex.name(op.outs[1], channel_vector(ex, op.args[0], s.mean));
  ex.name(op.outs[2], channel_vector(ex, op.args[0], s.invstd));
}
// With xhat = (x - mean) · invstd over M elements per channel: dbias = Σdy,
// dscale = Σ dy · xhat, dx = scale · invstd · (dy - dbias/M - xhat · dscale/M).
void batchnorm_backward(Exporter& ex, const Op& op) {
  Var x = op.args[1];
  DType d = ex.type(x).dtype;
  std::string axes = ex.ints(non_channel_axes(ex, x)), dy = in(ex, op, 0);
  auto sum = [&](const std::string& v) { return ex.node("ReduceSum", {v, axes}).output(0); };
  auto mul = [&](const std::string& a, const std::string& b) {
    return ex.node("Mul", {a, b}).output(0);
  };
  std::string invstd = kept(ex, x, in(ex, op, 4));
  std::string xhat =
      mul(ex.node("Sub", {in(ex, op, 1), kept(ex, x, in(ex, op, 3))}).output(0), invstd);
  std::string dbias = sum(dy), dscale = sum(mul(dy, xhat));
  double count =
      static_cast<double>(ex.type(x).size()) / static_cast<double>(ex.type(op.args[2]).size());
  std::string per = ex.scalar(d, 1 / count);
  std::string inner =
      ex.node("Sub", {ex.node("Sub", {dy, mul(dbias, per)}).output(0), mul(xhat, mul(dscale, per))})
          .output(0);
  ex.name(op.outs[0], mul(mul(kept(ex, x, in(ex, op, 2)), invstd), inner));
  ex.name(op.outs[1], channel_vector(ex, x, dscale));
  ex.name(op.outs[2], channel_vector(ex, x, dbias));
}

}  // namespace

void register_norm_export(ExportTable& t) {
  t.set(Prim::batchnorm, batchnorm);
  t.set(Prim::batchnorm_with_stats, batchnorm_with_stats);
  t.set(Prim::batchnorm_backward, batchnorm_backward);
}

}  // namespace ytape::onnx_export
