// Rematerialization (opt/remat.h): on the samples' gradient tapes, the rewritten tape is
// valid, fits its budget and gives the same outputs bit for bit; what cannot be recomputed
// is kept; bad requests name what to change.
#include "opt/remat.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/plan.h"
#include "samples/cpp/models.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape {

namespace {

Tape traced_gradient(const std::string& file, const std::string& entry,
                     const std::vector<std::string>& args) {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(std::string(YTAPE_SOURCE_DIR "/samples/") + file);
  return grad::gradient(tracer::trace(program, entry, args).tape, {});
}

// The outputs of `a` and `b` on the same made-up inputs are the same bytes.
void check_bit_identical(const Tape& a, const Tape& b) {
  TensorMap inputs = complete_inputs(a, {}, 5);
  std::vector<Tensor> want = Executor(a).run(inputs), got = Executor(b).run(inputs);
  REQUIRE(want.size() == got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    CAPTURE(a.outputs[k].name);
    REQUIRE(want[k].type() == got[k].type());
    CHECK(std::memcmp(want[k].raw(), got[k].raw(), want[k].bytes()) == 0);
  }
}

size_t count(const Tape& t, Prim p) {
  size_t n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && op.prim == p;
  return n;
}

}  // namespace

TEST_CASE("remat fits a gradient tape to budgets and policies, outputs the same bits") {
  struct Case {
    const char* name;
    Tape tape;
  };
  std::vector<Case> cases;
  cases.push_back({"resnet18", traced_gradient("resnet18.jl", "loss", {"model", "image"})});
  cases.push_back({"mlp", traced_gradient("mlp.jl", "loss", {"model", "x", "labels"})});
  cases.push_back({"cpp mlp", grad::gradient(samples::mlp(6), {})});
  for (const Case& c : cases) {
    CAPTURE(c.name);
    int64_t before = plan_tape(c.tape).planned_bytes();
    for (double share : {0.9, 0.75, 0.6}) {
      CAPTURE(share);
      RematOptions o;
      o.budget_share = share;
      RematResult r;
      try {
        r = rematerialize(c.tape, o);
      } catch (const UserError& e) {
        // Out of reach: the message names the least peak, above the budget.
        CHECK(std::string(e.what()).find("below the least peak found") != std::string::npos);
        continue;
      }
      validate(r.tape);
      CHECK(r.peak_before == before);
      CHECK(r.peak_after == plan_tape(r.tape).planned_bytes());
      CHECK(r.peak_after <= share * before);
      CHECK(r.recomputed_flops <= r.flops_before);
      check_bit_identical(c.tape, r.tape);
    }
    for (const char* policy : {"dots", "nothing", "all-but-elementwise"}) {
      CAPTURE(policy);
      RematOptions o;
      set_remat_policy(o, policy);
      RematResult r = rematerialize(c.tape, o);
      validate(r.tape);
      check_bit_identical(c.tape, r.tape);
      // Nothing kept but what must be: each forward op the backward reads is recomputed.
      if (std::string(policy) == "nothing") CHECK(r.kept == 0);
      // Recomputing elementwise values never raises the plan (ResNet-18's would: kept as is).
      if (std::string(policy) == "all-but-elementwise") CHECK(r.peak_after <= r.peak_before);
    }
  }
}

TEST_CASE("remat halves ResNet-18's batch-8 gradient tape at a fraction of its work") {
  Tape g = traced_gradient("resnet18.jl", "loss", {"model", "f32[224,224,3,8]"});
  RematOptions o;
  o.budget_share = 0.5;
  RematResult r = rematerialize(g, o);
  CHECK(r.peak_after <= r.peak_before / 2);
  CHECK(r.recomputed_ops > 0);
  CHECK(r.recomputed_flops < 0.35 * r.flops_before);
  // Each recomputed op runs once: the tape grows by what was recomputed, no more.
  CHECK(r.tape.num_ops() == g.num_ops() + r.recomputed_ops);
}

