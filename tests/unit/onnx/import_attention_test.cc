// ONNX's written-out attention imports as the attention primitive (onnx/attention.h):
// recognized in the forms exporters write, left as its ops where the weights are read
// elsewhere, and the same results as the ops to rounding.
#include <doctest/doctest.h>

#include <cmath>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

constexpr int64_t kB = 2, kH = 3, kT = 5, kD = 4;

enum class Mask { none, hides, sees };

// y = softmax(q kᵀ / 2 [masked]) v of inputs q, k, v (b, h, t, d) as PyTorch writes it:
// q divided first (or, `scale_after`, the scores), k transposed by a Transpose, and the
// mask input (t, t) applied by a Where: -Inf where it is true (masked_fill, `hides`) or
// where it is false (`sees`).
Model written_out(Mask mask, bool scale_after = false) {
  Model m;
  for (const char* name : {"q", "k", "v"}) m.input(name, {kB, kH, kT, kD});
  if (mask != Mask::none) m.input("mask", {kT, kT}, onnx::TensorProto_DataType_BOOL);
  set_float(m.node("Constant", {}, {"two"}), "value_float", 2);
  set_float(m.node("Constant", {}, {"ninf"}), "value_float", -INFINITY);
  set_ints(m.node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
  if (scale_after) {
    m.node("MatMul", {"q", "kt"}, {"raw"});
    m.node("Div", {"raw", "two"}, {"s"});
  } else {
    m.node("Div", {"q", "two"}, {"qs"});
    m.node("MatMul", {"qs", "kt"}, {"s"});
  }
  std::string x = "s";
  if (mask == Mask::hides) m.node("Where", {"mask", "ninf", "s"}, {x = "x"});
  if (mask == Mask::sees) m.node("Where", {"mask", "s", "ninf"}, {x = "x"});
  set_int(m.node("Softmax", {x}, {"p"}), "axis", -1);
  m.node("MatMul", {"p", "v"}, {"y"});
  m.output("y");
  return m;
}

std::vector<float> numbers(int seed) {
  std::vector<float> v;
  for (int i = 0; i < kB * kH * kT * kD; ++i) v.push_back(std::sin(0.37f * i + seed) * 1.5f);
  return v;
}

// Query i sees keys 0..i: a causal mask, true where `hides` (PyTorch's triu(1)).
Tensor mask_tensor(bool hides) {
  Tensor t(Type{DType::boolean, {kT, kT}});
  for (int64_t i = 0; i < kT; ++i) {
    for (int64_t j = 0; j < kT; ++j) t.data<bool>()[j + kT * i] = (j > i) == hides;
  }
  return t;
}

// The reference in f64, row-major (b, h, t, d) as ONNX has it.
std::vector<double> reference(Mask mask) {
  std::vector<float> q = numbers(1), k = numbers(2), v = numbers(3);
  std::vector<double> y(q.size());
  auto at = [](int64_t s, int64_t t, int64_t c) { return (s * kT + t) * kD + c; };
  for (int64_t s = 0; s < kB * kH; ++s) {
    for (int64_t i = 0; i < kT; ++i) {
      std::vector<double> w(kT);
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < kT; ++j) {
        for (int64_t c = 0; c < kD; ++c) w[j] += q[at(s, i, c)] / 2.0 * k[at(s, j, c)];
        if (mask != Mask::none && j > i) w[j] = -INFINITY;
        m = std::max(m, w[j]);
      }
      for (double& e : w) sum += e = std::exp(e - m);
      for (int64_t c = 0; c < kD; ++c) {
        for (int64_t j = 0; j < kT; ++j) y[at(s, i, c)] += w[j] / sum * v[at(s, j, c)];
      }
    }
  }
  return y;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])));
  }
}

std::vector<float> run_model(const OnnxImport& g, Mask mask) {
  TensorMap in{{"q", onnx_tensor({kB, kH, kT, kD}, numbers(1))},
               {"k", onnx_tensor({kB, kH, kT, kD}, numbers(2))},
               {"v", onnx_tensor({kB, kH, kT, kD}, numbers(3))}};
  if (mask != Mask::none) in.emplace_back("mask", mask_tensor(mask == Mask::hides));
  return values(run(g, std::move(in))[0]);
}

}  // namespace

TEST_CASE("ONNX's written-out attention imports as the attention primitive") {
  for (Mask mask : {Mask::none, Mask::hides, Mask::sees}) {
    for (bool scale_after : {false, true}) {
      CAPTURE(static_cast<int>(mask));
      CAPTURE(scale_after);
      OnnxImport g = written_out(mask, scale_after).import();
      CHECK(count_prim(g.tape, Prim::attention) == 1);
      CHECK(count_prim(g.tape, Prim::softmax) == 0);
      CHECK(count_prim(g.tape, Prim::matmul) == 0);
      check_close(run_model(g, mask), reference(mask));
    }
  }
}

TEST_CASE("attention whose weights are read elsewhere stays as its ops") {
  Model m = written_out(Mask::hides);
  m.output("p");
  OnnxImport g = m.import();
  CHECK(count_prim(g.tape, Prim::attention) == 0);
  CHECK(count_prim(g.tape, Prim::softmax) == 1);
  check_close(run_model(g, Mask::hides), reference(Mask::hides));
  // A softmax over another dim is not attention's.
  Model other = written_out(Mask::none);
  onnx::NodeProto* softmax = other.g().mutable_node(other.g().node_size() - 2);
  REQUIRE(softmax->op_type() == "Softmax");
  softmax->mutable_attribute(0)->set_i(-2);
  CHECK(count_prim(other.import().tape, Prim::attention) == 0);
}

}  // namespace ytape::onnx_test
