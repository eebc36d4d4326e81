// Kernels of the effect family: print and guard.
#include <string>

#include "runtime/format.h"
#include "runtime/kernels/kernel.h"

namespace ytape {

namespace {

// With an empty format the values are joined by spaces; otherwise each "{}" takes one.
void print(const KernelCall& call) {
  const std::string format = attrs_of<Prim::print>(call.op.attrs).format;
  std::string line;
  if (format.empty()) {
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (i > 0) line += ' ';
      line += values_str(*call.args[i]);
    }
  } else {
    size_t next = 0, pos = 0;
    for (size_t hole = format.find("{}"); hole != std::string::npos;
         hole = format.find("{}", pos)) {
      line.append(format, pos, hole - pos);
      line += values_str(*call.args[next++]);
      pos = hole + 2;
    }
    line.append(format, pos);
  }
  if (call.context != nullptr && call.context->print) {
    call.context->print(line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
  }
}

void guard(const KernelCall& call) {
  if (!call.args[0]->data<bool>()[0])
    user_error("guard failed: {}", attrs_of<Prim::guard>(call.op.attrs).message);
}

}  // namespace

void register_effect_kernels(KernelTable& t) {
  t.set(Prim::print, print);
  t.set(Prim::guard, guard);
}

}  // namespace ytape
