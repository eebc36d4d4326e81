// The importer's rules for Mod, GatherND, ScatterND, Einsum, Resize, TopK, CumSum,
// ReduceProd, EyeLike, the windows, Upsample, GridSample, ConvTranspose's output_shape, DFT, STFT,
// MelWeightMatrix and MaxPool's dilations and storage order on small models, each compared with
// values worked out by hand from ONNX's definition (row-major).
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

// A Constant node defining `name` as the 1-D floats `v` (an initializer would be a weight).
void constant_floats(Model& m, const std::string& name, const std::vector<float>& v) {
  auto* a = m.node("Constant", {}, {name}).add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  a->mutable_t()->add_dims(static_cast<int64_t>(v.size()));
  for (float x : v) a->mutable_t()->add_float_data(x);
}

// MelWeightMatrix of 2 mel bins over the 9 bins of a 16-point DFT at 16 kHz, to `hi` Hz.
Model mel_model(float hi) {
  Model m(17);
  m.ints_initializer("mels", {}, {2});
  m.ints_initializer("length", {}, {16});
  m.ints_initializer("rate", {}, {16000});
  constant_floats(m, "lo", {0});
  constant_floats(m, "hi", {hi});
  m.node("MelWeightMatrix", {"mels", "length", "rate", "lo", "hi"}, {"w"}, "mel");
  m.output("w");
  return m;
}

}  // namespace

TEST_CASE("Mod of floats with fmod = 1 is C's fmod, the rem primitive; fmod = 0 is refused") {
  Model m;
  m.input("x", {5});
  m.input("y", {5});
  set_int(m.node("Mod", {"x", "y"}, {"z"}, "r"), "fmod", 1);
  m.output("z");
  OnnxImport imported = m.import();
  std::vector<Tensor> z = run(imported, {{"x", onnx_tensor({5}, {5.5f, -5.5f, 5.5f, -5.5f, 7})},
                                         {"y", onnx_tensor({5}, {2, 2, -2, -2, 3.5f})}});
  CHECK(values(z[0]) == std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f, 0});
  // ONNX defines fmod = 0, the remainder with the divisor's sign, for integers only.
  Model floored;
  floored.input("x", {2});
  floored.input("y", {2});
  floored.node("Mod", {"x", "y"}, {"z"}, "r");
  floored.output("z");
  CHECK(import_error(floored) ==
        "m.onnx: node 1 'r' (Mod, opset 13): Mod of floats needs fmod = 1 (ONNX's rule), not 0");
}

TEST_CASE("Pow of floats by a constant 2 or 3 is products, by another exponent pow") {
  for (float e : {2.0f, 3.0f, 2.5f}) {
    CAPTURE(e);
    Model m;
    m.input("x", {4});
    constant_floats(m, "e", {e});
    m.node("Pow", {"x", "e"}, {"y"}, "p");
    m.output("y");
    OnnxImport imported = m.import();
    int muls = 0, pows = 0;
    for (const Op& op : imported.tape.ops) {
      muls += op.prim == Prim::mul;
      pows += op.prim == Prim::pow;
    }
    CHECK(muls == (e == 2 ? 1 : e == 3 ? 2 : 0));
    CHECK(pows == (e == 2.5f ? 1 : 0));
    std::vector<float> x{1.5f, -2.0f, 0.1f, 3.0f};
    std::vector<float> y = values(run(imported, {{"x", onnx_tensor({4}, x)}})[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(i);
      // (x*x)*x, as the language's x^3, rounded twice; pow's once.
      float want = e == 2 ? x[i] * x[i] : e == 3 ? x[i] * x[i] * x[i] : std::pow(x[i], e);
      CHECK((std::isnan(want) ? std::isnan(y[i]) : y[i] == want));  // (-2)^2.5 is NaN
    }
  }
}

TEST_CASE("GatherND takes tuples, negative ones from the end, and slices for short ones") {
  Model m;
  m.input("x", {2, 2});
  m.ints_initializer("tuples", {2, 2}, {1, -2, 0, 1});
  m.ints_initializer("rows", {2, 1}, {1, 0});
  m.node("GatherND", {"x", "tuples"}, {"y"});
  m.node("GatherND", {"x", "rows"}, {"z"});
  m.output("y");
  m.output("z");
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({2, 2}, {0, 1, 2, 3})}});
  CHECK(values(out[0]) == std::vector<float>{2, 1});
  CHECK(out[1].shape() == Shape{2, 2});
  CHECK(values(out[1]) == std::vector<float>{2, 3, 0, 1});
  Model bad;
  bad.input("x", {2, 2});
  bad.ints_initializer("tuples", {1, 3}, {0, 0, 0});
  bad.node("GatherND", {"x", "tuples"}, {"y"}, "g");
  bad.output("y");
  CHECK(import_error(bad) ==
        "m.onnx: node 1 'g' (GatherND, opset 13): batch_dims 0 and index tuples of 3 do not fit "
        "data of rank 2 and indices of rank 2");
}

