// DFT (opset 17): the discrete Fourier transform along one axis as matrix products with
// constant cosine and sine matrices: for e^(-i 2 pi k n / L), Re y = C Re x + S Im x and
// Im y = C Im x - S Re x, with C[k, n] = cos(2 pi k n / L) and S[k, n] = sin(...); the
// inverse flips the sine's sign and divides by L. The signal is cut or zero-padded to
// dft_length L; onesided keeps the first L / 2 + 1 frequencies. ONNX's last axis holds the
// real and imaginary parts (real input: one), the tape's first dim.
#include <cmath>
#include <numbers>
#include <numeric>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

constexpr int64_t kMaxLength = int64_t{1} << 12;  // the matrices hold L^2 elements each

// cos (sine = false) or sin of 2 pi k n / L for k < rows, n < L, times `scale`: the tape's
// (rows, L) matrix.
Var trig_matrix(Importer& im, DType dtype, int64_t rows, int64_t length, bool sine, double scale) {
  Tensor t(Type{DType::f64, {rows, length}});
  for (int64_t n = 0; n < length; ++n) {
    for (int64_t k = 0; k < rows; ++k) {
      double angle = 2 * std::numbers::pi * static_cast<double>((k * n) % length) /
                     static_cast<double>(length);
      t.data<double>()[k + n * rows] = scale * (sine ? std::sin(angle) : std::cos(angle));
    }
  }
  Var m = im.constant(t);
  return dtype == DType::f64 ? m : im.op<Prim::convert>({m}, {.dtype = dtype});
}

// The product of the (rows, L) matrix `m` with `x` along its dim `dim` (of size L).
Var along(Importer& im, Var m, Var x, int dim) {
  Shape s = im.type(x).shape;
  std::vector<int64_t> perm{dim};
  for (int d = 1; d <= static_cast<int>(s.size()); ++d) {
    if (d != dim) perm.push_back(d);
  }
  Var moved = im.op<Prim::permutedims>({x}, {.perm = perm});
  Shape ms = im.type(moved).shape;
  int64_t rest = std::accumulate(ms.begin() + 1, ms.end(), int64_t{1}, std::multiplies<>());
  Var y = im.op<Prim::matmul>({m, im.reshape(moved, {ms[0], rest})});
  ms[0] = im.type(m).shape[0];
  std::vector<int64_t> back(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) back[perm[i] - 1] = static_cast<int64_t>(i) + 1;
  return im.op<Prim::permutedims>({im.reshape(y, ms)}, {.perm = back});
}

void dft(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  DType d = im.type(x).dtype;
  Shape s = im.type(x).shape;
  if (!is_float(d) || s.size() < 2 || (s[0] != 1 && s[0] != 2))
    user_error("the input must be floats whose last axis holds 1 or 2 parts");
  int dim = ydim(attr_int(n, "axis", 1), im.rank(x));
  if (dim == 1) user_error("the axis is that of the real and imaginary parts");
  bool inverse = attr_int(n, "inverse", 0) != 0, onesided = attr_int(n, "onesided", 0) != 0;
  if (inverse && onesided) unsupported("an inverse onesided DFT");
  int64_t have = s[dim - 1], length = have;
  if (im.has_input(n, 1)) length = static_cast<int64_t>(element_value(im.static_input(n, 1), 0));
  if (length < 1 || length > kMaxLength) user_error("dft_length {} is not in 1..4096", length);
  if (length < have) x = im.slice(x, dim, 0, length);
  if (length > have) x = im.pad(x, dim, 0, length - have);
  int64_t rows = onesided ? length / 2 + 1 : length;
  double scale = inverse ? 1.0 / static_cast<double>(length) : 1;
  Var c = trig_matrix(im, d, rows, length, false, scale);
  Var sn = trig_matrix(im, d, rows, length, true, inverse ? -scale : scale);
  Var re = im.slice(x, 1, 0, 1);
  Var y_re = along(im, c, re, dim), y_im = im.op<Prim::neg>({along(im, sn, re, dim)});
  if (s[0] == 2) {
    Var imag = im.slice(x, 1, 1, 1);
    y_re = im.op<Prim::add>({y_re, along(im, sn, imag, dim)});
    y_im = im.op<Prim::add>({y_im, along(im, c, imag, dim)});
  }
  im.set_output(n, 0, im.op<Prim::concat>({y_re, y_im}, {.dim = 1}));
}

}  // namespace

void add_spectral_rules(Rules& r) {
  r["DFT"] = dft;
}

}  // namespace ytape::onnx_import
