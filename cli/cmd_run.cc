#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <unordered_map>

#include "cli/commands.h"
#include "cli/io.h"
#include "cli/mpi.h"
#include "opt/distribute.h"
#include "runtime/comm.h"
#include "runtime/executor.h"
#include "runtime/format.h"
#include "runtime/parallel.h"
#include "runtime/profile.h"
#include "runtime/tensor_file.h"
#include "runtime/trace_events.h"
#include "tape/strings.h"
#include "train/binding.h"

namespace ytape::cli {

namespace {

struct RunOptions {
  std::string tape, out, dtype, profile_out, by = "op", distributed = "auto";
  double comm_timeout = 30;
  std::vector<std::string> inputs;
  bool random = false, profile = false, skip_extra = false, carry = false;
  uint64_t seed = 0;
  int repeat = 1;
  ExecutionChoice execution;
};

void print_outputs(const Tape& t, const std::vector<Tensor>& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    fmt::print("{} {} {}\n", printable(t.outputs[i].name), type_str(outs[i].type()),
               summary_str(outs[i]));
  }
}

// Refuses a tape distributed for another number of ranks than this run has, before its
// inputs are read (whose shapes would be the first thing to differ).
void require_group_size(const Tape& t, const std::string& source, const Communicator* group) {
  const int64_t ranks = distributed_for(t).ranks, size = group != nullptr ? group->size() : 1;
  if (ranks != 0 && ranks != size) {
    user_error("{} is distributed for {} ranks, but this run has {}: run it under mpirun -np {}",
               source, ranks, size, ranks);
  }
}

// A distributed tape's inputs for this rank: read (or made up) whole, as the tape written
// for one process takes them, and the split ones (meta distribute.split) cut to the
// rank's block of their last dim, as `ytape train` cuts the batch.
TensorMap rank_inputs(const Tape& t, const RunOptions& o, const Communicator& group) {
  const std::vector<std::string> split = distributed_for(t).split;
  Tape whole = t;  // the types the files hold: the split inputs' batch times the ranks
  for (const Op& op : whole.ops) {
    if (op.kind == OpKind::input && std::find(split.begin(), split.end(), op.name) != split.end()) {
      Type type = whole.types[op.outs[0].id];
      type.shape.back() *= group.size();
      whole.types.set(op.outs[0].id, type);
    }
  }
  TensorMap inputs = gather_inputs(whole, o.inputs, o.random, o.seed, o.skip_extra);
  for (auto& [name, tensor] : inputs) {
    if (std::find(split.begin(), split.end(), name) == split.end()) continue;
    Type type = tensor.type();
    type.shape.back() /= group.size();
    const int64_t bytes = tensor.bytes() / group.size();
    const auto* base = static_cast<const uint8_t*>(tensor.raw()) + group.rank() * bytes;
    tensor = Tensor::of_bytes(type, {base, static_cast<size_t>(bytes)});
  }
  return inputs;
}

// For --carry: (output, position in `inputs`) for each (output, input) pair, looked up
// once, so that each run's carry is a copy per pair.
std::vector<std::pair<size_t, size_t>> carry_places(
    const Tape& t, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
    const TensorMap& inputs) {
  std::unordered_map<std::string_view, size_t> place;
  for (size_t k = 0; k < inputs.size(); ++k) place.emplace(inputs[k].first, k);
  std::vector<std::pair<size_t, size_t>> places;
  for (auto [output, input] : pairs) {
    auto it = place.find(t.ops[input].name);
    if (it != place.end()) places.emplace_back(output, it->second);  // else: the run names it
  }
  return places;
}

}  // namespace

