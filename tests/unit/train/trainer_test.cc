#include "train/trainer.h"

#include <doctest/doctest.h>

#include "runtime/tensor_file.h"
#include "tape/digest.h"
#include "tape/error.h"
#include "unit/train/helpers.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

TrainOptions options(int64_t epochs, uint64_t seed = 1) {
  TrainOptions o;
  o.epochs = epochs;
  o.seed = seed;
  return o;
}

// Runs to the end and returns the checkpoint written last.
std::vector<uint8_t> train(Trainer& t, TrainEnd want = TrainEnd::finished) {
  std::vector<uint8_t> saved;
  TrainHooks hooks;
  hooks.save = [&](std::span<const uint8_t> bytes) { saved.assign(bytes.begin(), bytes.end()); };
  CHECK(t.run(hooks) == want);
  return saved;
}

}  // namespace

TEST_CASE("training carries the state and reports the mean loss of every epoch") {
  Tape step = mean_step(2);
  Trainer t(step, "step.json", ramp_data(5), mean_init(), "init.st", options(3));
  std::vector<EpochReport> epochs;
  int steps = 0;
  TrainHooks hooks;
  hooks.step = [&](const StepReport& r) {
    ++steps;
    CHECK(r.steps_per_epoch == 2);  // 5 samples in batches of 2: the last one is dropped
    CHECK(r.loss.has_value());
  };
  hooks.epoch = [&](const EpochReport& r) { epochs.push_back(r); };
  CHECK(t.run(hooks) == TrainEnd::finished);
  CHECK(steps == 6);
  REQUIRE(epochs.size() == 3);
  CHECK(epochs[2].epoch == 3);
  CHECK(epochs[2].steps == 2);
  REQUIRE(epochs[0].mean_loss.has_value());
  CHECK(*epochs[2].mean_loss < *epochs[0].mean_loss);
  TensorMap state = t.state();
  REQUIRE(state.size() == 2);
  CHECK(state[0].first == "w");
  CHECK(state[1].first == "count");
  CHECK(state[1].second.data<float>()[0] == 6);  // one per step
  CHECK(t.position() == Position{4, 0, 6, 0});
}

TEST_CASE("a resumed run ends byte-identical to an uninterrupted one") {
  Tape step = mean_step(2, true);
  Trainer whole(step, "step.json", ramp_data(7), mean_init(), "init.st", options(4));
  std::vector<uint8_t> final_checkpoint = train(whole);
  for (int64_t stop : {1, 3, 4, 11}) {
    CAPTURE(stop);
    TrainOptions first = options(4);
    first.max_steps = stop;
    Trainer a(step, "step.json", ramp_data(7), mean_init(), "init.st", first);
    std::vector<uint8_t> checkpoint = train(a, TrainEnd::max_steps);
    Checkpoint c = read_checkpoint(checkpoint, "ck.st");
    CHECK(c.position.global_step == stop);
    Trainer b(step, "step.json", ramp_data(7), mean_init(), "init.st", options(4));
    b.resume(c, "ck.st");
    CHECK(train(b) == final_checkpoint);
    CHECK(write_safetensors(b.state()) == write_safetensors(whole.state()));
  }
}

TEST_CASE("every step has its own random key, a function of the seed") {
  Tape step = mean_step(2, true);
  auto count = [&](uint64_t seed) {
    Trainer t(step, "step.json", ramp_data(4), mean_init(), "init.st", options(2, seed));
    train(t);
    return t.state()[1].second.data<float>()[0];
  };
  float c = count(1);
  CHECK(c == count(1));
  CHECK(c != count(2));
  // Four draws in [0, 1): the same key every step would give 4 times one draw.
  Builder b("r");
  b.output(b.rand({.dtype = DType::f32, .shape = {}, .seed = 7}), "r");
  Tape one = b.finish();
  Executor ex(one);
  ex.set_random_key(step_key(1, 0));
  CHECK(c != 4 * ex.run({})[0].data<float>()[0]);
}

TEST_CASE("checkpoints write the position as metadata and read it back") {
  Checkpoint c{{{"w", tensor(f32({2}), {1, 2})}},
               {3, 5, 17, 0.1 + 0.2},
               {42, false, 8, 100, 0, "0123456789abcdef"}};
  std::vector<uint8_t> bytes = write_checkpoint(c);
  TensorFileMetadata metadata;
  read_safetensors(bytes, "ck", &metadata);
  CHECK(metadata == TensorFileMetadata{{"format", "ytape-train-checkpoint-2"},
                                       {"step_tape", "0123456789abcdef"},
                                       {"epoch", "3"},
                                       {"step", "5"},
                                       {"global_step", "17"},
                                       {"loss_sum", "0.30000000000000004"},
                                       {"seed", "42"},
                                       {"shuffle", "false"},
                                       {"batch_size", "8"},
                                       {"samples", "100"}});
  Checkpoint back = read_checkpoint(bytes, "ck");
  CHECK(back.position == c.position);
  CHECK(back.run == c.run);
  REQUIRE(back.state.size() == 1);
  CHECK(same_bits(back.state[0].second, c.state[0].second));
  CHECK_THROWS_WITH_AS(read_checkpoint(write_safetensors(c.state), "ck"),
                       "ck: not a training checkpoint of ytape train (its metadata has no "
                       "'format')",
                       UserError);
}

