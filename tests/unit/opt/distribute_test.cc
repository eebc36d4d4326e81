// distribute (opt/distribute.h): the tape of each rank, run by ranks that are threads of
// this process (ThreadGroup), computes what the tape computes in one process: the same
// outputs on every rank, to the bit, and within rounding of the one process's.
#include "opt/distribute.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "../runtime/kernel_harness.h"
#include "grad/grad.h"
#include "helpers.h"
#include "runtime/comm.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/parallel.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::passes_test {

namespace {

// Block r of n of the last dim of `t`.
Tensor block(const Tensor& t, int r, int n) {
  Type type = t.type();
  type.shape.back() /= n;
  const auto* bytes = static_cast<const uint8_t*>(t.raw());
  const int64_t size = t.bytes() / n;
  return Tensor::of_bytes(type, {bytes + r * size, static_cast<size_t>(size)});
}

// Runs `dist` on `ranks` threads, each with its block of the `split` inputs of `inputs`;
// returns each rank's outputs.
std::vector<std::vector<Tensor>> run_ranks(const Tape& dist, const TensorMap& inputs,
                                           const std::vector<std::string>& split, int ranks,
                                           uint64_t key) {
  ThreadGroup group(ranks, std::chrono::seconds(20));
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(ranks));
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  const int threads = num_threads();
  set_num_threads(1);  // the ranks are the threads
  std::vector<std::thread> team;
  for (int r = 0; r < ranks; ++r) {
    team.emplace_back([&, r] {
      try {
        TensorMap mine;
        for (const auto& [name, t] : inputs) {
          bool is_split = std::find(split.begin(), split.end(), name) != split.end();
          mine.emplace_back(name, is_split ? block(t, r, ranks) : t);
        }
        Executor e(dist);
        e.set_communicator(&group.communicator(r));
        e.set_random_key(key);
        outs[static_cast<size_t>(r)] = e.run(mine);
      } catch (const std::exception& ex) {
        errors[static_cast<size_t>(r)] = ex.what();
      }
    });
  }
  for (std::thread& t : team) t.join();
  set_num_threads(threads);
  for (const std::string& e : errors) REQUIRE_MESSAGE(e.empty(), e);
  return outs;
}

double relative_error(const Tensor& got, const Tensor& want) {
  std::vector<double> g = testing::to_doubles(got), w = testing::to_doubles(want);
  double worst = 0, scale = 0;
  for (double v : w) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, std::abs(g[i] - w[i]) / std::max(scale, 1e-30));
  }
  return worst;
}

// Distributes `t` for `ranks` and checks its runs against the one process's.
DistributeReport check_distributed(const Tape& t, const TensorMap& inputs,
                                   const std::vector<std::string>& split, int ranks, double rtol) {
  DistributeReport report;
  Tape dist = distribute(t, {.ranks = ranks, .split = split}, &report);
  validate(dist);
  CHECK(print_tape(distribute(t, {.ranks = ranks, .split = split})) == print_tape(dist));
  Executor one(t);
  one.set_random_key(7);
  std::vector<Tensor> want = one.run(inputs);
  std::vector<std::vector<Tensor>> got = run_ranks(dist, inputs, split, ranks, 7);
  for (int r = 0; r < ranks; ++r) {
    REQUIRE(got[r].size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO(t.name, " output ", t.outputs[i].name, " rank ", r);
      CHECK(same_bits(got[r][i], got[0][i]));
      CHECK(got[r][i].type() == want[i].type());
      CHECK(relative_error(got[r][i], want[i]) <= rtol);
    }
  }
  return report;
}

tracer::Traced trace_sample(const std::string& file, const std::string& entry,
                            const std::vector<std::string>& args) {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(std::string(YTAPE_SOURCE_DIR "/samples/") + file);
  return tracer::trace(program, entry, args);
}

}  // namespace

