// UTF-8 and the Unicode forms of names, as the lexer needs them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ytape::tracer {

/// The code point whose UTF-8 bytes start at `s[at]`, its byte count in `*length`; 0 in
/// `*length` where the bytes there are not valid UTF-8 (cut short included).
uint32_t decode_utf8(std::string_view s, size_t at, size_t* length);

/// Appends code point `cp` to `out` in UTF-8.
void encode_utf8(uint32_t cp, std::string& out);

/// `word`, a name as the lexer reads it (valid UTF-8), as Julia normalizes names: in
/// Unicode's NFC form, where a Latin or Greek letter followed by a combining mark that
/// composes with it is the one composed character (`y` and U+0302 is `ŷ`, U+0177), so
/// that both spellings name the same variable; and with Julia's own identifier mappings,
/// µ (the micro sign) to μ and ɛ to ε. Marks are composed in the order written (they are
/// not reordered by combining class).
std::string normalize_name(std::string_view word);

}  // namespace ytape::tracer
