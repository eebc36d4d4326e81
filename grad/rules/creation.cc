// VJP rules of the creation family: none. fill, iota, rand and randn take no arguments,
// so no cotangent has anywhere to go; the driver treats their values as constants.
#include "grad/rules.h"

namespace ytape::grad {

void register_creation_rules(RuleTable&) {}

}  // namespace ytape::grad