TEST_CASE("distribute: the digits CNN's training step on 2 and 4 ranks") {
  tracer::Traced t = trace_sample("digits.jl", "train_step", {"cnn", "opt_cnn", "step", "x", "y"});
  TensorMap inputs = complete_inputs(t.tape, t.inputs, 1);
  for (int ranks : {2, 4}) {
    DistributeReport r = check_distributed(t.tape, inputs, {"x", "y"}, ranks, 2e-5);
    CHECK(r.allreduces >= 1);
    CHECK(r.gathers == 0);  // batch norm's statistics are summed, not gathered
    CHECK(r.replicated.empty());
    CHECK(r.reduced_values >= 11 + 9);  // the 11 parameters' gradients, the statistics, the loss
  }
}

TEST_CASE("distribute: the digits MLP's training step; one rank is the tape itself") {
  tracer::Traced t = trace_sample("digits.jl", "train_step", {"mlp", "opt_mlp", "step", "x", "y"});
  TensorMap inputs = complete_inputs(t.tape, t.inputs, 1);
  DistributeReport r = check_distributed(t.tape, inputs, {"x", "y"}, 2, 2e-5);
  CHECK(r.gathers == 0);
  CHECK(r.replicated.empty());
  check_distributed(t.tape, inputs, {"x", "y"}, 1, 0);
}

TEST_CASE("distribute: gathered labels and their scattered gradient (mlp.jl)") {
  tracer::Traced t = trace_sample("mlp.jl", "loss", {"model", "x", "labels"});
  TensorMap inputs = complete_inputs(t.tape, t.inputs, 1);
  DistributeReport r = check_distributed(t.tape, inputs, {"x", "labels"}, 2, 2e-6);
  CHECK(r.gathers == 0);
  grad::GradOptions options;
  options.wrt = {"model.layers.1.weight", "x"};
  Tape g = grad::gradient(t.tape, options);
  r = check_distributed(g, complete_inputs(g, inputs, 2), {"x", "labels"}, 2, 2e-6);
  CHECK(r.gathers == 1);  // the gradient of x, an output: each rank returns all of it
  CHECK(r.replicated.empty());
}

TEST_CASE("distribute: the GPT's training step (embeddings, attention, layer norm)") {
  tracer::Traced t = trace_sample("gpt.jl", "train_step", {"model", "opt_state", "step", "tokens"});
  TensorMap inputs = complete_inputs(t.tape, t.inputs, 1);
  DistributeReport r = check_distributed(t.tape, inputs, {"tokens"}, 2, 2e-5);
  CHECK(r.gathers == 0);  // batched products split along their batch, embeddings by token
  CHECK(r.replicated.empty());
}

// Buckets of more than Communicator::kSmallBytes travel on the communicator's thread while
// the step goes on, which writes the sums into the outputs before the wait.
TEST_CASE("distribute: buckets in flight, and the update ordered by bucket") {
  tracer::Program program;
  program.run_text("big.jl", R"(using Flux, Optimisers
model = Chain(Dense(256 => 1024, relu), Dense(1024 => 512), Dense(512 => 10))
opt_state = Optimisers.setup(Descent(0.1f0), model)
x = rand(Float32, 256, 8)
y = Flux.onehotbatch(rand(1:10, 8), 1:10)
function train_step(model, opt_state, x, y)
  loss, grads = Flux.withgradient(m -> Flux.logitcrossentropy(m(x), y), model)
  opt_state, model = Optimisers.update(opt_state, model, grads[1])
  (model = model, opt_state = opt_state, loss = loss)
end
)");
  tracer::Traced t = tracer::trace(program, "train_step", {"model", "opt_state", "x", "y"});
  TensorMap inputs = complete_inputs(t.tape, t.inputs, 1);
  // Buckets of 1.5 MB: the 2 MB gradient alone, then the 1 MB one with the rest.
  const DistributeOptions o{.ranks = 2, .split = {"x", "y"}, .bucket_bytes = 3 << 19};
  DistributeReport r;
  Tape dist = distribute(t.tape, o, &r);
  CHECK(r.allreduces >= 2);
  check_distributed(t.tape, inputs, {"x", "y"}, 2, 2e-6);
  // The op after the last allreduce reads an earlier bucket's sums: the update of the
  // weights whose gradients travelled first comes first.
  size_t last = 0;
  std::vector<int> bucket(dist.types.size(), 0);
  int buckets = 0;
  for (size_t i = 0; i < dist.ops.size(); ++i) {
    const Op& op = dist.ops[i];
    if (op.kind != OpKind::call || op.prim != Prim::allreduce) continue;
    last = i, ++buckets;
    for (Var v : op.outs) bucket[v.id] = buckets;
  }
  int first_read = 0;
  for (size_t i = last + 1; i < dist.ops.size() && first_read == 0; ++i) {
    for (Var a : dist.ops[i].args) first_read = std::max(first_read, bucket[a.id]);
  }
  CHECK(first_read >= 1);
  CHECK(first_read < buckets);
}

