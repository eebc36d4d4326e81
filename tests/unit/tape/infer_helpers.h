// Helpers of the inference tests (infer_*_test.cc).
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "tape/error.h"
#include "tape/infer.h"
#include "tape/prim.h"

namespace ytape::testing {

using Ints = std::vector<int64_t>;

inline constexpr int64_t k2to48 = int64_t{1} << 48;
inline constexpr int64_t k2to30 = int64_t{1} << 30;

// The output types of `p` on arguments of the given types, space-separated ("" if none).
inline std::string infer(Prim p, std::vector<std::string_view> args, const Attrs& attrs = {}) {
  std::vector<Type> types;
  for (std::string_view a : args) {
    Type t;
    std::string why;
    REQUIRE_MESSAGE(parse_type(a, &t, &why), why);
    types.push_back(std::move(t));
  }
  std::vector<Type> out = infer_types(p, types, normalize_attrs(p, attrs));
  // allreduce: one result per argument.
  REQUIRE(out.size() ==
          (p == Prim::allreduce ? types.size() : static_cast<size_t>(prim_info(p).outputs)));
  std::vector<std::string> text;
  for (const Type& t : out) text.push_back(type_str(t));
  return fmt::format("{}", fmt::join(text, " "));
}

}  // namespace ytape::testing
