// Small string utilities shared by the modules' error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ytape {

/// The Levenshtein distance between `a` and `b`: the fewest single-character insertions,
/// deletions and substitutions that turn one into the other. For "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b);

/// `s` safe to print on a terminal: control characters (C0, DEL, and C1 written in UTF-8)
/// become `\n`, `\t`, `\r` or `\xNN`, and bytes that are not valid UTF-8 become `\xNN`,
/// so that a name or file name read from an untrusted tape cannot move the cursor, retitle
/// the window or hide text (ESC [ and OSC sequences). Backslashes are kept as they are.
/// Returns `s` unchanged when it needs no escape.
std::string printable(std::string_view s);

/// printable() of a multi-line text: the same, but newlines are kept.
std::string printable_lines(std::string_view s);

}  // namespace ytape