TEST_CASE("distribute: rules and their fallbacks on a tape built by hand, in f64") {
  Builder b("hand");
  const Type x_type{DType::f64, {3, 4, 8}};
  Var x = b.input("x", x_type);
  Var w = b.input("w", {DType::f64, {5, 3}});
  Var flat = b.reshape(x, {.shape = {12, 8}});            // split stays last
  Var t = b.permutedims(x, {.perm = {3, 1, 2}});          // split moves to dim 1
  Var m = b.matmul(w, b.reshape(x, {.shape = {3, 32}}));  // split n
  Var g = b.matmul(flat, flat, {.transpose_b = true});    // split k: a sum
  Var s = b.softmax(flat, {.dims = {2}});                 // across the split: replicated
  Var top = b.maximum(t, {.dims = {1}});                  // a max over the ranks
  Var cut = b.slice(x, {.start = {1, 1, 3}, .stop = {3, 4, 6}, .step = {1, 1, 1}});
  Var both = b.concat({x, x}, {.dim = 1});
  Var scaled = b.mul(
      x, b.reshape(b.iota({.dtype = DType::f64, .shape = {8}, .dim = 1}), {.shape = {1, 1, 8}}));
  b.output(b.sum(flat, {.dims = {1, 2}}), "total");
  b.output(m, "m");
  b.output(g, "gram");
  b.output(s, "softmax");
  b.output(top, "top");
  b.output(cut, "cut");
  b.output(both, "both");
  b.output(scaled, "scaled");
  Tape tape = b.finish();
  TensorMap inputs = complete_inputs(tape, {}, 3);
  DistributeReport r = check_distributed(tape, inputs, {"x"}, 2, 1e-14);
  CHECK(r.replicated == std::vector<std::string>{"softmax", "slice"});
  check_distributed(tape, inputs, {"x"}, 4, 1e-14);
}

TEST_CASE("distribute: errors name what to fix") {
  Builder b("step");
  Var x = b.input("x", {DType::f32, {3, 6}});
  b.output(b.sum(x, {.dims = {2}}), "s");
  Tape t = b.finish();
  CHECK_THROWS_WITH(distribute(t, {.ranks = 4, .split = {"x"}}),
                    doctest::Contains("input 'x' (f32[3,6]) has a batch of 6, which 4 ranks"));
  CHECK_THROWS_WITH(distribute(t, {.ranks = 2, .split = {"xx"}}),
                    doctest::Contains("no input 'xx' to split; did you mean 'x'?"));
  Tape d = distribute(t, {.ranks = 2, .split = {"x"}});
  CHECK_THROWS_WITH(distribute(d, {.ranks = 2, .split = {"x"}}),
                    doctest::Contains("distribute the tape written for one process"));
  // Run in one process, the tape of 2 ranks says so.
  CHECK_THROWS_WITH(Executor(d).run(complete_inputs(d, {}, 1)),
                    doctest::Contains("distributed for 2 ranks, but this run has 1"));
}

}  // namespace ytape::passes_test
