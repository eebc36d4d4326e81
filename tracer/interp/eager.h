// Concrete execution of one primitive, outside any tape: the interpreter's top level and
// every op whose arguments are all concrete run here.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"
#include "tape/attrs.h"
#include "tape/prim.h"

namespace ytape::tracer {

/// Applies `p` to `args` with `attrs` and returns its outputs. The op is built with a tape
/// Builder, so types are inferred, attributes normalized and errors worded exactly as when
/// tracing; then its kernel runs. `print` receives the lines of the `print` primitive.
std::vector<Tensor> run_eager(Prim p, const std::vector<Tensor>& args, const Attrs& attrs,
                              const std::function<void(std::string_view)>& print = {});

}  // namespace ytape::tracer
