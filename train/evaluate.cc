#include "train/evaluate.h"

#include <numeric>

#include "tape/error.h"

namespace ytape {

Evaluator::Evaluator(const Tape& eval, std::string source, DataSet data, ExecutorOptions options)
    : eval_(eval), source_(std::move(source)), data_(std::move(data)) {
  binding_ = bind_eval(eval_, source_, data_);
  convert_data(binding_, data_);
  for (size_t o = 0; o < eval_.outputs.size(); ++o) {
    if (is_float_scalar(eval_.type(eval_.outputs[o].var))) metrics_.push_back(o);
  }
  if (metrics_.empty()) {
    user_error("{}: the eval tape has no float scalar output (f32[] or f64[]) to report", source_);
  }
  executor_ = std::make_unique<Executor>(eval_, options);
}

Evaluator::~Evaluator() = default;

EvalResult Evaluator::run(const std::vector<Tensor>& values) {
  EvalResult result;
  result.total = data_.samples;
  int64_t batch = binding_.batch, batches = data_.samples / batch;
  std::vector<double> sums(metrics_.size(), 0.0);
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  for (int64_t k = 0; k < batches; ++k) {
    std::iota(indices.begin(), indices.end(), k * batch);
    TensorMap inputs;
    for (size_t i = 0; i < binding_.inputs.size(); ++i) {
      const BoundInput& in = binding_.inputs[i];
      inputs.emplace_back(in.name, in.role == InputRole::data
                                       ? gather_samples(*data_.find(in.name), indices)
                                       : values[i]);
    }
    std::vector<Tensor> outs = executor_->run(inputs);
    for (size_t m = 0; m < metrics_.size(); ++m) {
      sums[m] += element_value(outs[metrics_[m]], 0) * static_cast<double>(batch);
    }
  }
  result.samples = batches * batch;
  for (size_t m = 0; m < metrics_.size(); ++m) {
    std::string_view name = eval_.outputs[metrics_[m]].name;
    if (name.starts_with("out.")) name.remove_prefix(4);
    result.metrics.push_back({std::string(name), sums[m] / static_cast<double>(result.samples)});
  }
  return result;
}

}  // namespace ytape