TEST_CASE("ScatterND replaces (reduction none) or adds to (add) what the tuples point at") {
  for (const char* reduction : {"none", "add"}) {
    CAPTURE(reduction);
    Model m(16);
    m.input("x", {8});
    m.input("u", {4});
    m.ints_initializer("at", {4, 1}, {4, 3, 1, 7});
    set_string(m.node("ScatterND", {"x", "at", "u"}, {"y"}), "reduction", reduction);
    m.output("y");
    std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({8}, {1, 2, 3, 4, 5, 6, 7, 8})},
                                               {"u", onnx_tensor({4}, {9, 10, 11, 12})}});
    std::vector<float> want = std::string(reduction) == "none"
                                  ? std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}
                                  : std::vector<float>{1, 13, 3, 14, 14, 6, 7, 20};
    CHECK(values(out[0]) == want);
  }
  Model bad;
  bad.input("x", {8});
  bad.input("u", {3});
  bad.ints_initializer("at", {4, 1}, {4, 3, 1, 7});
  bad.node("ScatterND", {"x", "at", "u"}, {"y"}, "s");
  bad.output("y");
  CHECK(import_error(bad) ==
        "m.onnx: node 1 's' (ScatterND, opset 13): updates have shape [3], the indices and data "
        "need [4] (ONNX order)");
}

