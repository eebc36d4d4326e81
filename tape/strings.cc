#include "tape/strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace ytape {

size_t edit_distance(std::string_view a, std::string_view b) {
  // The dynamic-programming table three rows at a time: a swap looks two rows back.
  std::vector<size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  auto common_prefix = [&](std::string_view c) {
    return static_cast<size_t>(std::mismatch(word.begin(), word.end(), c.begin(), c.end()).first -
                               word.begin());
  };
  const std::string* best = nullptr;
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1, best_prefix = 0;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d >= std::max(word.size(), c.size())) continue;  // shares nothing
    size_t prefix = common_prefix(c);
    if (d < best_distance || (best && d == best_distance && prefix > best_prefix))
      best = &c, best_distance = d, best_prefix = prefix;
  }
  return best ? *best : "";
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = closest(word, candidates);
  return best.empty() ? "" : fmt::format("; did you mean '{}'?", best);
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 if it is not one:
// overlong forms, surrogates and code points past U+10FFFF are not valid.
size_t utf8_length(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto continuation = [&](size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return continuation(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (b == 0xED && byte(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (b == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

std::string escaped(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    size_t n = utf8_length(s.substr(i));
    // U+0080..U+009F, the C1 controls (CSI among them), are C2 80..C2 9F in UTF-8.
    bool c1 = n == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
    if (n > 1 && !c1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    if (n == 1 && b >= 0x20 && b != 0x7F) {
      out += s[i++];
    } else if (b == '\n') {
      out += keep_newlines ? "\n" : "\\n";
      ++i;
    } else if (b == '\t') {
      out += "\\t";
      ++i;
    } else if (b == '\r') {
      out += "\\r";
      ++i;
    } else {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
      }
      i += std::max<size_t>(n, 1);
    }
  }
  return out;
}

// Whether `s` holds anything but printable ASCII (and newlines, if kept): only such text
// can need an escape, and the common case then costs one scan and no copy.
bool needs_escape(std::string_view s, bool keep_newlines) {
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && !(keep_newlines && b == '\n')) || b >= 0x7F) return true;
  }
  return false;
}

}  // namespace

std::string printable(std::string_view s) {
  return needs_escape(s, false) ? escaped(s, false) : std::string(s);
}

std::string shown_name(std::string_view s) {
  constexpr size_t kMax = 100;
  if (s.size() <= kMax) return printable(s);
  return printable(s.substr(0, kMax)) + "...";
}

std::string printable_lines(std::string_view s) {
  return needs_escape(s, true) ? escaped(s, true) : std::string(s);
}

}  // namespace ytape
