// Type and shape inference of every primitive: one good case each in a table. The edge
// cases and exact messages of each family are in infer_<families>_test.cc.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "unit/tape/infer_cases.h"
#include "unit/tape/infer_helpers.h"

using namespace ytape;
using namespace ytape::testing;

TEST_CASE("every primitive has an inference rule") {
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    CHECK(has_infer_rule(p));
  }
}

TEST_CASE("every primitive infers its good case, with its number of outputs") {
  std::set<Prim> covered;
  for (const Good& g : good_cases()) {
    CAPTURE(prim_name(g.prim));
    CHECK(infer(g.prim, g.args, g.attrs) == g.out);
    covered.insert(g.prim);
  }
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    // A region op's cases build its regions: tests/unit/tape/regions_test.cc.
    if (prim_info(p).holds_regions()) continue;
    CHECK(covered.count(p) == 1);
  }
}
