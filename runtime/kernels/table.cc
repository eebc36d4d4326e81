#include "runtime/kernels/kernel.h"

namespace ytape {

namespace {

KernelTable make_table() {
  KernelTable t;
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

const KernelTable& kernel_table() {
  static const KernelTable t = make_table();
  return t;
}

}  // namespace ytape
