// Small string utilities shared by the modules' error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ytape {

/// The fewest single-character insertions, deletions, substitutions and swaps of two
/// neighbours that turn `a` into `b` (the optimal string alignment distance): `gard` is one
/// edit from `grad`. For "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b);

/// The one of `candidates` that `word` is likely a typo of: the nearest by edit_distance,
/// at most max(1, |word| / 3) edits away and sharing something with `word` (fewer edits
/// than the longer of the two has characters), so that `@time` is no `@simd`; of equals,
/// the one that starts the most like `word` (`sinn` is `sin`, not `sign`), then the first.
/// "" if none is.
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

/// The hint every "did you mean" message ends with: "; did you mean 'X'?" naming
/// closest(word, candidates), or "" if none is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// `s` safe to print on a terminal: control characters (C0, DEL, and C1 written in UTF-8)
/// become `\n`, `\t`, `\r` or `\xNN`, and bytes that are not valid UTF-8 become `\xNN`,
/// so that a name or file name read from an untrusted tape cannot move the cursor, retitle
/// the window or hide text (ESC [ and OSC sequences). Backslashes are kept as they are.
/// Returns `s` unchanged when it needs no escape.
std::string printable(std::string_view s);

/// printable() of at most the first 100 bytes of `s`, "..." after them: a name from a
/// hostile file, which may hold megabytes, as a message shows it.
std::string shown_name(std::string_view s);

/// printable() of a multi-line text: the same, but newlines are kept.
std::string printable_lines(std::string_view s);

}  // namespace ytape
