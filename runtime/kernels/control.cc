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

RegionRunner& runner_of(const KernelCall& call) {
  if (call.context == nullptr || call.context->regions == nullptr)
    internal_error("{} runs in an executor, which runs its regions", prim_name(call.op.prim));
  return *call.context->regions;
}

void copy_into(const KernelCall& call, const std::vector<Tensor>& from) {
  for (size_t i = 0; i < from.size(); ++i) {
    std::memcpy(call.outs[i]->raw(), from[i].raw(), static_cast<size_t>(from[i].bytes()));
  }
}

// scan: the body run on (consts, carries, x_t) for each t, its carries fed back, each y_t
// written into slice t of its stacked output. A step that does not run (`running`, `mask`)
// leaves the carries and writes zeros.
void scan(const KernelCall& call) {
  const auto a = attrs_of<Prim::scan>(call.op.attrs);
  RegionRunner& runner = runner_of(call);
  const Tape& body = call.op.regions[0];
  const size_t consts = a.consts, carries = a.carries, firstx = consts + carries;
  std::vector<Tensor> in(call.args.size()), out;
  for (size_t i = 0; i < firstx; ++i) in[i] = *call.args[i];
  const bool* mask = a.mask > 0 ? call.args[firstx + a.mask - 1]->data<bool>() : nullptr;
  bool running = true;
  for (int64_t step = 0; step < a.length; ++step) {
    const int64_t t = a.reverse ? a.length - 1 - step : step;
    if (a.running > 0) running = running && in[consts + a.running - 1].data<bool>()[0];
    if (!running || (mask != nullptr && !mask[t])) {
      for (size_t i = carries; i < call.outs.size(); ++i) {
        Tensor y = slice_view(*call.outs[i], t);
        std::memset(y.raw(), 0, static_cast<size_t>(y.bytes()));
      }
      continue;
    }
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

// cond: the branch the selector names, run on the operands.
void cond(const KernelCall& call) {
  RegionRunner& runner = runner_of(call);
  const Tensor& selector = *call.args[0];
  const size_t n = call.op.regions.size();
  size_t k = 0;
  if (selector.dtype() == DType::boolean) {
    k = selector.data<bool>()[0] ? 0 : 1;
  } else {
    int64_t s = selector.data<int64_t>()[0];
    if (s < 1 || s > static_cast<int64_t>(n))
      user_error("its selector is {}; it chooses one of the cases 1..{}", s, n);
    k = static_cast<size_t>(s - 1);
  }
  std::vector<Tensor> in, out;
  for (size_t i = 1; i < call.args.size(); ++i) in.push_back(*call.args[i]);
  runner.run_region(call.op.regions[k], in, out);
  copy_into(call, out);
}

// while_loop: the body run on (consts, carries) while the cond region yields true.
void while_loop(const KernelCall& call) {
  const auto a = attrs_of<Prim::while_loop>(call.op.attrs);
  RegionRunner& runner = runner_of(call);
  const Tape &test = call.op.regions[0], &body = call.op.regions[1];
  const size_t consts = static_cast<size_t>(a.consts);
  std::vector<Tensor> in(call.args.size()), out, flag;
  for (size_t i = 0; i < in.size(); ++i) in[i] = *call.args[i];
  for (int64_t trips = 0;; ++trips) {
    runner.run_region(test, in, flag);
    if (!flag[0].data<bool>()[0]) break;
    if (a.max_trips > 0 && trips == a.max_trips) {
      user_error(
          "the loop's condition still holds after max_trips={} trips; it is never cut short: "
          "raise its bound (`@max_trips N` before the loop, or ytape trace --max-trips N)",
          a.max_trips);
    }
    runner.run_region(body, in, out);
    for (size_t i = 0; i < out.size(); ++i) in[consts + i] = out[i];
  }
  std::vector<Tensor> carries(in.begin() + static_cast<std::ptrdiff_t>(consts), in.end());
  copy_into(call, carries);
}

// custom_rule: its body, run on the operands (its pullback is for reverse mode).
void custom_rule(const KernelCall& call) {
  std::vector<Tensor> in, out;
  for (const Tensor* a : call.args) in.push_back(*a);
  runner_of(call).run_region(call.op.regions[0], in, out);
  copy_into(call, out);
}

}  // namespace

void register_control_kernels(KernelTable& t) {
  t.set(Prim::scan, scan);
  t.set(Prim::cond, cond);
  t.set(Prim::while_loop, while_loop);
  t.set(Prim::custom_rule, custom_rule);
}

}  // namespace ytape