TEST_CASE("Einsum: a matrix product, a diagonal, an implicit output, and bad equations") {
  Model m;
  m.input("a", {2, 3});
  m.input("b", {3, 2});
  m.input("s", {3, 3});
  set_string(m.node("Einsum", {"a", "b"}, {"ab"}), "equation", "ij, jk -> ik");
  set_string(m.node("Einsum", {"s"}, {"d"}), "equation", "ii->i");
  set_string(m.node("Einsum", {"b", "a"}, {"t"}), "equation", "ji,ij");  // no output labels
  m.output("ab");
  m.output("d");
  m.output("t");
  std::vector<Tensor> out =
      run(m.import(), {{"a", onnx_tensor({2, 3}, {1, 2, 3, 4, 5, 6})},
                       {"b", onnx_tensor({3, 2}, {1, 0, 0, 1, 1, 1})},
                       {"s", onnx_tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  CHECK(values(out[0]) == std::vector<float>{4, 5, 10, 11});
  CHECK(values(out[1]) == std::vector<float>{1, 5, 9});
  CHECK(values(out[2]) == std::vector<float>{1 + 3 + 5 + 6});  // the sum of a_ij b_ji
  Model bad;
  bad.input("a", {2, 3});
  set_string(bad.node("Einsum", {"a"}, {"y"}, "e"), "equation", "ij,jk->ik");
  bad.output("y");
  CHECK(import_error(bad) ==
        "m.onnx: node 1 'e' (Einsum, opset 13): the equation 'ij,jk->ik' has 2 terms for 1 inputs");
}

TEST_CASE("Resize: nearest, linear and cubic from the coordinate they map to") {
  Model m;
  m.input("x", {1, 2});
  constant_floats(m, "scales", {1, 2});
  onnx::NodeProto& nearest = m.node("Resize", {"x", "", "scales"}, {"n"});
  set_string(nearest, "coordinate_transformation_mode", "asymmetric");
  set_string(m.node("Resize", {"x", "", "scales"}, {"l"}), "mode", "linear");
  m.output("n");
  m.output("l");
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({1, 2}, {1, 2})}});
  CHECK(values(out[0]) == std::vector<float>{1, 1, 2, 2});
  // half_pixel: c = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, its ends at the edges.
  CHECK(values(out[1]) == std::vector<float>{1, 1.25f, 1.75f, 2});
  // Cubic, asymmetric: c = x / 2. At c = 0.5 the neighbours -1, 0, 1, 2 (the first cut to 0)
  // weigh -0.09375, 0.59375, 0.59375, -0.09375 (a = -0.75); exclude_outside drops the
  // first and divides by the rest's sum, 1.09375. Inside, cubic reproduces a line.
  for (int64_t exclude : {0, 1}) {
    Model cubic;
    cubic.input("x", {1, 4});
    constant_floats(cubic, "scales", {1, 2});
    onnx::NodeProto& r = cubic.node("Resize", {"x", "", "scales"}, {"y"});
    set_string(r, "mode", "cubic");
    set_string(r, "coordinate_transformation_mode", "asymmetric");
    set_int(r, "exclude_outside", exclude);
    cubic.output("y");
    std::vector<float> y =
        values(run(cubic.import(), {{"x", onnx_tensor({1, 4}, {1, 2, 3, 4})}})[0]);
    REQUIRE(y.size() == 8);
    CHECK(y[0] == 1);
    CHECK(y[1] == doctest::Approx(exclude ? 1.5 / 1.09375 : 1.40625));
    CHECK(y[2] == 2);
    CHECK(y[3] == doctest::Approx(2.5));
  }
  // A scale whose output would not fit is an error before anything is planned for it.
  Model huge;
  huge.input("x", {1, 2});
  constant_floats(huge, "scales", {1, 0x1p30f});
  huge.node("Resize", {"x", "", "scales"}, {"y"}, "r");
  huge.output("y");
  CHECK(
      import_error(huge) ==
      "m.onnx: node 2 'r' (Resize, opset 13): scale 1073741824 of an axis of 2 is not positive, or "
      "makes more than 2^22");
}

TEST_CASE("Upsample: nearest and linear from the coordinate x / scale, as Resize-10") {
  for (const char* mode : {"nearest", "linear"}) {
    CAPTURE(mode);
    Model m(9);
    m.input("x", {1, 2});
    constant_floats(m, "scales", {1, 2});
    set_string(m.node("Upsample", {"x", "scales"}, {"y"}), "mode", mode);
    m.output("y");
    std::vector<float> y = values(run(m.import(), {{"x", onnx_tensor({1, 2}, {1, 3})}})[0]);
    // At 0, 0.5, 1 and 1.5: linear cuts the last one's right neighbour to the axis.
    CHECK(y == (mode == std::string("nearest") ? std::vector<float>{1, 1, 3, 3}
                                               : std::vector<float>{1, 2, 3, 3}));
  }
}

TEST_CASE("TopK: sorted values and indices, the lower index first among equals") {
  Model m;
  m.input("x", {4});
  m.ints_initializer("k3", {3});
  m.ints_initializer("k2", {2});
  m.node("TopK", {"x", "k3"}, {"v", "i"});
  set_int(m.node("TopK", {"x", "k2"}, {"sv", "si"}), "largest", 0);
  for (const char* o : {"v", "i", "sv", "si"}) m.output(o);
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({4}, {3, -INFINITY, 3, 2})}});
  CHECK(values(out[0]) == std::vector<float>{3, 3, 2});
  CHECK(std::vector<int64_t>(out[1].span<const int64_t>().begin(),
                             out[1].span<const int64_t>().end()) == std::vector<int64_t>{0, 2, 3});
  CHECK(values(out[2]) == std::vector<float>{-INFINITY, 2});
  CHECK(std::vector<int64_t>(out[3].span<const int64_t>().begin(),
                             out[3].span<const int64_t>().end()) == std::vector<int64_t>{1, 3});
}

