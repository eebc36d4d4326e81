// Properties of the passes on every sample's forward and gradient tape: each pass alone and
// the whole pipeline give valid tapes that compute the same outputs and print the same
// lines; optimizing is idempotent and deterministic, and never makes a tape longer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "grad/grad.h"
#include "helpers.h"
#include "io/json.h"
#include "opt/optimize.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "samples/cpp/models.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::passes_test {

namespace {

struct Sample {
  std::string name;
  Tape tape;
  TensorMap inputs;  // complete: example values, the rest made up
};

Sample traced(const std::string& file, const std::string& entry,
              const std::vector<std::string>& args) {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(std::string(YTAPE_SOURCE_DIR "/samples/") + file);
  tracer::Traced t = tracer::trace(program, entry, args);
  TensorMap inputs = complete_inputs(t.tape, std::move(t.inputs), 1);
  return {file, std::move(t.tape), std::move(inputs)};
}

Sample built(std::string name, Tape t) {
  TensorMap inputs = complete_inputs(t, {}, 1);
  return {std::move(name), std::move(t), std::move(inputs)};
}

// The gradient tape of `s`, on the same inputs plus made-up seeds.
Sample gradient_of(const Sample& s, bool vjp = false) {
  grad::GradOptions options;
  options.vjp = vjp;
  Tape g = grad::gradient(s.tape, options);
  TensorMap inputs = complete_inputs(g, s.inputs, 2);
  return {s.name + " gradient", std::move(g), std::move(inputs)};
}

const std::vector<Sample>& samples() {
  static const std::vector<Sample> all = [] {
    std::vector<Sample> v;
    v.push_back(traced("basics.jl", "main", {"x"}));
    v.push_back(gradient_of(v.back(), true));
    v.push_back(traced("mlp.jl", "loss", {"model", "x", "labels"}));
    v.push_back(gradient_of(v.back()));
    v.push_back(traced("resnet18.jl", "loss", {"model", "image"}));
    v.push_back(gradient_of(v.back()));
    v.push_back(built("cpp mlp", samples::mlp(4)));
    v.push_back(gradient_of(v.back()));
    v.push_back(built("scalar chain", samples::scalar_chain(3000)));
    v.push_back(gradient_of(v.back()));
    return v;
  }();
  return all;
}

struct Run {
  std::vector<Tensor> outputs;
  std::vector<std::string> printed;
};

Run run(const Tape& t, const TensorMap& inputs) {
  Run r;
  Executor e(t);
  e.set_print([&](std::string_view line) { r.printed.emplace_back(line); });
  r.outputs = e.run(inputs);
  return r;
}

// Outputs agree within rounding (passes change no arithmetic, but a kernel's threads may
// sum in another order when buffers are planned differently).
void check_same(const Run& want, const Run& got) {
  CHECK(want.printed == got.printed);
  REQUIRE(want.outputs.size() == got.outputs.size());
  for (size_t k = 0; k < want.outputs.size(); ++k) {
    const Tensor& a = want.outputs[k];
    const Tensor& b = got.outputs[k];
    REQUIRE(a.type() == b.type());
    int64_t bad = 0;
    for (int64_t i = 0; i < a.size(); ++i) {
      double x = element_value(a, i), y = element_value(b, i);
      bool same = x == y || (std::isnan(x) && std::isnan(y)) ||
                  std::abs(x - y) <= 1e-6 + 1e-5 * std::max(std::abs(x), std::abs(y));
      bad += !same;
    }
    CAPTURE(k);
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("each pass alone keeps every sample valid and its outputs the same") {
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    Run want = run(s.tape, s.inputs);
    for (const PassInfo& pass : all_passes()) {
      CAPTURE(pass.name);
      PassResult r = pass.run(s.tape);
      CHECK((r.changed == 0) == !r.tape);
      if (!r.tape) continue;
      validate(*r.tape);
      check_same(want, run(*r.tape, s.inputs));
    }
  }
}

TEST_CASE("optimize keeps every sample valid, its outputs the same, and never adds ops") {
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    Tape t = optimize(s.tape);
    validate(t);
    CHECK(t.num_ops() <= s.tape.num_ops());
    check_same(run(s.tape, s.inputs), run(t, s.inputs));
  }
}

TEST_CASE("optimize is idempotent and deterministic on every sample") {
  for (const Sample& s : samples()) {
    CAPTURE(s.name);
    std::string once = write_tape_json(optimize(s.tape));
    CHECK(write_tape_json(optimize(s.tape)) == once);
    std::vector<PassRun> log;
    Tape again = optimize(read_tape_json(once, s.name), {}, &log);
    CHECK(write_tape_json(again) == once);
    CHECK(log.size() == all_passes().size());
  }
}

TEST_CASE("optimize shortens the gradient tapes") {
  for (const Sample& s : samples()) {
    if (!s.name.ends_with("gradient")) continue;
    CAPTURE(s.name);
    CHECK(optimize(s.tape).num_ops() < s.tape.num_ops());
  }
}

}  // namespace ytape::passes_test
