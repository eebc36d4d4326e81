// VJP rules of the comm family: none. `ytape distribute` inserts these ops into a tape that
// is differentiated already (a training step), so grad refuses them, naming the op:
// differentiate first, then distribute.
#include "grad/rules.h"

namespace ytape::grad {

void register_comm_rules(RuleTable&) {}

}  // namespace ytape::grad