// A layer of a transformer's MLP: a product, its bias, tanh-GELU's eight elementwise ops,
// a second product and a loss; its gradient tape.
Tape gelu_mlp_gradient() {
  Builder b("gelu");
  Type x_type{DType::f32, {16, 8}}, h_type{DType::f32, {32, 8}};
  Var x = b.input("x", x_type);
  Var w1 = b.input("w1", {DType::f32, {32, 16}});
  Var b1 = b.input("b1", h_type);
  Var w2 = b.input("w2", {DType::f32, {4, 32}});
  Var h = b.add(b.matmul(w1, x), b1);
  auto c = [&](double v) { return b.constant(DType::f32, v); };
  Var inner = b.mul(c(0.7978845608), b.add(h, b.mul(c(0.044715), b.mul(b.mul(h, h), h))));
  Var g = b.mul(b.mul(c(0.5), h), b.add(c(1), b.tanh(inner)));
  Var y = b.matmul(w2, g);
  b.output(b.sum(b.mul(y, y), {.dims = {1, 2}}), "loss");
  return grad::gradient(b.finish(), {});
}

// `g` rematerialized under `policy`: valid, the same bytes out, a lower plan, and no
// product recomputed.
RematResult remat_without_products(const Tape& g, const char* policy) {
  RematOptions o;
  set_remat_policy(o, policy);
  RematResult r = rematerialize(g, o);
  validate(r.tape);
  check_bit_identical(g, r.tape);
  CHECK(count(r.tape, Prim::matmul) == count(g, Prim::matmul));
  CHECK(r.peak_after < r.peak_before);
  return r;
}

TEST_CASE("all-but-elementwise recomputes an activation's intermediates, no product") {
  Tape g = gelu_mlp_gradient();
  RematResult r = remat_without_products(g, "all-but-elementwise");
  CHECK(count(r.tape, Prim::tanh) == count(g, Prim::tanh) + 1);  // GELU's tanh, again
  CHECK(r.recomputed_ops >= 3);
}

TEST_CASE("dots keeps a product under its bias for the recomputations that read it") {
  Tape g = gelu_mlp_gradient();
  RematResult r = remat_without_products(g, "dots");
  CHECK(count(r.tape, Prim::add) > count(g, Prim::add));  // the bias added, again
}

TEST_CASE("remat recomputes no random draw and keeps the tape's outputs") {
  Builder b("noisy");
  Var x = b.input("x", {DType::f32, {64}});
  Var noise = b.randn({.dtype = DType::f32, .shape = {64}});
  Var h = b.tanh(b.mul(b.exp(b.add(x, noise)), x));
  Var y = b.sin(b.tanh(h));
  b.output(b.sum(b.mul(y, y), {.dims = {1}}), "loss");
  b.output(h, "h");
  grad::GradOptions vjp;
  vjp.vjp = true;
  Tape g = grad::gradient(b.finish(), vjp);
  RematOptions o;
  o.saveable = remat_policy("nothing");
  RematResult r = rematerialize(g, o);
  validate(r.tape);
  CHECK(count(r.tape, Prim::randn) == 1);
  CHECK(count(r.tape, Prim::tanh) > count(g, Prim::tanh));  // the tanh of h recomputed
  CHECK(r.recomputed_ops > 0);
}

TEST_CASE("remat refuses what it cannot do, naming what to change") {
  Tape g = grad::gradient(samples::mlp(2), {});
  auto message = [&](const RematOptions& o, const Tape& t) {
    try {
      rematerialize(t, o);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  RematOptions none;
  CHECK(message(none, g).find("give a budget") != std::string::npos);
  RematOptions tiny;
  tiny.budget_bytes = 1;
  CHECK(message(tiny, g).find("below the least peak found") != std::string::npos);
  RematOptions wrong;
  wrong.budget_share = 0.5;
  wrong.forward_outputs = {"los"};
  CHECK(message(wrong, g).find("did you mean 'loss'") != std::string::npos);
  RematOptions forward_only;
  forward_only.budget_share = 0.5;
  CHECK(message(forward_only, samples::mlp(2)).find("no backward part") != std::string::npos);
  try {
    remat_policy("dot");
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("did you mean 'dots'") != std::string::npos);
  }
}

}  // namespace ytape
