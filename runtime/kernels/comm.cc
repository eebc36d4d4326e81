// Kernels of the comm family: allreduce, shard and allgather, over the run's Communicator
// (runtime/comm.h); without one, the run is a group of one rank.
#include "runtime/comm.h"

#include <cstring>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace ytape {

namespace {

// The run's group, checked against the rank count the op was made for; null: one rank.
Communicator* group(const KernelCall& call, int64_t ranks) {
  Communicator* comm = call.context != nullptr ? call.context->comm : nullptr;
  const int64_t size = comm != nullptr ? comm->size() : 1;
  if (ranks != size) {
    user_error(
        "the tape is distributed for {} ranks, but this run has {}: run it under mpirun -np {}, "
        "or distribute it again for {}",
        ranks, size, ranks, size);
  }
  return size > 1 ? comm : nullptr;
}

// memcpy, which may not be given the null pointers of empty tensors.
void copy(void* to, const void* from, int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, static_cast<size_t>(bytes));
}

// An allreduce in flight is known by its op, of which one run has one in flight at most.
uint64_t ticket(const KernelCall& call) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&call.op));
}

Reduction reduction(const std::string& op) {
  if (op == "max") return Reduction::max;
  if (op == "min") return Reduction::min;
  return Reduction::sum;
}

// The arguments travel in one message, reduced into the outputs while the run goes on:
// the plan keeps the outputs until allreduce_complete waits for them (Plan::waits).
void allreduce(const KernelCall& call) {
  const auto at = attrs_of<Prim::allreduce>(call.op.attrs);
  Communicator* comm = group(call, at.ranks);
  if (comm != nullptr) {
    comm->start_allreduce(ticket(call), call.args, {call.outs.begin(), call.outs.end()},
                          reduction(at.op));
    return;
  }
  for (size_t i = 0; i < call.args.size(); ++i) {  // one rank: the sum is the value
    if (call.outs[i]->raw() != call.args[i]->raw()) {
      copy(call.outs[i]->raw(), call.args[i]->raw(), call.args[i]->bytes());
    }
  }
}

void allreduce_complete(const KernelCall& call) {
  Communicator* comm = group(call, attrs_of<Prim::allreduce>(call.op.attrs).ranks);
  if (comm != nullptr) comm->finish(ticket(call));
}

// x viewed as [inner, extent, outer] around dim: the product of the dims before it, its
// own, and the product of those after it.
struct Around {
  int64_t inner = 1, extent = 1, outer = 1;
};

Around around(const Tensor& x, int64_t dim) {
  Around a;
  for (int d = 1; d <= x.rank(); ++d) {
    int64_t e = x.dim(d);
    if (d < dim) a.inner *= e;
    if (d == dim) a.extent = e;
    if (d > dim) a.outer *= e;
  }
  return a;
}

void shard(const KernelCall& call) {
  const auto at = attrs_of<Prim::shard>(call.op.attrs);
  Communicator* comm = group(call, at.ranks);
  const int64_t rank = comm != nullptr ? comm->rank() : 0;
  const Tensor& x = *call.args[0];
  const Around a = around(x, at.dim);
  const int64_t elem = dtype_size(x.dtype()), local = a.extent / at.ranks;
  const int64_t block = a.inner * local * elem;
  const auto* in = static_cast<const uint8_t*>(x.raw());
  auto* out = static_cast<uint8_t*>(call.outs[0]->raw());
  for (int64_t o = 0; o < a.outer; ++o) {
    copy(out + o * block, in + (o * a.extent + rank * local) * a.inner * elem, block);
  }
}

void allgather(const KernelCall& call) {
  const auto at = attrs_of<Prim::allgather>(call.op.attrs);
  Communicator* comm = group(call, at.ranks);
  const Tensor& x = *call.args[0];
  Tensor& out = *call.outs[0];
  if (comm == nullptr) {
    copy(out.raw(), x.raw(), x.bytes());
    return;
  }
  const Around a = around(x, at.dim);
  if (a.outer == 1) {  // rank order is the dim's order: gather in place
    comm->allgather(x.raw(), x.bytes(), out.raw());
    return;
  }
  std::vector<uint8_t> all(static_cast<size_t>(x.bytes() * at.ranks));
  comm->allgather(x.raw(), x.bytes(), all.data());
  const int64_t elem = dtype_size(x.dtype()), block = a.inner * a.extent * elem;
  auto* o = static_cast<uint8_t*>(out.raw());
  for (int64_t k = 0; k < a.outer; ++k) {
    for (int64_t q = 0; q < at.ranks; ++q) {
      copy(o + (k * at.ranks + q) * block, all.data() + q * x.bytes() + k * block, block);
    }
  }
}

}  // namespace

void register_comm_kernels(KernelTable& t) {
  t.set(Prim::allreduce, allreduce);
  t.complete[KernelTable::entry(Prim::allreduce)] = allreduce_complete;
  t.set(Prim::shard, shard);
  t.set(Prim::allgather, allgather);
}

}  // namespace ytape
