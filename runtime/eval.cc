#include "runtime/eval.h"

#include <fmt/format.h>

#include <cstring>

#include "tape/builder.h"
#include "tape/error.h"

namespace ytape {

namespace {

bool reads_or_makes_f16(const Op& op, std::span<const Tensor* const> args,
                        std::span<Tensor* const> outs) {
  if (op.prim == Prim::convert) return false;  // the one kernel that has f16 code
  for (const Tensor* a : args) {
    if (a->dtype() == DType::f16) return true;
  }
  for (const Tensor* o : outs) {
    if (o->dtype() == DType::f16) return true;
  }
  return false;
}

// Kernels have no f16 code, and a region op's regions are planned by an executor: such an
// op runs as the executor runs it (lowered to f32, its regions planned).
void evaluate_planned(const Op& op, std::span<const Tensor* const> args,
                      std::span<Tensor* const> outs, const EvalOptions& options) {
  Builder b;
  VarList vars;
  for (size_t i = 0; i < args.size(); ++i) {
    vars.push_back(b.input(fmt::format("x{}", i + 1), args[i]->type()));
  }
  VarList results = b.record(op.prim, vars, op.attrs, op.regions).outs;
  for (size_t i = 0; i < results.size(); ++i) b.output(results[i], fmt::format("y{}", i + 1));
  Tape t = b.finish();
  Executor e(t, {.kernels = options.kernels, .blocked_layouts = false, .fusion = false});
  if (options.context != nullptr) {
    e.set_print(options.context->print);
    e.set_random_key(options.context->random_key);
  } else {
    e.set_print([](std::string_view) {});
  }
  std::vector<Tensor> inputs, values;
  for (const Tensor* a : args) inputs.push_back(*a);
  e.run(inputs, values);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::memcpy(outs[i]->raw(), values[i].raw(), static_cast<size_t>(values[i].bytes()));
  }
}

}  // namespace

void evaluate_into(const Op& op, std::span<const Tensor* const> args, std::span<Tensor* const> outs,
                   const EvalOptions& options) {
  if (reads_or_makes_f16(op, args, outs) || !op.regions.empty())
    return evaluate_planned(op, args, outs, options);
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
