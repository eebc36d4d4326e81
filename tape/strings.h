// Small string utilities shared by the modules' error messages.
#pragma once

#include <cstddef>
#include <string_view>

namespace ytape {

/// The Levenshtein distance between `a` and `b`: the fewest single-character insertions,
/// deletions and substitutions that turn one into the other. For "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace ytape