TEST_CASE("CumSum: inclusive and exclusive, forward and reverse, along the axis") {
  struct Case {
    int64_t exclusive, reverse;
    std::vector<float> want;
  };
  for (const Case& c : {Case{0, 0, {1, 3, 6, 10, 15}}, Case{1, 0, {0, 1, 3, 6, 10}},
                        Case{0, 1, {15, 14, 12, 9, 5}}, Case{1, 1, {14, 12, 9, 5, 0}}}) {
    CAPTURE(c.exclusive);
    CAPTURE(c.reverse);
    Model m;
    m.input("x", {2, 5});
    m.ints_initializer("axis", {}, {-1});
    onnx::NodeProto& n = m.node("CumSum", {"x", "axis"}, {"y"});
    set_int(n, "exclusive", c.exclusive);
    set_int(n, "reverse", c.reverse);
    m.output("y");
    std::vector<Tensor> y =
        run(m.import(), {{"x", onnx_tensor({2, 5}, {1, 2, 3, 4, 5, 1, 2, 3, 4, 5})}});
    std::vector<float> want = c.want;
    want.insert(want.end(), c.want.begin(), c.want.end());
    CHECK(values(y[0]) == want);
  }
  Model bad;
  bad.input("x", {3});
  bad.ints_initializer("axis", {2}, {0, 0});
  bad.node("CumSum", {"x", "axis"}, {"y"}, "c");
  bad.output("y");
  CHECK(import_error(bad) == "m.onnx: node 1 'c' (CumSum, opset 13): axis has 2 elements, not 1");
}

TEST_CASE("ReduceProd multiplies pairwise along each axis, odd lengths included") {
  Model m;
  m.input("x", {3, 5});
  set_ints(m.node("ReduceProd", {"x"}, {"rows"}), "axes", {1});
  set_int(m.node("ReduceProd", {"x"}, {"all"}), "keepdims", 0);
  m.output("rows");
  m.output("all");
  std::vector<float> x{1, 2, 3, 4, 5, 1, 1, 2, 1, 1, -1, 1, 1, 1, 0.5f};
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({3, 5}, x)}});
  CHECK(y[0].shape() == Shape{1, 3});
  CHECK(values(y[0]) == std::vector<float>{120, 2, -0.5f});
  CHECK(y[1].shape() == Shape{});
  CHECK(values(y[1]) == std::vector<float>{-120});
}

TEST_CASE("EyeLike: ones on the k-th diagonal, in the input's shape and the asked dtype") {
  Model m;
  m.input("x", {2, 3});
  set_int(m.node("EyeLike", {"x"}, {"y"}), "k", 1);
  set_int(m.node("EyeLike", {"x"}, {"z"}), "dtype", onnx::TensorProto_DataType_INT32);
  m.output("y");
  m.output("z");
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({2, 3}, std::vector<float>(6))}});
  CHECK(values(out[0]) == std::vector<float>{0, 1, 0, 0, 0, 1});
  CHECK(int_values(out[1]) == std::vector<int64_t>{1, 0, 0, 0, 1, 0});
}

TEST_CASE("the cosine windows, periodic and symmetric") {
  Model m(17);
  m.ints_initializer("size", {}, {4});
  m.node("HannWindow", {"size"}, {"hann"});
  set_int(m.node("BlackmanWindow", {"size"}, {"blackman"}), "periodic", 0);
  m.output("hann");
  m.output("blackman");
  std::vector<Tensor> out = run(m.import(), {});
  // 0.5 - 0.5 cos(2 pi n / 4); 0.42 - 0.5 cos(2 pi n / 3) + 0.08 cos(4 pi n / 3)
  std::vector<float> hann = values(out[0]), blackman = values(out[1]);
  std::vector<double> want_hann{0, 0.5, 1, 0.5}, want_blackman{0, 0.63, 0.63, 0};
  for (int i = 0; i < 4; ++i) {
    CHECK(hann[i] == doctest::Approx(want_hann[i]));
    CHECK(blackman[i] == doctest::Approx(want_blackman[i]).epsilon(1e-6));
  }
}

