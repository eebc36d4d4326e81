#include "train/trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <unordered_map>

#include "runtime/comm.h"
#include "runtime/file_dtype.h"
#include "runtime/parallel.h"
#include "tape/checked.h"
#include "tape/digest.h"
#include "tape/error.h"

namespace ytape {

namespace {

using Clock = std::chrono::steady_clock;

// The tensors of `map` by name, the first of each: a step has an input per parameter
// tensor, and looking each up in the file's list made loading quadratic in their number.
using TensorIndex = std::unordered_map<std::string_view, const Tensor*>;

TensorIndex index_of(const TensorMap& map) {
  TensorIndex index;
  for (const auto& [name, tensor] : map) index.emplace(name, &tensor);
  return index;
}

const Tensor* find(const TensorIndex& index, std::string_view name) {
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

// The --init value of input `in` of `tape`, checked against its type.
Tensor init_value(const BoundInput& in, const TensorIndex& init, std::string_view init_source,
                  std::string_view tape) {
  const Tensor* t = find(init, in.name);
  if (t == nullptr) {
    if (init_source.empty()) {
      user_error("{}: input '{}' ({}) has no value: give --init (the trace's --save-inputs file)",
                 tape, in.name, type_str(in.type));
    }
    user_error("{}: input '{}' ({}) has no value: {} (--init) has no tensor '{}'", tape, in.name,
               type_str(in.type), init_source, in.name);
  }
  if (t->shape() != in.type.shape) {
    user_error("{}: input '{}' is {}, but {} (--init) holds {}{}", tape, in.name, type_str(in.type),
               init_source, type_str(t->type()), reversed_shape_hint(t->shape(), in.type.shape));
  }
  return convert_exact(*t, in.type.dtype, fmt::format("{}: tensor '{}'", init_source, in.name));
}

}  // namespace

Trainer::Trainer(const Tape& step, std::string step_source, DataSet data, TensorMap init,
                 std::string init_source, TrainOptions options)
    : step_(step),
      step_source_(std::move(step_source)),
      step_digest_(options.tape_digest.empty() ? tape_digest(step) : options.tape_digest),
      data_(std::move(data)),
      init_(std::move(init)),
      init_source_(std::move(init_source)),
      options_(options) {
  if (options_.adapt_threads) {
    // The cores that look free now: a first guess, which the step times then correct.
    // A trial of more threads asks the kernel's count of running threads (one reading).
    const int most = num_threads();
    governor_.emplace(most, most > 1 ? free_cores() : 1, [] { return free_cores(1); });
  }
  binding_ = bind_step(step_, step_source_, data_);
  convert_data(binding_, data_);
  values_.resize(binding_.inputs.size());
  const TensorIndex init_index = index_of(init_);
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    const BoundInput& in = binding_.inputs[i];
    if (in.role != InputRole::data)
      values_[i] = init_value(in, init_index, init_source_, step_source_);
  }
  if (data_.samples < global_batch()) {
    user_error("{}: a step takes {} samples ({} on each of {} ranks), but {} holds {}",
               step_source_, global_batch(), binding_.batch, ranks(), data_.source, data_.samples);
  }
  // Each carried output is written over the input it replaces: the state is held once, not
  // twice (the inputs' and the outputs'). A step that fails leaves it half updated, but a
  // failed step ends the run, and checkpoints are written between steps.
  ExecutorOptions step_options = options_.executor;
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    const BoundInput& in = binding_.inputs[i];
    if (in.role == InputRole::carried) {
      step_options.donate.emplace_back(static_cast<uint32_t>(in.output), static_cast<uint32_t>(i));
    }
  }
  executor_ = std::make_unique<Executor>(step_, step_options);
  executor_->set_communicator(options_.comm);
}

Trainer::~Trainer() = default;

int64_t Trainer::ranks() const {
  return options_.comm != nullptr ? options_.comm->size() : 1;
}

int64_t Trainer::rank() const {
  return options_.comm != nullptr ? options_.comm->rank() : 0;
}

