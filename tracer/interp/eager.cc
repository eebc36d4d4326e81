#include "tracer/interp/eager.h"

#include "runtime/executor.h"
#include "runtime/kernels/kernel.h"
#include "tape/builder.h"
#include "tape/error.h"

namespace ytape::tracer {

std::vector<Tensor> run_eager(Prim p, const std::vector<Tensor>& args, const Attrs& attrs,
                              const std::function<void(std::string_view)>& print) {
  Builder b;
  std::vector<Var> vars;
  vars.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    vars.push_back(b.input(std::to_string(i), args[i].type()));
  std::vector<Var> outs_vars = b.call(p, vars, attrs);
  const Tape& t = b.tape();
  const Op& op = t.ops.back();
  Kernel kernel = kernel_table().kernels[static_cast<int>(p)];
  if (!kernel) internal_error("no kernel for primitive {}", prim_name(p));
  std::vector<Tensor> outs;
  outs.reserve(outs_vars.size());
  for (Var v : outs_vars) outs.push_back(Tensor::uninitialized(t.type(v)));
  std::vector<const Tensor*> arg_ptrs;
  for (const Tensor& a : args) arg_ptrs.push_back(&a);
  std::vector<Tensor*> out_ptrs;
  for (Tensor& o : outs) out_ptrs.push_back(&o);
  RunContext context;
  context.print = print;
  kernel(KernelCall{op, arg_ptrs, out_ptrs, &context});
  return outs;
}

}  // namespace ytape::tracer