Run setup_run(CLI::App& sub) {
  auto o = std::make_shared<RunOptions>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--inputs", o->inputs,
                 "Input values: .safetensors, .npy, .npz, or .json (name -> nested arrays) "
                 "files, several merged; a file's dtype converts to the tape's where exact")
      ->expected(1, -1);
  sub.add_flag("--skip-extra", o->skip_extra,
               "Leave out the tensors of --inputs that the tape does not read (a checkpoint of "
               "ytape train holds the optimizer's state too); without it they are an error");
  sub.add_flag("--random", o->random, "Make up the inputs not given, deterministically");
  sub.add_option(
      "--seed", o->seed,
      "Seed of --random and key of the tape's random ops (default 0: the seeds the tape records)");
  sub.add_option("-o,--output", o->out,
                 "Write the outputs to this file: safetensors, or numpy's .npz (.npy: one output)");
  sub.add_option("--dtype", o->dtype,
                 "With -o: write every output as this dtype (bf16, f16, f32, f64, i8-i64, u8-u64, "
                 "bool): floats rounded to nearest, integers exact or an error")
      ->check(one_of(file_dtype_names()));
  sub.add_flag("--profile", o->profile,
               "Print time per primitive and the most costly ops (with --repeat, of the runs "
               "after the first, which builds oneDNN's kernels)");
  sub.add_option("--by", o->by,
                 "With --profile: the tables by primitive and op (op, the default), the time "
                 "of each source line (line), or of each layer of a traced model (layer)")
      ->check(one_of({"op", "line", "layer"}));
  sub.add_option("--profile-out", o->profile_out,
                 "Write a trace of the profiled runs (Chrome trace event JSON: Perfetto and "
                 "chrome://tracing open it) to this file");
  sub.add_option("--repeat", o->repeat, "Run N times and report the median time")
      ->check(positive());
  sub.add_flag("--carry", o->carry,
               "Run as a training step: each output named out.P or P carries into input P, "
               "written over its buffer; with --repeat, each run goes on from the last one's "
               "outputs (docs/training.md)");
  add_execution_options(sub, o->execution);
  add_distributed_options(sub, o->distributed, o->comm_timeout);
  return [o] {
    ExecutorOptions options = o->execution.apply();
    std::vector<NamedFile> reads = named_files("--inputs", o->inputs);
    reads.push_back({"TAPE", o->tape});
    refuse_overwrites(reads, {{"-o", o->out}, {"--profile-out", o->profile_out}});
    if (o->by != "op" && !o->profile) user_error("--by applies to --profile; give --profile");
    if (!o->dtype.empty() && o->out.empty()) user_error("--dtype applies to -o; give -o FILE");
    Tape t = load_tape(o->tape);
    std::unique_ptr<Communicator> group = start_group(o->distributed, o->comm_timeout);
    require_group_size(t, source_name(o->tape), group.get());
    const bool leader = group == nullptr || group->rank() == 0;
    TensorMap inputs = group != nullptr
                           ? rank_inputs(t, *o, *group)
                           : gather_inputs(t, o->inputs, o->random, o->seed, o->skip_extra);
    std::vector<std::pair<size_t, size_t>> carried;  // (output, place in inputs)
    if (o->carry) {
      options.donate = carry_pairs(t, source_name(o->tape));
      carried = carry_places(t, options.donate, inputs);
    }
    Executor executor(t, options);
    executor.set_random_key(o->seed);
    executor.set_communicator(group.get());
    std::vector<Tensor> outs;
    std::vector<double> ms;
    std::vector<StepEvent> events;
    std::vector<TracedRun> traced;
    const auto origin = std::chrono::steady_clock::now();
    // The first of repeated runs is a warm-up: oneDNN generates its kernels (25 ms for one
    // GEMM shape) and buffers are first touched, which would swamp a mean over few runs.
    int profiled = o->repeat > 1 ? o->repeat - 1 : 1;
    for (int i = 0; i < o->repeat; ++i) {
      bool measured = i >= o->repeat - profiled;
      executor.set_profiling(o->profile && measured);
      executor.set_trace(!o->profile_out.empty() && measured ? &events : nullptr, origin);
      outs.clear();  // the last run's outputs must not stay alive during the next
      auto start = std::chrono::steady_clock::now();
      outs = executor.run(inputs);
      auto end = std::chrono::steady_clock::now();
      for (auto [output, place] : carried) inputs[place].second = outs[output];
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
      if (!o->profile_out.empty() && measured) {
        traced.push_back({std::chrono::duration<double>(start - origin).count(),
                          std::chrono::duration<double>(end - start).count()});
      }
    }
    if (!leader) return kOk;  // every rank has the same outputs: rank 0 reports them
    if (o->out.empty()) {
      print_outputs(t, outs);
    } else {
      TensorMap named;
      for (size_t i = 0; i < outs.size(); ++i) named.emplace_back(t.outputs[i].name, outs[i]);
      write_outputs(o->out, named, o->dtype);
    }
    if (o->repeat > 1) {
      std::sort(ms.begin(), ms.end());
      fmt::print("time: median {:.3f} ms over {} runs (min {:.3f}, max {:.3f}); {} threads\n",
                 ms[ms.size() / 2], ms.size(), ms.front(), ms.back(), num_threads());
    }
    if (o->profile) {
      fmt::print("\n{}", o->by == "line"    ? profile_by(executor, ProfileBy::line, profiled)
                         : o->by == "layer" ? profile_by(executor, ProfileBy::layer, profiled)
                                            : profile_report(executor, profiled));
      if (group != nullptr) fmt::print("{}", communication_line(*group, o->repeat, "run"));
    }
    if (!o->profile_out.empty()) {
      write_file(o->profile_out,
                 chrome_trace(executor, events, traced, "ytape run " + source_name(o->tape)));
    }
    return kOk;
  };
}

}  // namespace ytape::cli
