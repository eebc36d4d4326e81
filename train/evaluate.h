// Evaluation: runs an eval tape over a data set in batches and averages its float scalar
// outputs over the samples (docs/training.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "train/binding.h"
#include "train/data.h"

namespace ytape {

/// A float scalar output of the eval tape, averaged over the samples.
struct Metric {
  std::string name;  ///< the output's name without a leading "out."
  double value = 0;
};

struct EvalResult {
  std::vector<Metric> metrics;  ///< in the tape's output order
  int64_t samples = 0;          ///< the samples evaluated: complete batches only
  int64_t total = 0;            ///< the samples of the data
};

class Evaluator {
 public:
  /// Binds `eval` to `data` (bind_eval). Throws UserError when it has no float scalar
  /// output. `eval` must outlive the evaluator.
  Evaluator(const Tape& eval, std::string source, DataSet data, ExecutorOptions options);
  ~Evaluator();

  const Binding& binding() const { return binding_; }
  const std::string& source() const { return source_; }

  /// Runs the tape on every complete batch of the data, in the file's order, with
  /// `values[i]` for each non-data input i of binding().inputs, and averages each float
  /// scalar output weighted by the batch's samples.
  EvalResult run(const std::vector<Tensor>& values);

 private:
  const Tape& eval_;
  std::string source_;
  DataSet data_;
  Binding binding_;
  std::vector<size_t> metrics_;  // the float scalar outputs
  std::unique_ptr<Executor> executor_;
};

}  // namespace ytape
