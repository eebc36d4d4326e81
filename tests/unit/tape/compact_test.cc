#include "tape/compact.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tape/type_table.h"

using namespace ytape;

namespace {

std::vector<uint8_t> bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(0xf0 + i);
  return v;
}

bool holds(const RareBytes& r, size_t n) {
  std::vector<uint8_t> want = bytes(n);
  return r.size() == n && (n == 0 || std::memcmp(r.data(), want.data(), n) == 0);
}

}  // namespace

// Up to 4 bytes (a name: 3 characters) live in the pointer's place; each size on both
// sides of that, through every copy, move and assignment between the two kinds.
TEST_CASE("RareBytes and RareString keep their items in place or on the heap") {
  static_assert(sizeof(RareBytes) == 8 && sizeof(RareString) == 8);
  for (size_t n : {0u, 1u, 3u, 4u, 5u, 8u, 40u}) {
    CAPTURE(n);
    RareBytes a = bytes(n);
    CHECK(holds(a, n));
    CHECK(a.empty() == (n == 0));
    if (n > 0) CHECK(reinterpret_cast<uintptr_t>(a.data()) % 4 == 0);  // a float reads it
    RareBytes copy(a);
    CHECK(copy == a);
    RareBytes moved(std::move(copy));
    CHECK(holds(moved, n));
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from array is empty
    for (size_t m : {0u, 2u, 4u, 5u, 12u}) {
      RareBytes target = bytes(m);
      target = a;
      CHECK(holds(target, n));
      RareBytes other = bytes(m);
      other = std::move(target);
      CHECK(holds(other, n));
    }
    a.clear();
    CHECK(a.empty());

    std::string text(n, 'x');
    RareString s(text);
    CHECK(s.view() == text);
    CHECK(std::strlen(s.data() == nullptr ? "" : s.data()) == n);  // terminated
    RareString t = s;
    CHECK(t == text);
    t = "ab";
    CHECK(t == "ab");
    t = s;
    CHECK(t == s);
  }
  CHECK(RareBytes(bytes(4)) != RareBytes(bytes(5)));
}

TEST_CASE("TypeTable keeps each var's type and each distinct type once") {
  Type scalar{DType::f32, {}}, matrix{DType::f32, {3, 4}}, ints{DType::i64, {3, 4}};
  TypeTable t;
  for (int i = 0; i < 1000; ++i) t.push_back(i % 3 == 0 ? matrix : scalar);
  t.push_back(ints);
  CHECK(t.size() == 1001);
  CHECK(t.distinct() == 3);
  CHECK(t[0] == matrix);
  CHECK(t[1] == scalar);
  CHECK(t.back() == ints);
  const Type& held = t[3];
  for (int i = 0; i < 1000; ++i) t.push_back(Type{DType::f64, {i}});  // new distinct types
  CHECK(held == matrix);                                              // references stay valid
  CHECK(&held == &t[0]);

  t.set(1, ints);
  CHECK(t[1] == ints);
  CHECK(t[2] == scalar);

  TypeTable copy = t;
  CHECK(copy == t);
  CHECK(&copy[0] != &t[0]);  // the copy holds its own types
  TypeTable moved = std::move(copy);
  CHECK(moved == t);
  size_t n = 0;
  for (const Type& type : moved) CHECK(type == t[n++]);
  CHECK(n == t.size());

  // Equal by types, however the distinct ones are numbered.
  TypeTable a, b;
  a.push_back(scalar);
  a.push_back(matrix);
  b.push_back(matrix);
  b.set(0, scalar);
  b.push_back(matrix);
  CHECK(a == b);
  b.set(1, ints);
  CHECK_FALSE(a == b);
}