void Trainer::set_eval(const Tape& eval, std::string eval_source, DataSet data) {
  evaluator_ =
      std::make_unique<Evaluator>(eval, std::move(eval_source), std::move(data), options_.executor);
  std::unordered_map<std::string_view, size_t> carried;
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    if (binding_.inputs[i].role == InputRole::carried) carried.emplace(binding_.inputs[i].name, i);
  }
  const Binding& b = evaluator_->binding();
  eval_from_step_.assign(b.inputs.size(), std::string::npos);
  eval_values_.assign(b.inputs.size(), Tensor());
  const TensorIndex init = index_of(init_);
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    const BoundInput& in = b.inputs[i];
    if (in.role == InputRole::data) continue;
    auto it = carried.find(in.name);
    if (it == carried.end()) {
      eval_values_[i] = init_value(in, init, init_source_, evaluator_->source());
    } else if (binding_.inputs[it->second].type != in.type) {
      user_error("{}: input '{}' is {}, but the carried state of {} is {}", evaluator_->source(),
                 in.name, type_str(in.type), step_source_,
                 type_str(binding_.inputs[it->second].type));
    } else {
      eval_from_step_[i] = it->second;
    }
  }
}

void Trainer::set_last_step(const Tape& last, std::string last_source) {
  if (ranks() > 1) {
    user_error(
        "{}: --keep-last is for one process; a distributed run drops the last incomplete "
        "batch",
        last_source);
  }
  const int64_t rest = data_.samples % binding_.batch;
  if (rest == 0) {
    user_error(
        "{}: {} holds {} samples, a multiple of the batch size {}: there is no "
        "incomplete batch to keep; leave out --keep-last",
        last_source, data_.source, data_.samples, binding_.batch);
  }
  Binding b = bind_step(last, last_source, data_);
  if (b.batch != rest) {
    user_error(
        "{}: its batch size is {}, but the last batch of {} samples in batches of {} "
        "holds {}: trace the step at a batch of {}",
        last_source, b.batch, data_.samples, binding_.batch, rest, rest);
  }
  std::unordered_map<std::string_view, size_t> step_inputs;
  for (size_t i = 0; i < binding_.inputs.size(); ++i)
    step_inputs.emplace(binding_.inputs[i].name, i);
  std::vector<size_t> from(b.inputs.size(), std::string::npos);
  size_t carried = 0;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    const BoundInput& in = b.inputs[i];
    auto it = step_inputs.find(in.name);
    const BoundInput* twin = it == step_inputs.end() ? nullptr : &binding_.inputs[it->second];
    bool same = twin != nullptr && twin->role == in.role &&
                (in.role == InputRole::data || twin->type == in.type);
    if (!same) {
      user_error(
          "{}: input '{}' ({}) is not an input of {} with the same role and type: the "
          "last step must be the step traced at a smaller batch",
          last_source, in.name, type_str(in.type), step_source_);
    }
    if (in.role != InputRole::data) from[i] = it->second;
    carried += in.role == InputRole::carried;
  }
  if (carried != state().size()) {
    user_error("{} carries {} tensors, but {} carries {}: the last step must carry the same state",
               last_source, carried, step_source_, state().size());
  }
  last_binding_ = std::move(b);
  last_source_ = std::move(last_source);
  last_from_step_ = std::move(from);
  last_executor_ = std::make_unique<Executor>(last, options_.executor);
}

RunIdentity Trainer::identity() const {
  return {options_.seed,
          options_.shuffle,
          global_batch(),
          data_.samples,
          last_executor_ ? last_binding_.batch : 0,
          step_digest_};
}

void Trainer::check_position(const Position& p, std::string_view source) const {
  const int64_t steps = steps_per_epoch();
  if (p.step > steps) {
    user_error("{} is at step {} of epoch {}, but an epoch of {} has {} steps", source, p.step,
               p.epoch, step_source_, steps);
  }
  if (p.epoch > options_.epochs + 1) {
    user_error(
        "{} is at epoch {}, past the {} epochs of this run: give --epochs {} or more to "
        "continue it",
        source, p.epoch, options_.epochs, p.epoch - 1);
  }
  std::string what = fmt::format("{}: the position", source);
  int64_t made = checked::add(checked::mul(p.epoch - 1, steps, what), p.step, what);
  if (p.global_step != made) {
    user_error("{} is at global step {}, but epoch {} and step {} at {} steps an epoch make {}",
               source, p.global_step, p.epoch, p.step, steps, made);
  }
}