TEST_CASE("training errors name the input and the file to fix") {
  Tape step = mean_step(2);
  TensorMap init = mean_init();
  init.erase(init.begin() + 1);  // lr
  CHECK_THROWS_WITH_AS(Trainer(step, "step.json", ramp_data(5), init, "init.st", options(1)),
                       "step.json: input 'lr' (f32[]) has no value: init.st (--init) has no "
                       "tensor 'lr'",
                       UserError);
  CHECK_THROWS_WITH_AS(Trainer(step, "step.json", ramp_data(5), {}, "", options(1)),
                       "step.json: input 'w' (f32[2]) has no value: give --init (the trace's "
                       "--save-inputs file)",
                       UserError);
  init = mean_init();
  init[1].second = tensor(f32({1}), {0.5});
  CHECK_THROWS_WITH_AS(Trainer(step, "step.json", ramp_data(5), init, "init.st", options(1)),
                       "step.json: input 'lr' is f32[], but init.st (--init) holds f32[1]",
                       UserError);
  Trainer t(step, "step.json", ramp_data(5), mean_init(), "init.st", options(1, 3));
  Checkpoint c{t.state(), {}, {4, true, 2, 5}};
  CHECK_THROWS_WITH_AS(t.resume(c, "ck.st"),
                       "ck.st was written by a run with --seed 4, not 3: give the same --seed to "
                       "resume",
                       UserError);
  c.run = {3, true, 4, 5};
  CHECK_THROWS_WITH_AS(t.resume(c, "ck.st"),
                       "ck.st was written by a run with batch size 4 over 5 samples, but step.json "
                       "has batch size 2 and train.safetensors has 5 samples",
                       UserError);
}

// A checkpoint whose metadata was edited (or that belongs to another tape) is refused
// before anything runs: its position must be one that this run reaches.
TEST_CASE("a resumed checkpoint must belong to the step tape and hold a position it reaches") {
  Tape step = mean_step(2);
  Trainer t(step, "step.json", ramp_data(5), mean_init(), "init.st", options(3));
  Checkpoint c{t.state(), {2, 1, 3, 0}, {1, true, 2, 5, 0, tape_digest(step)}};
  t.resume(c, "ck.st");  // epoch 2, step 1: 2 steps an epoch before it
  CHECK(t.position() == c.position);
  Checkpoint other = c;
  other.run.tape = tape_digest(mean_step(2, true));
  CHECK_THROWS_WITH_AS(t.resume(other, "ck.st"),
                       fmt::format("ck.st was written by a run of another step tape (digest {}; "
                                   "step.json has {}): resume with the step tape it belongs to",
                                   other.run.tape, c.run.tape)
                           .c_str(),
                       UserError);
  auto at = [&](Position p) {
    Checkpoint bad = c;
    bad.position = p;
    return bad;
  };
  CHECK_THROWS_WITH_AS(t.resume(at({1, 3, 3, 0}), "ck.st"),
                       "ck.st is at step 3 of epoch 1, but an epoch of step.json has 2 steps",
                       UserError);
  CHECK_THROWS_WITH_AS(t.resume(at({2, 1, int64_t{1} << 62, 0}), "ck.st"),
                       "ck.st is at global step 4611686018427387904, but epoch 2 and step 1 at 2 "
                       "steps an epoch make 3",
                       UserError);
  CHECK_THROWS_WITH_AS(t.resume(at({int64_t{1} << 62, 0, 0, 0}), "ck.st"),
                       "ck.st is at epoch 4611686018427387904, past the 3 epochs of this run: "
                       "give --epochs 4611686018427387903 or more to continue it",
                       UserError);
  // A format-1 checkpoint has no digest: it resumes, checked for all the rest.
  Checkpoint old = c;
  old.run.tape.clear();
  t.resume(old, "ck.st");
}

TEST_CASE("evaluation averages float scalar outputs over complete batches") {
  Tape step = mean_step(2);
  Builder b("eval");
  Var w = b.input("w", f32({2}));
  Var x = b.input("x", f32({2, 3}));
  Var mean = b.div(b.sum(x, {.dims = {1, 2}}), b.constant(DType::f32, 6.0));
  b.output(b.add(mean, b.sum(w, {.dims = {1}})), "out.score");
  b.output(w, "out.w");  // not a scalar: not reported
  Tape eval = b.finish();
  Trainer t(step, "step.json", ramp_data(4), mean_init(), "init.st", options(1));
  t.set_eval(eval, "eval.json", ramp_data(7));
  std::vector<EpochReport> reports;
  TrainHooks hooks;
  hooks.epoch = [&](const EpochReport& r) { reports.push_back(r); };
  t.run(hooks);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].eval_samples == 6);
  CHECK(reports[0].eval_total == 7);
  REQUIRE(reports[0].eval.size() == 1);
  CHECK(reports[0].eval[0].name == "score");
  // Each sample's two values cancel: the score is the trained w's sum.
  const float* w_now = t.state()[0].second.data<float>();
  CHECK(reports[0].eval[0].value == doctest::Approx(w_now[0] + w_now[1]));
}

