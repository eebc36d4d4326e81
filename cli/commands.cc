#include "cli/commands.h"

namespace ytape::cli {

std::span<const Command> commands() {
  static const Command table[] = {
      {"show", "Print a tape in text form (or canonical JSON)", setup_show},
      {"check", "Validate a tape and summarise it in one line", setup_check},
      {"trace", "Trace a function of a model program into a tape", setup_trace},
      {"grad", "Differentiate a tape (reverse mode) into a gradient tape", setup_grad},
      {"gradcheck", "Check a tape's gradient against finite differences in f64", setup_gradcheck,
       false},
      {"opt", "Optimize a tape: fold, simplify, merge and remove ops to a fixed point", setup_opt},
      {"run", "Execute a tape on real tensors", setup_run, false},
      {"diff", "Compare two tapes by what they compute; exit 1 when they differ", setup_diff},
      {"dot", "Draw a tape as a Graphviz graph, ops grouped by source line", setup_dot},
      {"stats", "Count ops, FLOPs, parameters and the memory a run needs", setup_stats},
  };
  return table;
}

}  // namespace ytape::cli
