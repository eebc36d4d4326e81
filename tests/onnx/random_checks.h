// The check of a node test whose tape draws random numbers: ONNX's expected outputs come
// from another generator, so their values cannot be compared, only what any draw of the
// op's distribution has.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace ytape::onnx_conformance {

/// Whether `got`, the outputs of `model` on the graph inputs `inputs` (by position), are a
/// draw of its distribution: each has the shape and dtype of ONNX's output in `want` and
/// lies in the support, by the model's op types: Bernoulli (and its function body,
/// RandomUniformLike, Greater and Cast) gives 0 or 1, 0 where p is 0 and 1 where p is 1;
/// Dropout gives 0 or x / (1 - ratio), and its mask says which; RandomUniform(Like) lies in
/// [low, high], RandomNormal(Like) is finite. Returns "" when so, else what is not (models
/// of other op types: that no check is known for them).
std::string check_random(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& got, const std::vector<Tensor>& want);

}  // namespace ytape::onnx_conformance
