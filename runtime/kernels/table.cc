#include "runtime/kernels/kernel.h"

namespace ytape {

std::string describe_own_kernel(const Tape&, const Op&, const Layout*) {
  return "ytape";
}

namespace {

KernelTable make_table(KernelSet set) {
  KernelTable t(set);
  register_elementwise_kernels(t);
  register_reduce_kernels(t);
  register_shape_kernels(t);
  register_index_kernels(t);
  register_linalg_kernels(t);
  register_conv_kernels(t);
  register_pool_kernels(t);
  register_norm_kernels(t);
  register_creation_kernels(t);
  register_effect_kernels(t);
  return t;
}

}  // namespace

const KernelTable& kernel_table(KernelSet set) {
  static const KernelTable fast = make_table(KernelSet::fast);
  static const KernelTable reference = make_table(KernelSet::reference);
  return set == KernelSet::fast ? fast : reference;
}

}  // namespace ytape