void Trainer::resume(const Checkpoint& c, std::string_view source) {
  RunIdentity now = identity();
  if (!c.run.tape.empty() && c.run.tape != now.tape) {
    user_error(
        "{} was written by a run of another step tape (digest {}; {} has {}): resume with "
        "the step tape it belongs to",
        source, c.run.tape, step_source_, now.tape);
  }
  if (c.run.seed != now.seed) {
    user_error("{} was written by a run with --seed {}, not {}: give the same --seed to resume",
               source, c.run.seed, now.seed);
  }
  if (c.run.shuffle != now.shuffle) {
    user_error("{} was written by a run {} --no-shuffle: give the same options to resume", source,
               c.run.shuffle ? "without" : "with");
  }
  if (c.run.batch != now.batch || c.run.samples != now.samples) {
    user_error(
        "{} was written by a run with batch size {} over {} samples, but {} has batch "
        "size {} and {} has {} samples",
        source, c.run.batch, c.run.samples, step_source_, now.batch, data_.source, now.samples);
  }
  if (c.run.last != now.last) {
    user_error("{} was written by a run {} --keep-last: give the same options to resume", source,
               c.run.last > 0 ? "with" : "without");
  }
  std::vector<Tensor> values = values_;
  const TensorIndex state = index_of(c.state);
  size_t carried = 0;
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    const BoundInput& in = binding_.inputs[i];
    if (in.role != InputRole::carried) continue;
    ++carried;
    const Tensor* t = find(state, in.name);
    if (t == nullptr)
      user_error("{} has no tensor '{}', a carried input of {}", source, in.name, step_source_);
    if (t->type() != in.type) {
      user_error("{} holds '{}' as {}, but {} declares {}", source, in.name, type_str(t->type()),
                 step_source_, type_str(in.type));
    }
    values[i] = *t;
  }
  if (carried != c.state.size()) {
    user_error("{} holds {} tensors, but {} carries {}: it is the checkpoint of another step tape",
               source, c.state.size(), step_source_, carried);
  }
  check_position(c.position, source);
  values_ = std::move(values);
  position_ = c.position;
}

TensorMap Trainer::state() const {
  TensorMap out;
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    if (binding_.inputs[i].role == InputRole::carried) {
      out.emplace_back(binding_.inputs[i].name, values_[i]);
    }
  }
  return out;
}

Checkpoint Trainer::checkpoint() const {
  return {state(), position_, identity()};
}

void Trainer::save(const TrainHooks& hooks) {
  if (!hooks.save || saved_ == position_) return;
  std::vector<uint8_t> bytes = write_checkpoint(checkpoint());
  hooks.save(bytes);
  saved_ = position_;
}

TrainEnd Trainer::run(const TrainHooks& hooks) {
  TrainEnd end = TrainEnd::finished;
  while (position_.epoch <= options_.epochs) {
    if (std::optional<TrainEnd> stopped = run_epoch(hooks)) {
      end = *stopped;
      break;
    }
    // A stop asked for during the evaluation ends the run before the next epoch.
    if (position_.epoch <= options_.epochs && hooks.stop && hooks.stop()) {
      end = TrainEnd::stopped;
      break;
    }
  }
  save(hooks);
  return end;
}

