#include "tracer/lang/unicode.h"

#include <algorithm>
#include <array>
#include <vector>

namespace ytape::tracer {

namespace {

struct Composition {
  uint32_t letter;
  uint32_t mark;
  uint32_t composed;
};

// Sorted by (letter, mark), for binary search.
constexpr Composition kCompositions[] = {
#define COMPOSE(letter, mark, composed) {letter, mark, composed},
#include "tracer/lang/compose.def"
#undef COMPOSE
};

// The code point that `letter` and `mark` compose into, or 0.
uint32_t compose(uint32_t letter, uint32_t mark) {
  auto less = [](const Composition& c, std::pair<uint32_t, uint32_t> key) {
    return std::pair(c.letter, c.mark) < key;
  };
  const Composition* end = std::end(kCompositions);
  const Composition* it =
      std::lower_bound(std::begin(kCompositions), end, std::pair(letter, mark), less);
  return it != end && it->letter == letter && it->mark == mark ? it->composed : 0;
}

}  // namespace

uint32_t decode_utf8(std::string_view s, size_t at, size_t* length) {
  auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  uint32_t b0 = byte(at);
  size_t n = b0 < 0x80           ? 1
             : (b0 >> 5) == 0x6  ? 2
             : (b0 >> 4) == 0xE  ? 3
             : (b0 >> 3) == 0x1E ? 4
                                 : 0;
  uint32_t cp = n == 1 ? b0 : b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(at + k) & 0xC0) != 0x80) n = 0;
    cp = (cp << 6) | (byte(at + k) & 0x3F);
  }
  *length = n;
  return cp;
}

void encode_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
    return;
  }
  int n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  out += static_cast<char>(((0xF00 >> n) & 0xFF) | (cp >> (6 * (n - 1))));
  for (int k = n - 2; k >= 0; --k) out += static_cast<char>(0x80 | ((cp >> (6 * k)) & 0x3F));
}

std::string normalize_name(std::string_view word) {
  if (std::all_of(word.begin(), word.end(), [](char c) { return (c & 0x80) == 0; }))
    return std::string(word);
  std::vector<uint32_t> out;
  for (size_t i = 0, length = 1; i < word.size(); i += std::max<size_t>(length, 1)) {
    uint32_t cp = decode_utf8(word, i, &length);
    if (cp == 0xB5) cp = 0x3BC;   // µ is μ
    if (cp == 0x25B) cp = 0x3B5;  // ɛ is ε
    uint32_t composed = cp >= 0x300 && cp <= 0x36F && !out.empty() ? compose(out.back(), cp) : 0;
    if (composed != 0) {
      out.back() = composed;
    } else {
      out.push_back(cp);
    }
  }
  std::string text;
  for (uint32_t cp : out) encode_utf8(cp, text);
  return text;
}

}  // namespace ytape::tracer
