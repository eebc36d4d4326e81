#include "tracer/interp/eager.h"

#include "runtime/eval.h"

namespace ytape::tracer {

std::vector<Tensor> run_eager(Prim p, const std::vector<Tensor>& args, const Attrs& attrs,
                              const std::function<void(std::string_view)>& print) {
  RunContext context;
  context.print = print ? print : [](std::string_view) {};
  EvalOptions options;
  options.context = &context;
  return evaluate(p, args, attrs, options);
}

}  // namespace ytape::tracer
