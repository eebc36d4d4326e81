#include "runtime/eval.h"

#include <fmt/format.h>

#include "tape/builder.h"
#include "tape/error.h"

namespace ytape {

void evaluate_into(const Op& op, std::span<const Tensor* const> args, std::span<Tensor* const> outs,
                   const EvalOptions& options) {
  Kernel kernel = kernel_table(options.kernels).kernels[KernelTable::entry(op.prim)];
  if (kernel == nullptr) user_error("no kernel for primitive {}", prim_name(op.prim));
  static const RunContext kSilent{[](std::string_view) {}, 0};
  const RunContext* context = options.context != nullptr ? options.context : &kSilent;
  KernelCall call{op, args, outs, context, options.layouts};
  call.variant = options.variant;
  kernel(call);
}

std::vector<Tensor> evaluate(const Tape& t, const Op& op, std::span<const Tensor* const> args,
                             const EvalOptions& options) {
  std::vector<Tensor> outs;
  outs.reserve(op.outs.size());
  for (Var o : op.outs) outs.push_back(Tensor::uninitialized(t.type(o)));
  std::vector<Tensor*> out_ptrs;
  for (Tensor& o : outs) out_ptrs.push_back(&o);
  evaluate_into(op, args, out_ptrs, options);
  return outs;
}

std::vector<Tensor> evaluate(Prim p, std::span<const Tensor> args, const Attrs& attrs,
                             const EvalOptions& options) {
  Builder b;
  std::vector<Var> vars;
  std::vector<const Tensor*> arg_ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    vars.push_back(b.input(fmt::format("x{}", i + 1), args[i].type()));
    arg_ptrs.push_back(&args[i]);
  }
  b.call(p, vars, attrs);
  const Tape& t = b.tape();
  return evaluate(t, t.ops.back(), arg_ptrs, options);
}

}  // namespace ytape
