// DFT and STFT (opset 17): the discrete Fourier transform along one axis as matrix products
// with constant cosine and sine matrices: for e^(-i 2 pi k n / L), Re y = C Re x + S Im x and
// Im y = C Im x - S Re x, with C[k, n] = cos(2 pi k n / L) and S[k, n] = sin(...); the
// inverse flips the sine's sign and divides by L. The signal is cut or zero-padded to
// dft_length L; onesided keeps the first L / 2 + 1 frequencies. ONNX's last axis holds the
// real and imaginary parts (real input: one), the tape's first dim. And MelWeightMatrix,
// the constant that maps a spectrogram's bins to mel bins.
#include <cmath>
#include <numbers>
#include <numeric>
#include <optional>

#include "onnx/importer.h"
#include "onnx/proto.h"

namespace ytape::onnx_import {

namespace {

// The matrices are constants of the tape, of L^2 elements each: bounded as folded values are.
constexpr int64_t kMaxLength = 256;

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

// The DFT of `x` (parts first) along `dim`, of its full length, `rows` frequencies.
Var transform(Importer& im, Var x, int dim, int64_t rows, bool inverse) {
  DType d = im.type(x).dtype;
  int64_t length = im.type(x).shape[dim - 1];
  double scale = inverse ? 1.0 / static_cast<double>(length) : 1;
  Var c = trig_matrix(im, d, rows, length, false, scale);
  Var sn = trig_matrix(im, d, rows, length, true, inverse ? -scale : scale);
  Var re = im.slice(x, 1, 0, 1);
  Var y_re = along(im, c, re, dim), y_im = im.op<Prim::neg>({along(im, sn, re, dim)});
  if (im.type(x).shape[0] == 2) {
    Var imag = im.slice(x, 1, 1, 1);
    y_re = im.op<Prim::add>({y_re, along(im, sn, imag, dim)});
    y_im = im.op<Prim::add>({y_im, along(im, c, imag, dim)});
  }
  return im.op<Prim::concat>({y_re, y_im}, {.dim = 1});
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
  if (im.has_input(n, 1)) length = im.static_integer(n, 1);
  if (length < 1 || length > kMaxLength)
    user_error("a transform of {} points is not of 1 to {}", length, kMaxLength);
  if (length < have) x = im.slice(x, dim, 0, length);
  if (length > have) x = im.pad(x, dim, 0, length - have);
  im.set_output(n, 0, transform(im, x, dim, onesided ? length / 2 + 1 : length, inverse));
}

// STFT (opset 17): signal (batch, length, parts); the frames of frame_length every
// frame_step gathered at once (the tape's (parts, frame_length frames, batch)), times the
// window, each transformed: (batch, frames, frequencies, 2).
void stft(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Shape s = im.type(x).shape;  // (parts, length, batch)
  if (!is_float(im.type(x).dtype) || s.size() != 3 || (s[0] != 1 && s[0] != 2))
    user_error("the signal must be floats of shape (batch, length, 1 or 2)");
  int64_t step = im.static_integer(n, 1), frame = -1;
  if (im.has_input(n, 3)) frame = im.static_integer(n, 3);
  std::optional<Var> window;
  if (im.has_input(n, 2)) {
    window = im.input(n, 2);
    if (im.rank(*window) != 1) user_error("the window has rank {}, not 1", im.rank(*window));
    if (frame < 0) frame = im.type(*window).shape[0];
    if (im.type(*window).shape[0] != frame) user_error("the window is not frame_length long");
  }
  if (step < 1 || frame < 1 || frame > std::min(s[1], kMaxLength))
    user_error("frame_step {} and frame_length {} do not fit a signal of {}", step, frame, s[1]);
  int64_t frames = (s[1] - frame) / step + 1;
  if (frames > (int64_t{1} << 24) / frame)
    user_error("{} frames of {} are too many", frames, frame);
  Tensor at(Type{DType::i64, {1, frame * frames, 1}});
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t j = 0; j < frame; ++j) at.data<int64_t>()[f * frame + j] = f * step + j + 1;
  }
  Var framed = im.op<Prim::gather>({x, im.constant(at)}, {.dim = 2});
  framed = im.reshape(framed, {s[0], frame, frames, s[2]});
  if (window) framed = im.op<Prim::mul>({framed, im.reshape(*window, {1, frame, 1, 1})});
  bool onesided = attr_int(n, "onesided", 1) != 0;
  im.set_output(n, 0, transform(im, framed, 2, onesided ? frame / 2 + 1 : frame, false));
}

// MelWeightMatrix (opset 17), a constant of its static inputs, as ONNX's reference builds
// it: num_mel_bins + 2 points evenly spaced in mels from the lower to the upper edge (a step
// of the span over num_mel_bins + 2, as the reference has it), each moved to its DFT bin
// floor((dft_length + 1) hz / sample_rate); mel bin i rises linearly from point i to point
// i + 1 and falls to point i + 2, over the dft_length / 2 + 1 spectrogram bins.
void mel_weight_matrix(Importer& im, const Node& n) {
  double mels = im.static_number(n, 0), length = im.static_number(n, 1),
         rate = im.static_number(n, 2), lo = im.static_number(n, 3), hi = im.static_number(n, 4);
  if (!(mels >= 1 && mels <= 4096 && length >= 1 && length <= 65536 && rate > 0 && lo >= 0 &&
        hi >= lo))
    user_error("num_mel_bins, dft_length, sample_rate or the edges are not valid");
  auto bins = static_cast<int64_t>(length) / 2 + 1, count = static_cast<int64_t>(mels);
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double step = (mel(hi) - mel(lo)) / static_cast<double>(count + 2);
  std::vector<int64_t> at(count + 2);
  for (int64_t i = 0; i < count + 2; ++i) {
    double hz = 700 * (std::pow(10, (static_cast<double>(i) * step + mel(lo)) / 2595) - 1);
    double bin = std::floor((length + 1) * hz / rate);
    if (!(bin >= 0 && bin < static_cast<double>(bins)))
      user_error("the upper edge is beyond the sample rate's half");
    at[i] = static_cast<int64_t>(bin);
  }
  Tensor w(Type{DType::f64, {count, bins}});  // ONNX's (bins, num_mel_bins)
  auto put = [&](int64_t j, int64_t i, double v) { w.data<double>()[j * count + i] = v; };
  for (int64_t i = 0; i < count; ++i) {
    int64_t left = at[i], center = at[i + 1], right = at[i + 2];
    if (center == left) put(center, i, 1);
    for (int64_t j = left; center > left && j <= center; ++j)
      put(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = center; j < right; ++j)
      put(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  auto to = static_cast<int32_t>(attr_int(n, "output_datatype", onnx::TensorProto_DataType_FLOAT));
  std::optional<DType> dtype = to_dtype(to, true);
  if (!dtype) unsupported("MelWeightMatrix of " + onnx_dtype_name(to));
  im.set_output(n, 0, im.op<Prim::convert>({im.constant(w)}, {.dtype = *dtype}));
}

}  // namespace

void add_spectral_rules(Rules& r) {
  r["MelWeightMatrix"] = mel_weight_matrix;
  r["DFT"] = dft;
  r["STFT"] = stft;
}

}  // namespace ytape::onnx_import
