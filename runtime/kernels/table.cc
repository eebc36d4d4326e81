#include "runtime/kernels/kernel.h"

namespace ytape {

std::string describe_own_kernel(const Tape&, const Op&, const Layout*, Variant) {
  return "ytape";
}

namespace {

KernelTable make_table(KernelSet set) {
  KernelTable t(set);
#define FAMILY(f) register_##f##_kernels(t);
#include "tape/families.def"
#undef FAMILY
  return t;
}

}  // namespace

const KernelTable& kernel_table(KernelSet set) {
  static const KernelTable fast = make_table(KernelSet::fast);
  static const KernelTable reference = make_table(KernelSet::reference);
  return set == KernelSet::fast ? fast : reference;
}

}  // namespace ytape
