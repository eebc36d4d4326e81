#include "cli/phases.h"

#include "cli/io.h"

namespace ytape::cli {

size_t PhaseLog::mark(std::string name, Counts counts) {
  double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  phases_.push_back({std::move(name), last_end_, now - last_end_, std::move(counts)});
  inner_end_.push_back(last_end_);
  last_end_ = now;
  return phases_.size() - 1;
}

void PhaseLog::add_inside(size_t outer, std::string name, double seconds, Counts counts) {
  double start = inner_end_.at(outer);
  inner_end_[outer] = start + seconds;
  phases_.push_back({std::move(name), start, seconds, std::move(counts)});
  inner_end_.push_back(start);
}

void PhaseLog::write(const std::string& path, const std::string& process) const {
  if (!path.empty()) write_file(path, phases_trace(phases_, process));
}

void add_stats_out(CLI::App& sub, std::string& path) {
  sub.add_option("--stats-out", path,
                 "Write the time of each phase (Chrome trace event JSON: Perfetto and "
                 "chrome://tracing open it) to this file");
}

}  // namespace ytape::cli
