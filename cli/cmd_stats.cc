#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "inspect/stats.h"
#include "runtime/plan.h"

namespace ytape::cli {

Run setup_stats(CLI::App& sub) {
  auto path = std::make_shared<std::string>();
  sub.add_option("TAPE", *path, "Tape in JSON form, or - for standard input")->required();
  return [path] {
    Tape t = load_tape(*path);
    // Planning allocates nothing and runs nothing: it only assigns buffers by liveness.
    int64_t plan_bytes = plan_tape(t).planned_bytes();
    write_file("", stats_str(tape_stats(t), plan_bytes));
    return kOk;
  };
}

}  // namespace ytape::cli
