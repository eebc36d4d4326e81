#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "opt/distribute.h"

namespace ytape::cli {

namespace {

struct DistributeCli {
  std::string tape, out;
  DistributeOptions options;
  double bucket_mb = 25;
};

std::string megabytes(int64_t bytes) {
  return fmt::format("{:.3f} MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace

Run setup_distribute(CLI::App& sub) {
  auto o = std::make_shared<DistributeCli>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--ranks", o->options.ranks, "How many ranks run it")
      ->required()
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--split", o->options.split,
                 "Inputs whose last dim (the batch) the ranks split, comma-separated")
      ->required()
      ->delimiter(',');
  sub.add_option("--bucket-mb", o->bucket_mb,
                 "The most megabytes of gradients one allreduce carries (default 25)")
      ->check(CLI::Range(1e-6, 1e6));
  sub.add_option("-o,--output", o->out, "Write the tape of every rank here (default: stdout)");
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}});
    o->options.bucket_bytes = static_cast<int64_t>(o->bucket_mb * 1e6);
    Tape t = load_tape(o->tape);
    DistributeReport r;
    Tape d = distribute(t, o->options, &r);
    write_tape_file(o->out, d);
    fmt::print(stderr,
               "distribute: {} ranks; {} allreduce ops of {} values ({} per step and rank), {} "
               "allgather ops ({})\n",
               o->options.ranks, r.allreduces, r.reduced_values, megabytes(r.reduced_bytes),
               r.gathers, megabytes(r.gathered_bytes));
    if (!r.replicated.empty()) {
      fmt::print(stderr,
                 "distribute: run replicated on gathered values (no rule splits them): {}\n",
                 fmt::join(r.replicated, ", "));
    }
    return kOk;
  };
}

}  // namespace ytape::cli
