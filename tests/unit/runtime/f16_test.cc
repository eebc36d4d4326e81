// f16 on the runtime: a tape of f16 values runs as f32 arithmetic rounded to f16 after
// every op (runtime/lower_f16.h), checked against that rule applied by hand, op by op.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime/eval.h"
#include "runtime/executor.h"
#include "runtime/format.h"
#include "runtime/lower_f16.h"
#include "runtime/tensor_file.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "tape/float16.h"
#include "unit/runtime/kernel_harness.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

// y = tanh(W * x .+ b) .* 3, s = sum(y), z = convert(s, f64): a matmul, broadcasting, a
// constant, a reduction and a conversion out of f16, all in element type `d`.
Tape layer(DType d) {
  Builder b("layer");
  Var w = b.input("w", Type{d, {3, 4}});
  Var x = b.input("x", Type{d, {4, 2}});
  Var bias = b.input("b", Type{d, {3, 1}});
  Var y = b.mul(b.tanh(b.add(b.matmul(w, x), bias)), b.constant(d, 3.0));
  Var s = b.sum(y, {.dims = {1, 2}});
  b.output(y, "y");
  b.output(s, "s");
  b.output(b.convert(s, {.dtype = DType::f64}), "z");
  return b.finish();
}

// Every element of an f32 tensor rounded to f16 and widened back.
Tensor rounded(const Tensor& t) {
  Tensor out(t.type());
  for (int64_t i = 0; i < t.size(); ++i) {
    out.data<float>()[i] = f16_to_f32(f16_from_double(t.data<float>()[i]));
  }
  return out;
}

// The f32 tape run op by op, each float result rounded to f16.
std::vector<Tensor> rounded_per_op(const Tape& t, const TensorMap& inputs) {
  std::vector<Tensor> values(t.types.size());
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::input) {
      for (const auto& [name, v] : inputs) {
        if (name == op.name) values[op.outs[0].id] = v;
      }
    } else if (op.kind == OpKind::constant) {
      values[op.outs[0].id] = rounded(Tensor::of_bytes(t.type(op.outs[0]), op.value));
    } else {
      std::vector<const Tensor*> args;
      for (Var a : op.args) args.push_back(&values[a.id]);
      std::vector<Tensor> outs = evaluate(t, op, args);
      for (size_t i = 0; i < outs.size(); ++i) {
        values[op.outs[i].id] = outs[i].dtype() == DType::f32 ? rounded(outs[i]) : outs[i];
      }
    }
  }
  std::vector<Tensor> outs;
  for (const Output& o : t.outputs) outs.push_back(values[o.var.id]);
  return outs;
}

TensorMap layer_inputs(DType d) {
  return {{"w", random_tensor(Type{d, {3, 4}}, 1, -1, 1)},
          {"x", random_tensor(Type{d, {4, 2}}, 2, -1, 1)},
          {"b", random_tensor(Type{d, {3, 1}}, 3, -1, 1)}};
}

TensorMap converted(const TensorMap& m, DType d) {
  TensorMap out;
  for (const auto& [name, t] : m) {
    out.emplace_back(name, evaluate(Prim::convert, std::span(&t, 1), {{"dtype", d}})[0]);
  }
  return out;
}

}  // namespace

TEST_CASE("an f16 tape equals its f32 computation rounded to f16 after every op") {
  TensorMap inputs = layer_inputs(DType::f16);
  std::vector<Tensor> got = Executor(layer(DType::f16)).run(inputs);
  std::vector<Tensor> want = rounded_per_op(layer(DType::f32), converted(inputs, DType::f32));
  REQUIRE(got.size() == 3);
  CHECK(got[0].type() == Type{DType::f16, {3, 2}});
  CHECK(got[1].type() == Type{DType::f16, {}});
  CHECK(got[2].type() == Type{DType::f64, {}});
  for (size_t i = 0; i < 2; ++i) {
    Tensor g = converted({{"v", got[i]}}, DType::f32)[0].second;
    CHECK(same_bits(g, want[i]));
  }
  CHECK(got[2].data<double>()[0] == want[2].data<double>()[0]);
  // What `ytape run` prints: f16 values in their own shortest form.
  CHECK(element_str(got[1], 0) == float16_str(got[1].data<uint16_t>()[0]));
}

TEST_CASE("lowering keeps f16 inputs and outputs and widens everything between") {
  Tape t = layer(DType::f16);
  CHECK(has_f16(t));
  CHECK_FALSE(has_f16(layer(DType::f32)));
  Tape low = lower_f16(t);
  CHECK(low.num_inputs() == 3);
  CHECK(low.type(low.ops[0].outs[0]) == Type{DType::f16, {3, 4}});
  CHECK(low.type(low.outputs[0].var).dtype == DType::f16);
  CHECK(low.type(low.outputs[2].var).dtype == DType::f64);
  for (const Op& op : low.ops) {
    if (op.kind != OpKind::call || op.prim == Prim::convert) continue;
    for (Var a : op.args) CHECK(low.type(a).dtype != DType::f16);
    for (Var o : op.outs) CHECK(low.type(o).dtype != DType::f16);
  }
}

TEST_CASE("convert to f16 rounds once from f64 and reads f16 back exactly") {
  Tensor x = make_tensor(Type{DType::f64, {3}}, {1 + 0x1p-11 + 0x1p-40, 65520, -0x1p-25});
  Tensor h = evaluate(Prim::convert, std::span(&x, 1), {{"dtype", DType::f16}})[0];
  CHECK(h.data<uint16_t>()[0] == 0x3c01);
  CHECK(h.data<uint16_t>()[1] == 0x7c00);
  CHECK(h.data<uint16_t>()[2] == 0x8000);
  Tensor i = evaluate(Prim::convert, std::span(&h, 1), {{"dtype", DType::i64}})[0];
  CHECK(i.data<int64_t>()[0] == 1);
}

TEST_CASE("ops on f16 tensors evaluate outside a plan, as folding and the tracer do") {
  Tensor a = make_tensor(Type{DType::f16, {2}}, {1, 2048});
  Tensor b = make_tensor(Type{DType::f16, {2}}, {0x1p-11, 1});
  Tensor args[] = {a, b};
  Tensor s = evaluate(Prim::add, args, {})[0];
  CHECK(s.dtype() == DType::f16);
  CHECK(to_doubles(s) == std::vector<double>{1, 2048});  // both ties, to even
  Tensor f =
      evaluate(Prim::fill, {},
               {{"value", 0.1}, {"dtype", DType::f16}, {"shape", std::vector<int64_t>{2}}})[0];
  CHECK(f.data<uint16_t>()[0] == f16_from_double(0.1));
}

TEST_CASE("safetensors files hold f16 as F16 and refuse a wrong size") {
  TensorMap m = {{"h", make_tensor(Type{DType::f16, {2, 3}}, {1, 2, 3, 0.1, -0.5, 65504})}};
  TensorMap back = read_safetensors(write_safetensors(m), "h.safetensors");
  REQUIRE(back.size() == 1);
  CHECK(same_bits(back[0].second, m[0].second));
  std::vector<uint8_t> bytes = write_safetensors(m);
  bytes.pop_back();
  CHECK_THROWS_WITH_AS(read_safetensors(bytes, "h.safetensors"),
                       doctest::Contains("run past the end of the data"), UserError);
}
