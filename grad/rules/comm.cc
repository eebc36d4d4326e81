// VJP rules of the comm family: none. `ytape distribute` inserts these ops into a tape that
// is differentiated already (a training step), so grad refuses them, naming the op:
// differentiate first, then distribute.
#include "grad/rules.h"
#include "tape/error.h"

namespace ytape::grad {

void register_comm_rules(RuleTable&) {}

void refuse_comm(const Tape& t, const Op& op) {
  if (prim_info(op.prim).family != Family::comm) return;
  const std::string where = t.loc_str(op.loc);
  user_error(
      "op {} ({}{}{}): a derivative flows through a comm op of a distributed tape; "
      "differentiate the tape written for one process, then distribute it",
      &op - t.ops.data() + 1, prim_name(op.prim), where.empty() ? "" : ", ", where);
}

}  // namespace ytape::grad
