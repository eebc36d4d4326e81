// VJP rules of the effect family: none. print and guard have no outputs, so no cotangent
// ever reaches them.
#include "grad/rules.h"

namespace ytape::grad {

void register_effect_rules(RuleTable&) {}

}  // namespace ytape::grad
