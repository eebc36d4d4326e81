#include "tape/var.h"

#include <doctest/doctest.h>

#include <utility>

using namespace ytape;

namespace {

VarList iota(uint32_t n) {
  VarList v;
  for (uint32_t i = 0; i < n; ++i) v.push_back(Var{i});
  return v;
}

bool is_iota(const VarList& v, uint32_t n) {
  if (v.size() != n) return false;
  for (uint32_t i = 0; i < n; ++i) {
    if (v[i].id != i) return false;
  }
  return true;
}

}  // namespace

// Sizes on both sides of the inline room (3), so that every copy and move crosses from
// inline to heap storage and back.
TEST_CASE("VarList keeps its vars through copies and moves, inline or on the heap") {
  for (uint32_t n : {0u, 1u, 3u, 4u, 5u, 9u, 33u}) {
    CAPTURE(n);
    VarList a = iota(n);
    CHECK(is_iota(a, n));
    VarList copy(a);
    CHECK(copy == a);
    VarList moved(std::move(copy));
    CHECK(is_iota(moved, n));
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    copy.push_back(Var{7});
    CHECK(copy.size() == 1);

    for (uint32_t m : {0u, 3u, 4u, 6u}) {
      VarList target = iota(m);
      target = a;
      CHECK(is_iota(target, n));
      VarList other = iota(m);
      other = std::move(target);
      CHECK(is_iota(other, n));
    }
    VarList self = iota(n);
    VarList& same = self;
    self = same;
    CHECK(is_iota(self, n));
  }
}

TEST_CASE("VarList compares, resizes and converts like a vector") {
  VarList a{Var{3}, Var{1}};
  CHECK(a == VarList(std::vector<Var>{Var{3}, Var{1}}));
  CHECK_FALSE(a == VarList{Var{3}});
  CHECK(a.front().id == 3);
  CHECK(a.back().id == 1);
  a.resize(6);
  CHECK(a.size() == 6);
  CHECK(a[5].id == 0);
  a[5] = Var{8};
  CHECK(a.vector().back().id == 8);
  a.clear();
  CHECK(a.empty());
}

TEST_CASE("VarList is 16 bytes and keeps its heap room when cleared") {
  static_assert(sizeof(VarList) == 16);
  VarList a = iota(7);
  a.clear();
  CHECK(a.empty());
  for (uint32_t i = 0; i < 7; ++i) a.push_back(Var{i});
  CHECK(is_iota(a, 7));
  a.resize(2);  // back within the inline count, still on the heap
  CHECK(is_iota(a, 2));
  VarList b(a);
  CHECK(is_iota(b, 2));
  a.reserve(100);
  CHECK(is_iota(a, 2));
}