TEST_CASE("a stop asked by the hook ends the run after that step, with its checkpoint") {
  Tape step = mean_step(2, true);
  Trainer whole(step, "step.json", ramp_data(7), mean_init(), "init.st", options(2));
  train(whole);
  Trainer a(step, "step.json", ramp_data(7), mean_init(), "init.st", options(2));
  std::vector<uint8_t> saved;
  int steps = 0;
  TrainHooks hooks;
  hooks.step = [&](const StepReport&) { ++steps; };
  hooks.save = [&](std::span<const uint8_t> bytes) { saved.assign(bytes.begin(), bytes.end()); };
  hooks.stop = [&] { return steps == 4; };
  CHECK(a.run(hooks) == TrainEnd::stopped);
  Checkpoint c = read_checkpoint(saved, "ck.st");
  CHECK(c.position == Position{2, 1, 4, c.position.loss_sum});
  Trainer b(step, "step.json", ramp_data(7), mean_init(), "init.st", options(2));
  b.resume(c, "ck.st");
  train(b);
  CHECK(write_safetensors(b.state()) == write_safetensors(whole.state()));
}

TEST_CASE("--keep-last trains on each epoch's last incomplete batch with its own tape") {
  Tape step = mean_step(2), last = mean_step(1);
  TrainOptions o = options(2);
  o.shuffle = false;
  Trainer t(step, "step.json", ramp_data(5), mean_init(), "init.st", o);
  t.set_last_step(last, "last.json");
  CHECK(t.steps_per_epoch() == 3);
  std::vector<EpochReport> epochs;
  TrainHooks hooks;
  hooks.epoch = [&](const EpochReport& r) { epochs.push_back(r); };
  CHECK(t.run(hooks) == TrainEnd::finished);
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[0].steps == 3);
  // w <- w - 0.5 (w - mean(batch)) over the batches {0, 1}, {2, 3}, {4} of each epoch.
  TensorMap state = t.state();
  CHECK(state[0].second.data<float>()[0] == 3.0234375f);
  CHECK(state[0].second.data<float>()[1] == -3.0234375f);
  CHECK(state[1].second.data<float>()[0] == 6);
  CHECK(t.position() == Position{3, 0, 6, 0});
}

TEST_CASE("a resumed --keep-last run ends byte-identical; the option must match") {
  Tape step = mean_step(2, true), last = mean_step(1, true);
  auto trainer = [&](TrainOptions o) {
    auto t = std::make_unique<Trainer>(step, "step.json", ramp_data(5), mean_init(), "init.st", o);
    t->set_last_step(last, "last.json");
    return t;
  };
  std::unique_ptr<Trainer> whole = trainer(options(3));
  std::vector<uint8_t> final_checkpoint = train(*whole);
  for (int64_t stop : {2, 3, 5}) {
    CAPTURE(stop);
    TrainOptions first = options(3);
    first.max_steps = stop;
    std::unique_ptr<Trainer> a = trainer(first);
    Checkpoint c = read_checkpoint(train(*a, TrainEnd::max_steps), "ck.st");
    std::unique_ptr<Trainer> b = trainer(options(3));
    b->resume(c, "ck.st");
    CHECK(train(*b) == final_checkpoint);
  }
  Checkpoint c = read_checkpoint(final_checkpoint, "ck.st");
  CHECK(c.run.last == 1);
  Trainer without(step, "step.json", ramp_data(5), mean_init(), "init.st", options(3));
  CHECK_THROWS_WITH_AS(without.resume(c, "ck.st"),
                       "ck.st was written by a run with --keep-last: give the same options to "
                       "resume",
                       UserError);
}

TEST_CASE("--keep-last errors say what to trace") {
  Tape step = mean_step(2);
  Trainer t(step, "step.json", ramp_data(5), mean_init(), "init.st", options(1));
  Tape wrong = mean_step(2);
  CHECK_THROWS_WITH_AS(t.set_last_step(wrong, "last.json"),
                       "last.json: its batch size is 2, but the last batch of 5 samples in "
                       "batches of 2 holds 1: trace the step at a batch of 1",
                       UserError);
  Trainer even(step, "step.json", ramp_data(4), mean_init(), "init.st", options(1));
  Tape last = mean_step(1);
  CHECK_THROWS_WITH_AS(even.set_last_step(last, "last.json"),
                       "last.json: train.safetensors holds 4 samples, a multiple of the batch "
                       "size 2: there is no incomplete batch to keep; leave out --keep-last",
                       UserError);
  Builder b("other");
  b.input("x", f32({2, 1}));
  Var v = b.input("v", f32({2}));
  b.output(v, "out.v");
  Tape other = b.finish();
  CHECK_THROWS_WITH_AS(t.set_last_step(other, "last.json"),
                       "last.json: input 'v' (f32[2]) is not an input of step.json with the same "
                       "role and type: the last step must be the step traced at a smaller batch",
                       UserError);
}