TEST_CASE("GridSample: the neighbours of each grid position, by mode and padding") {
  struct Case {
    std::string mode, padding;
    // At (0, 0), the centre: x = y = 0.5; and at (-1, -1), the outer side of the first
    // element: x = y = -0.5, whose neighbours -1 (0 with zeros padding) and 0 weigh 1/2 each,
    // which nearest rounds to 0 (half to even) and border clamps to 0.
    std::vector<float> want;
  };
  for (const Case& c : {Case{"bilinear", "zeros", {2.5f, 0.25f}}, Case{"nearest", "zeros", {1, 1}},
                        Case{"bilinear", "border", {2.5f, 1}}}) {
    CAPTURE(c.mode);
    CAPTURE(c.padding);
    Model m(16);
    m.input("x", {1, 1, 2, 2});
    m.input("grid", {1, 1, 2, 2});
    onnx::NodeProto& n = m.node("GridSample", {"x", "grid"}, {"y"});
    set_string(n, "mode", c.mode);
    set_string(n, "padding_mode", c.padding);
    m.output("y");
    std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({1, 1, 2, 2}, {1, 2, 3, 4})},
                                             {"grid", onnx_tensor({1, 1, 2, 2}, {0, 0, -1, -1})}});
    CHECK(values(y[0]) == c.want);
  }
  Model bad(16);
  bad.input("x", {1, 1, 2, 2});
  bad.input("grid", {1, 1, 2, 2});
  set_string(bad.node("GridSample", {"x", "grid"}, {"y"}, "g"), "mode", "area");
  bad.output("y");
  CHECK(
      import_error(bad) ==
      "m.onnx: node 1 'g' (GridSample, opset 16): mode 'area' is not nearest, bilinear or bicubic");
}

TEST_CASE("ConvTranspose's output_shape and auto_pad SAME_* give its pads") {
  // Ones over ones, stride 2: the full output is 1 1 2 1 2 1 1.
  struct Case {
    std::string auto_pad;
    std::vector<int64_t> output_shape;
    std::vector<float> want;
  };
  for (const Case& c : {Case{"NOTSET", {8}, {1, 1, 2, 1, 2, 1, 1, 0}},  // one more at the end
                        Case{"SAME_UPPER", {}, {1, 1, 2, 1, 2, 1}},     // 3 x 2: cut at the end
                        Case{"SAME_LOWER", {}, {1, 2, 1, 2, 1, 1}}}) {  // at the start
    CAPTURE(c.auto_pad);
    Model m;
    m.input("x", {1, 1, 3});
    m.initializer("w", {1, 1, 3}, {1, 1, 1});
    onnx::NodeProto& n = m.node("ConvTranspose", {"x", "w"}, {"y"});
    set_ints(n, "strides", {2});
    set_string(n, "auto_pad", c.auto_pad);
    if (!c.output_shape.empty()) set_ints(n, "output_shape", c.output_shape);
    m.output("y");
    CHECK(values(run(m.import(), {{"x", onnx_tensor({1, 1, 3}, {1, 1, 1})}})[0]) == c.want);
  }
}

TEST_CASE("ConvTranspose-1 reads as -11 but for auto_pad SAME_*, which it computed otherwise") {
  Model m(8);
  m.input("x", {1, 1, 3});
  m.initializer("w", {1, 1, 3}, {1, 1, 1});
  onnx::NodeProto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
  set_ints(n, "strides", {2});
  set_ints(n, "output_shape", {8});
  m.output("y");
  CHECK(values(run(m.import(), {{"x", onnx_tensor({1, 1, 3}, {1, 1, 1})}})[0]) ==
        std::vector<float>{1, 1, 2, 1, 2, 1, 1, 0});
  set_string(n, "auto_pad", "SAME_UPPER");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'up' (ConvTranspose, opset 8): ConvTranspose-1 with auto_pad SAME_UPPER "
        "is not supported");
}

