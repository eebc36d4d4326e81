// The training samples write their gradients by hand (samples/digits_softmax.jl,
// samples/digits_mlp.jl); here each is compared with `ytape grad` of the same loss, on a
// batch of the digits.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "runtime/tensor_file.h"
#include "tracer/program.h"
#include "tracer/trace.h"
#include "train/data.h"

using namespace ytape;

namespace {

tracer::Traced traced(tracer::Interpreter& program, const std::string& entry,
                      const std::vector<std::string>& args) {
  return tracer::trace(program, entry, args);
}

// The first `n` samples of the digits' training file.
TensorMap digits_batch(int64_t n) {
  std::ifstream in(YTAPE_SOURCE_DIR "/samples/data/digits_train.safetensors", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<int64_t> first(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) first[static_cast<size_t>(i)] = i;
  TensorMap batch;
  for (auto& [name, t] : read_safetensors(bytes, "digits_train.safetensors")) {
    batch.emplace_back(name, gather_samples(t, first));
  }
  return batch;
}

// The value of each input of `t` in `given`, the last of a name winning.
TensorMap inputs_of(const Tape& t, const TensorMap& given) {
  TensorMap out;
  for (size_t i = 0; i < t.num_inputs(); ++i) {
    const Tensor* value = nullptr;
    for (const auto& [name, v] : given) {
      if (name == t.ops[i].name) value = &v;
    }
    if (value != nullptr) out.emplace_back(t.ops[i].name, *value);
  }
  return out;
}

const Tensor& output(const Tape& t, const std::vector<Tensor>& outs, std::string_view name) {
  for (size_t i = 0; i < outs.size(); ++i) {
    if (t.outputs[i].name == name) return outs[i];
  }
  FAIL("no output " << name);
  return outs[0];
}

// Largest |a - b| over the largest |b|: the hand-written gradient against ytape's.
double relative_difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.type() == b.type());
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(element_value(a, i) - element_value(b, i)));
    scale = std::max(scale, std::abs(element_value(b, i)));
  }
  REQUIRE(scale > 0);
  return diff / scale;
}

}  // namespace

TEST_CASE("the MLP sample's hand-written gradient is ytape grad's") {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(YTAPE_SOURCE_DIR "/samples/digits_mlp.jl");
  tracer::Traced step =
      traced(program, "masked_step", {"model", "opt_state", "x", "y", "f32[32,32]"});
  tracer::Traced loss = traced(program, "loss", {"model", "x", "y", "f32[32,32]"});
  Tape g = grad::gradient(loss.tape, {.wrt = {"model"}});
  // The example model and opt_state (zeros: the new velocity is the gradient), a batch.
  TensorMap values = step.inputs;
  for (auto& named : digits_batch(32)) values.push_back(named);
  Tensor mask(Type{DType::f32, {32, 32}});
  for (int64_t i = 0; i < mask.size(); ++i) mask.data<float>()[i] = i % 7 == 3 ? 0.f : 1 / 0.9f;
  values.emplace_back("mask", mask);
  Executor run_step(step.tape), run_grad(g);
  std::vector<Tensor> by_hand = run_step.run(inputs_of(step.tape, values));
  std::vector<Tensor> by_ytape = run_grad.run(inputs_of(g, values));
  for (std::string p : {"w1", "b1", "w2", "b2"}) {
    CAPTURE(p);
    CHECK(relative_difference(output(step.tape, by_hand, "out.opt_state." + p),
                              output(g, by_ytape, "grad.model." + p)) < 1e-5);
  }
}

TEST_CASE("the softmax regression sample's hand-written gradient is ytape grad's") {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(YTAPE_SOURCE_DIR "/samples/digits_softmax.jl");
  tracer::Traced step = traced(program, "train_step", {"model", "x", "y"});
  tracer::Traced loss = traced(program, "loss", {"model", "x", "y"});
  Tape g = grad::gradient(loss.tape, {.wrt = {"model"}});
  TensorMap values = step.inputs;  // the example model: zeros
  for (auto& named : digits_batch(32)) values.push_back(named);
  Executor run_step(step.tape), run_grad(g);
  std::vector<Tensor> by_hand = run_step.run(inputs_of(step.tape, values));
  std::vector<Tensor> by_ytape = run_grad.run(inputs_of(g, values));
  // From zeros, the step's new weights are -lr times the gradient, lr = 0.5.
  for (std::string p : {"weight", "bias"}) {
    CAPTURE(p);
    Tensor hand = output(step.tape, by_hand, "out.model." + p).clone();
    for (float& v : hand.span<float>()) v /= -0.5f;
    CHECK(relative_difference(hand, output(g, by_ytape, "grad.model." + p)) < 1e-5);
  }
}
