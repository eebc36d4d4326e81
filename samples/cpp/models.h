// Sample models built with the C++ Builder: the tapes the benchmarks and the demo use until
// the tracer can produce them from model programs.
#pragma once

#include <cstdint>

#include "tape/tape.h"

namespace ytape::samples {

/// A 784-256-256-10 classifier with ReLU and mean cross-entropy over integer labels.
/// Inputs: x f32[784,batch], labels i64[batch] (1-based classes), then the parameters
/// model.layers.{1,2,3}.{weight,bias} with PyTorch's nn.Linear layout reversed
/// (weight (in, out)). Output: loss f32[].
Tape mlp(int64_t batch);

/// ResNet-18 on a 224x224x3xbatch WHCN image, batch norm in training mode, with
/// loss = sum(model(image)). Parameters are named and shaped as torchvision's
/// resnet18().state_dict() parameters (1-based block indices, shapes reversed):
/// model.conv1.weight f32[7,7,3,64], model.layer1.1.bn1.weight f32[64], ...,
/// model.fc.weight f32[512,1000], model.fc.bias f32[1000]; then image.
Tape resnet18(int64_t batch);

/// A chain of `n` scalar f64 ops (sin, tanh, neg, add, mul, sub), each reading one or two
/// recent values, as a long unrolled scalar loop traces to. Inputs x and y, output z.
Tape scalar_chain(int64_t n);

}  // namespace ytape::samples
