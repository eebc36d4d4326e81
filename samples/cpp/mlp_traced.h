// The classifier of samples/mlp.jl written with the C++ tracing API (tracer/cpp_api.h).
#pragma once

#include <cstdint>

#include "tape/tape.h"

namespace ytape::samples {

/// The 784-256-256-10 MLP of samples/mlp.jl with mean cross-entropy over i64 labels: the
/// tape `ytape trace samples/mlp.jl -f loss model x labels` records (for batch 32), op for
/// op, with the C++ lines as locations. Inputs model.layers.{1,2,3}.{weight,bias} (Flux's
/// (out, in) weights), x f32[784,batch], labels i64[batch]; output `out`, the loss f32[].
Tape mlp_traced(int64_t batch);

}  // namespace ytape::samples