std::optional<TrainEnd> Trainer::run_epoch(const TrainHooks& hooks) {
  if (order_epoch_ != position_.epoch) {
    order_ = epoch_order(data_.samples, options_.seed, position_.epoch, options_.shuffle);
    order_epoch_ = position_.epoch;
  }
  const int64_t steps = steps_per_epoch();
  int64_t steps_here = 0, samples_here = 0;
  Clock::time_point start = Clock::now();
  while (position_.step < steps) {
    if (options_.max_steps > 0 && position_.global_step >= options_.max_steps) {
      return TrainEnd::max_steps;
    }
    bool last = position_.step == full_steps();
    samples_here += last ? last_binding_.batch : global_batch();
    // The governor times the step tape's runs; the last batch's (another tape) runs at
    // the count it chose.
    const bool governed = governor_ && !last;
    if (governed) governor_->next();
    Clock::time_point step_start = Clock::now();
    std::optional<double> loss = last ? run_last_step(order_) : run_step(order_);
    if (governed) governor_->done(std::chrono::duration<double>(Clock::now() - step_start).count());
    ++steps_here;
    if (hooks.step) {
      double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      double samples = static_cast<double>(samples_here);
      hooks.step({position_.epoch, position_.step, steps, position_.global_step, loss,
                  seconds > 0 ? samples / seconds : 0});
    }
    if (options_.every > 0 && position_.global_step % options_.every == 0) save(hooks);
    if (hooks.stop && hooks.stop()) return TrainEnd::stopped;
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EpochReport report = finish_epoch(samples_here, seconds);
  if (hooks.epoch) hooks.epoch(report);
  return std::nullopt;
}

void Trainer::set_trace(StepTrace* trace) {
  trace_ = trace != nullptr && trace->steps > 0 ? trace : nullptr;
  executor_->set_trace(trace_ != nullptr ? &trace_->events : nullptr,
                       trace != nullptr ? trace->origin : std::chrono::steady_clock::now());
}

std::optional<double> Trainer::run_step(std::span<const int64_t> order) {
  // Each rank takes its block of the step's samples, as distribute splits the batch.
  const int64_t b = binding_.batch;
  std::span<const int64_t> indices = order.subspan(
      static_cast<size_t>(position_.step * global_batch() + rank() * b), static_cast<size_t>(b));
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    const BoundInput& in = binding_.inputs[i];
    if (in.role == InputRole::data) values_[i] = gather_samples(*data_.find(in.name), indices);
  }
  executor_->set_random_key(step_key(options_.seed, position_.global_step));
  auto start = std::chrono::steady_clock::now();
  executor_->run(values_, outputs_);
  auto end = std::chrono::steady_clock::now();
  if (trace_ != nullptr) {
    trace_->runs.push_back({std::chrono::duration<double>(start - trace_->origin).count(),
                            std::chrono::duration<double>(end - start).count()});
    if (static_cast<int64_t>(trace_->runs.size()) >= trace_->steps) {
      executor_->set_trace(nullptr, trace_->origin);
      trace_ = nullptr;
    }
  }
  for (size_t i = 0; i < binding_.inputs.size(); ++i) {
    if (binding_.inputs[i].role == InputRole::carried) {
      values_[i] = outputs_[binding_.inputs[i].output];
    }
  }
  return count_step(binding_.loss ? std::optional(element_value(outputs_[*binding_.loss], 0))
                                  : std::nullopt);
}

// The epoch's last incomplete batch, on the --keep-last tape, sharing the carried state.
std::optional<double> Trainer::run_last_step(std::span<const int64_t> order) {
  std::span<const int64_t> indices = order.subspan(
      static_cast<size_t>(full_steps() * binding_.batch), static_cast<size_t>(last_binding_.batch));
  TensorMap inputs;
  for (size_t i = 0; i < last_binding_.inputs.size(); ++i) {
    const BoundInput& in = last_binding_.inputs[i];
    inputs.emplace_back(in.name, in.role == InputRole::data
                                     ? gather_samples(*data_.find(in.name), indices)
                                     : values_[last_from_step_[i]]);
  }
  last_executor_->set_random_key(step_key(options_.seed, position_.global_step));
  std::vector<Tensor> outs = last_executor_->run(inputs);
  for (size_t i = 0; i < last_binding_.inputs.size(); ++i) {
    const BoundInput& in = last_binding_.inputs[i];
    if (in.role == InputRole::carried) values_[last_from_step_[i]] = outs[in.output];
  }
  return count_step(last_binding_.loss ? std::optional(element_value(outs[*last_binding_.loss], 0))
                                       : std::nullopt);
}

std::optional<double> Trainer::count_step(std::optional<double> loss) {
  if (loss) position_.loss_sum += *loss;
  ++position_.step;
  ++position_.global_step;
  return loss;
}

EpochReport Trainer::finish_epoch(int64_t samples_here, double seconds) {
  EpochReport report;
  report.epoch = position_.epoch;
  report.steps = position_.step;
  if (binding_.loss && position_.step > 0) {
    report.mean_loss = position_.loss_sum / static_cast<double>(position_.step);
  }
  report.samples_per_second = seconds > 0 ? static_cast<double>(samples_here) / seconds : 0;
  if (evaluator_) evaluate(report);
  ++position_.epoch;
  position_.step = 0;
  position_.loss_sum = 0;
  return report;
}

void Trainer::evaluate(EpochReport& report) {
  std::vector<Tensor> values = eval_values_;
  for (size_t i = 0; i < values.size(); ++i) {
    if (eval_from_step_[i] != std::string::npos) values[i] = values_[eval_from_step_[i]];
  }
  EvalResult result = evaluator_->run(values);
  report.eval = std::move(result.metrics);
  report.eval_samples = result.samples;
  report.eval_total = result.total;
}

}  // namespace ytape
