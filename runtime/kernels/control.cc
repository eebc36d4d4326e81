// Kernels of the control family: ops that hold tapes. Their regions run through the
// executor's RegionRunner (RunContext::regions), which plans each region once.
#include <cstring>

#include "runtime/kernels/kernel.h"
#include "tape/error.h"

namespace ytape {

namespace {

// The slice t of `stacked` on its last dim, in place: a stacked value keeps each slice
// contiguous (its last dim is the outermost), so no copy is needed.
Tensor slice_view(const Tensor& stacked, int64_t t) {
  Type type{stacked.dtype(), Shape(stacked.shape().begin(), stacked.shape().end() - 1)};
  int64_t bytes = stacked.bytes() / stacked.shape().back();
  auto* base = static_cast<char*>(const_cast<void*>(stacked.raw()));
  return Tensor::view(std::move(type), base + t * bytes);
}

// scan: the body run on (consts, carries, x_t) for each t, its carries fed back, each y_t
// written into slice t of its stacked output.
void scan(const KernelCall& call) {
  const auto a = attrs_of<Prim::scan>(call.op.attrs);
  if (call.context == nullptr || call.context->regions == nullptr)
    internal_error("scan runs in an executor, which runs its body");
  RegionRunner& runner = *call.context->regions;
  const Tape& body = call.op.regions[0];
  const size_t consts = a.consts, carries = a.carries, firstx = consts + carries;
  std::vector<Tensor> in(call.args.size()), out;
  for (size_t i = 0; i < firstx; ++i) in[i] = *call.args[i];
  for (int64_t step = 0; step < a.length; ++step) {
    const int64_t t = a.reverse ? a.length - 1 - step : step;
    for (size_t i = firstx; i < in.size(); ++i) in[i] = slice_view(*call.args[i], t);
    runner.run_region(body, in, out);
    for (size_t i = 0; i < carries; ++i) in[consts + i] = out[i];
    for (size_t i = carries; i < out.size(); ++i) {
      Tensor y = slice_view(*call.outs[i], t);
      std::memcpy(y.raw(), out[i].raw(), static_cast<size_t>(out[i].bytes()));
    }
  }
  for (size_t i = 0; i < carries; ++i) {
    std::memcpy(call.outs[i]->raw(), in[consts + i].raw(),
                static_cast<size_t>(call.outs[i]->bytes()));
  }
}

}  // namespace

void register_control_kernels(KernelTable& t) {
  t.set(Prim::scan, scan);
}

}  // namespace ytape
