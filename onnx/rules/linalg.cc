// MatMul and Gemm. A row-major (M, K) matrix is the column-major (K, M) one, its
// transpose, so ONNX's A * B is, on the tape, matmul(B', A') with A', B' the tape's
// tensors: (A B)' = B' A'. Batch dims follow the first two and broadcast as in numpy.
#include <algorithm>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// `x` (a matrix and batch dims) broadcast to the batch dims `batch`.
Var to_batch(Importer& im, Var x, const Shape& batch) {
  Shape s = im.type(x).shape;
  Shape want{s[0], s[1]};
  want.insert(want.end(), batch.begin(), batch.end());
  if (s == want) return x;
  return im.op<Prim::broadcast_to>({x}, {.shape = want});
}

Shape broadcast_batch(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()) - 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i + 2 < a.size() ? a[i + 2] : 1, y = i + 2 < b.size() ? b[i + 2] : 1;
    if (x != y && x != 1 && y != 1) user_error("batch dims {} and {} do not broadcast", x, y);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

void matmul(Importer& im, const Node& n) {
  Var a = im.input(n, 0), b = im.input(n, 1);
  Shape sa = im.type(a).shape, sb = im.type(b).shape;
  if (sa.empty() || sb.empty()) user_error("MatMul of a scalar");
  // A vector a is a row (1, K), its tape form (K, 1); a vector b is a column (K, 1), (1, K).
  if (sa.size() == 1) a = im.reshape(a, {sa[0], 1});
  if (sb.size() == 1) b = im.reshape(b, {1, sb[0]});
  Shape batch = broadcast_batch(im.type(a).shape, im.type(b).shape);
  Var y = im.op<Prim::matmul>({to_batch(im, b, batch), to_batch(im, a, batch)});
  Shape out = im.type(y).shape;  // (N, M, batch...)
  if (sb.size() == 1) out.erase(out.begin());
  if (sa.size() == 1) out.erase(out.begin() + (sb.size() == 1 ? 0 : 1));
  im.set_output(n, 0, im.reshape(y, out));
}

// alpha * op(A) op(B) + beta * C; (op(A) op(B))' = op(B)' op(A)', and op(B)' is B' or its
// transpose as B is transposed or not.
void gemm(Importer& im, const Node& n) {
  Var a = im.input(n, 0), b = im.input(n, 1);
  bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
  Var y = im.op<Prim::matmul>({b, a}, {.transpose_a = tb, .transpose_b = ta});
  DType dt = im.type(y).dtype;
  double alpha = attr_float(n, "alpha", 1), beta = attr_float(n, "beta", 1);
  if (alpha != 1) y = im.op<Prim::mul>({y, im.scalar(dt, alpha)});
  if (im.has_input(n, 2)) {
    Var c = im.input(n, 2);
    if (beta != 1) c = im.op<Prim::mul>({c, im.scalar(dt, beta)});
    y = im.op<Prim::add>({y, c});
  }
  im.set_output(n, 0, y);
}

}  // namespace

void add_linalg_rules(Rules& r) {
  r["MatMul"] = matmul;
  r["Gemm"] = gemm;
}

}  // namespace ytape::onnx_import