TEST_CASE("DFT: products with the cosine and sine matrices, onesided, inverse") {
  Model m(17);
  m.input("x", {1, 4, 1});  // one real signal 1 2 3 4 along axis 1
  set_int(m.node("DFT", {"x"}, {"y"}), "onesided", 1);
  set_int(m.node("DFT", {"y"}, {"back"}), "inverse", 1);  // of the three frequencies: L = 3
  m.output("y");
  m.output("back");
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({1, 4, 1}, {1, 2, 3, 4})}});
  std::vector<float> y = values(out[0]), want{10, 0, -2, 2, -2, 0};  // (re, im) per frequency
  REQUIRE(y.size() == want.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-6));
  CHECK(out[1].shape() == Shape{2, 3, 1});
  Model bad(17);
  bad.input("x", {4, 2});
  set_int(bad.node("DFT", {"x"}, {"y"}, "f"), "axis", -1);
  bad.output("y");
  CHECK(import_error(bad) ==
        "m.onnx: node 1 'f' (DFT, opset 17): the axis is that of the real and imaginary parts");
}

TEST_CASE("STFT: the frames every frame_step, each transformed") {
  Model m(17);
  m.input("x", {1, 5, 1});
  m.ints_initializer("step", {}, {2});
  m.ints_initializer("length", {}, {3});
  m.node("STFT", {"x", "step", "", "length"}, {"y"});
  m.output("y");
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({1, 5, 1}, {1, 2, 3, 4, 5})}});
  CHECK(y[0].shape() == Shape{2, 2, 2, 1});  // ONNX's (1 batch, 2 frames, 2 frequencies, 2)
  // Frames 1 2 3 and 3 4 5: sums 6 and 12; at 1/3, -1.5 + (sqrt(3) / 2) i for both.
  std::vector<double> want{6, 0, -1.5, std::sqrt(3.0) / 2, 12, 0, -1.5, std::sqrt(3.0) / 2};
  std::vector<float> got = values(y[0]);
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

TEST_CASE("MelWeightMatrix: triangles between points evenly spaced in mels") {
  std::vector<Tensor> w = run(mel_model(8000).import(), {});
  // The points 0, 614, 1768 and 3933 Hz fall in the DFT bins 0, 0, 1 and 4 (of 9).
  CHECK(w[0].shape() == Shape{2, 9});
  std::vector<float> want(18, 0);
  want[0] = 1;                                          // mel bin 0: at bin 0 alone
  want[3] = 1, want[5] = 2.0f / 3, want[7] = 1.0f / 3;  // mel bin 1: rises to 1, falls to 4
  CHECK(values(w[0]) == want);
  CHECK(import_error(mel_model(1e30f)) ==
        "m.onnx: node 3 'mel' (MelWeightMatrix, opset 17): the upper edge is beyond the sample "
        "rate's half");
}

TEST_CASE("MaxPool with dilations: the max over the kernel's strided slices") {
  Model m;
  m.input("x", {1, 1, 4, 4});
  onnx::NodeProto& n = m.node("MaxPool", {"x"}, {"y"});
  set_ints(n, "kernel_shape", {2, 2});
  set_ints(n, "dilations", {2, 2});
  m.output("y");
  std::vector<float> x(16);
  std::iota(x.begin(), x.end(), 0);
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({1, 1, 4, 4}, x)}});
  CHECK(values(y[0]) == std::vector<float>{10, 11, 14, 15});  // taps 2 apart: the lower right
}

TEST_CASE("MaxPool's indices in column-major order (storage_order 1)") {
  Model m;
  m.input("x", {1, 2, 2, 3});
  onnx::NodeProto& n = m.node("MaxPool", {"x"}, {"y", "i"});
  set_ints(n, "kernel_shape", {2, 3});
  set_int(n, "storage_order", 1);
  m.output("y");
  m.output("i");
  // Plane 1's max at (h 1, w 1): 1 + 1 * 2 = 3; plane 2's at (0, 2): 0 + 2 * 2 + 6 = 10.
  std::vector<Tensor> out =
      run(m.import(), {{"x", onnx_tensor({1, 2, 2, 3}, {0, 1, 2, 3, 9, 5, 0, 1, 9, 3, 4, 5})}});
  CHECK(values(out[0]) == std::vector<float>{9, 9});
  CHECK(int_values(out[1]) == std::vector<int64_t>{3, 10});
}

}  // namespace ytape::onnx_test
