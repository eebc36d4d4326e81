// The pull lexer under the JSON tape reader (io/json_read.cc): JSON tokens on demand,
// with the line of each for messages. Internal to the reader; not a general JSON library.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tape/error.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ytape::json_internal {

/// What Lexer::peek returns at the end of the text.
inline constexpr int kEnd = -1;

/// Compares short strings without a call to memcmp: keys are matched ~5 times per op.
inline bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

/// A JSON number as written: its text, and whether it is an integer (no fraction, no
/// exponent). Converting it is left to the caller, who knows the type it must have.
struct Number {
  std::string_view text;
  bool integer = false;
};

/// A pull lexer over JSON text: the caller asks for the token its grammar expects next, and
/// the lexer reads just that token, counting lines. Every failure throws UserError
/// "<source>:<line>: <message>". It never recurses and never reads past the text.
class Lexer {
 public:
  /// `text` must outlive the lexer: strings without escapes and numbers are views into it.
  Lexer(std::string_view text, std::string_view source)
      : begin_(reinterpret_cast<const unsigned char*>(text.data())),
        p_(begin_),
        end_(p_ + text.size()),
        source_(source) {}

  /// Throws UserError "<source>:<line>: <message>".
  template <typename... Args>
  [[noreturn]] void fail(int64_t line, fmt::format_string<Args...> format, Args&&... args) const {
    user_error("{}:{}: {}", source_, line, fmt::format(format, std::forward<Args>(args)...));
  }

  /// How many bytes of the text have been read.
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  /// The current line, without skipping anything.
  int64_t here() const { return line_; }
  /// Skips whitespace and returns the line of the next token.
  int64_t line() {
    skip_space();
    return line_;
  }
  /// Skips whitespace; the next character, or kEnd.
  int peek() {
    skip_space();
    return p_ == end_ ? kEnd : *p_;
  }
  /// Skips whitespace and consumes `c` if it comes next.
  bool consume(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  /// Consumes `c`, or fails with "expected <what>, got <next token>".
  void expect(char c, std::string_view what) {
    if (!consume(c)) fail(line_, "expected {}, got {}", what, next());
  }
  /// After an item of an array or object: true if a ',' and another item follow, false
  /// once the closing bracket has been consumed.
  bool more(char close) {
    if (consume(',')) return true;
    if (consume(close)) return false;
    fail(line_, "expected ',' or '{}', got {}", close, next());
  }
  /// A string, unescaped and checked (valid escapes, UTF-8, no raw control characters);
  /// the view lasts until the next call.
  std::string_view string(std::string_view what = "a string") {
    expect('"', what);
    const unsigned char* start = p_;
    skip_plain();
    if (p_ != end_ && *p_ == '"') {
      ++p_;
      return {reinterpret_cast<const char*>(start), static_cast<size_t>(p_ - 1 - start)};
    }
    buffer_.assign(start, p_);
    return rest_of_string();
  }
  /// Consumes `token` if the text continues with exactly it, without skipping anything.
  /// Meant for short tokens: a mismatch is usually seen at the first bytes.
  bool literal(std::string_view token) {
    if (static_cast<size_t>(end_ - p_) < token.size()) return false;
    if (!same({reinterpret_cast<const char*>(p_), token.size()}, token)) return false;
    p_ += token.size();
    return true;
  }
  /// A string as string() reads it, lasting as long as the text: a view into the text, or
  /// one into `storage` where the string had escapes (or non-ASCII text) to decode.
  std::string_view lasting_string(std::string& storage) {
    std::string_view s = string();
    if (s.data() == buffer_.data()) return storage.assign(s);
    return s;
  }
  /// An object key and the ':' after it.
  std::string_view key() {
    std::string_view k = string("a key (a string)");
    expect(':', "':' after a key");
    return k;
  }
  /// A number in strict JSON grammar.
  Number number() {
    skip_space();
    const unsigned char* start = p_;
    if (p_ != end_ && *p_ == '-') {
      ++p_;
      if (p_ == end_ || !digit(*p_)) fail(line_, "a number needs a digit after its '-'");
    }
    if (p_ == end_ || !digit(*p_)) fail(line_, "expected a number, got {}", next());
    if (*p_ == '0') {
      ++p_;
      if (p_ != end_ && digit(*p_)) fail(line_, "a number cannot have a leading 0");
    } else {
      skip_digits();
    }
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      integer = false;
      if (p_ == end_ || !digit(*p_)) fail(line_, "a number needs digits after its '.'");
      skip_digits();
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      integer = false;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !digit(*p_)) fail(line_, "a number needs digits in its exponent");
      skip_digits();
    }
    return {{reinterpret_cast<const char*>(start), static_cast<size_t>(p_ - start)}, integer};
  }
  /// A number without fraction or exponent that fits in int64; `what` names it in messages.
  int64_t integer(std::string_view what) {
    skip_space();
    // The common case first: a var id, up to 18 digits without a sign or a leading 0.
    const unsigned char* q = p_;
    if (q != end_ && *q >= '1' && *q <= '9') {
      int64_t v = 0;
      for (; q != end_ && digit(*q) && q - p_ < 18; ++q) v = v * 10 + (*q - '0');
      if (q == end_ || (!digit(*q) && *q != '.' && *q != 'e' && *q != 'E')) {
        p_ = q;
        return v;
      }
    }
    int64_t line = line_;
    int c = peek();
    if (c != '-' && !(c >= '0' && c <= '9')) {
      fail(line, "{} must be an integer, got {}", what, next());
    }
    Number n = number();
    if (!n.integer) fail(line, "{} must be an integer, got {}", what, n.text);
    return to_int64(n.text, line);
  }
  /// The value of an integer Number read on `line`.
  int64_t to_int64(std::string_view text, int64_t line) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) fail(line, "integer {} does not fit in 64 bits", text);
    return v;
  }
  /// The value of a float Number read on `line`; `what` names the type in messages.
  template <typename T>
  T to_float(std::string_view text, int64_t line, std::string_view what) const {
    T v{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() && rounds_to_zero(text)) {
      fail(line, "{} is too small for {}: it would round to 0 (write 0 if that is meant)", text,
           what);
    }
    if (ec != std::errc()) {
      fail(line, "{} is out of range for {} (infinities are written \"inf\" and \"-inf\")", text,
           what);
    }
    return v;
  }

  /// `true` or `false`.
  bool boolean() {
    skip_space();
    for (bool v : {true, false}) {
      std::string_view word = v ? "true" : "false";
      if (static_cast<size_t>(end_ - p_) >= word.size() &&
          std::memcmp(p_, word.data(), word.size()) == 0) {
        p_ += word.size();
        return v;
      }
    }
    fail(line_, "expected true or false, got {}", next());
  }
  /// Fails unless only whitespace is left.
  void finish() {
    if (peek() != kEnd) fail(line_, "unexpected {} after the end of the tape object", next());
  }
  /// The next token in words, for messages: "a string", "'['", "end of input".
  std::string next() const {
    const unsigned char* at = p_;
    if (at == end_) return "end of input";
    if (*at == '"') return "a string";
    if (*at == '-' || digit(*at)) return "a number";
    if (*at > 0x20 && *at < 0x7f) return fmt::format("'{}'", static_cast<char>(*at));
    return fmt::format("byte 0x{:02x}", *at);
  }

 private:
  static bool digit(unsigned char c) { return c >= '0' && c <= '9'; }
  void skip_digits() {
    while (p_ != end_ && digit(*p_)) ++p_;
  }
  void skip_space() {
    while (p_ != end_) {
      unsigned char c = *p_;
      if (c > ' ') return;  // the common case: canonical files have no space between tokens
      if (c == '\n') {
        ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++p_;
    }
  }
  // Skips the characters a string holds as they are: ASCII but '"', '\\' and controls.
  // Strings are ~8 of an op's tokens; SSE2 (every x86-64 has it) looks at 16 bytes a step.
  void skip_plain() {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end_ - p_ >= 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      // Signed compare: bytes >= 0x80 are negative, so "less than 0x20" takes them too.
      __m128i stop =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                       _mm_cmplt_epi8(x, space));
      int mask = _mm_movemask_epi8(stop);
      if (mask != 0) {
        p_ += __builtin_ctz(static_cast<unsigned>(mask));
        return;
      }
      p_ += 16;
    }
#endif
    while (p_ != end_ && *p_ != '"' && *p_ != '\\' && *p_ >= 0x20 && *p_ < 0x80) ++p_;
  }
  // The slow path of string(): escapes and non-ASCII text, decoded into buffer_.
  std::string_view rest_of_string() {
    for (;;) {
      if (p_ == end_) fail(line_, "unterminated string");
      unsigned char c = *p_;
      if (c == '"') {
        ++p_;
        return buffer_;
      }
      if (c == '\\') {
        escape();
      } else if (c < 0x20) {
        fail(line_, "raw control character 0x{:02x} in a string; write it as \\u{:04x}", c, c);
      } else if (c < 0x80) {
        buffer_ += static_cast<char>(c);
        ++p_;
      } else {
        size_t n = utf8_length(p_, end_);
        if (n == 0) fail(line_, "invalid UTF-8 in a string");
        buffer_.append(p_, p_ + n);
        p_ += n;
      }
    }
  }
  void escape() {
    ++p_;
    if (p_ == end_) fail(line_, "unterminated string");
    static constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
    size_t simple = kFrom.find(static_cast<char>(*p_));
    if (simple != std::string_view::npos) {
      buffer_ += kTo[simple];
      ++p_;
      return;
    }
    if (*p_ != 'u') {
      fail(line_, "bad escape in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    }
    ++p_;
    uint32_t cp = hex4();
    if (cp >= 0xdc00 && cp <= 0xdfff) fail(line_, "unpaired surrogate \\u{:04x} in a string", cp);
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
        fail(line_, "unpaired surrogate \\u{:04x} in a string", cp);
      }
      p_ += 2;
      uint32_t low = hex4();
      if (low < 0xdc00 || low > 0xdfff) fail(line_, "unpaired surrogate \\u{:04x} in a string", cp);
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    append_utf8(buffer_, cp);
  }
  uint32_t hex4() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      if (p_ == end_) fail(line_, "unterminated string");
      unsigned char c = *p_;
      int d = digit(c)                                 ? c - '0'
              : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                       : -1;
      if (d < 0) fail(line_, "bad escape: \\u needs four hex digits");
      v = v * 16 + d;
    }
    return v;
  }

  // Whether a JSON number that from_chars found out of range is so close to zero that it
  // would round to zero, rather than too large.
  static bool rounds_to_zero(std::string_view text) {
    double d = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec == std::errc()) return std::abs(d) < 1;
    bool negative_exponent = text.find("e-") != text.npos || text.find("E-") != text.npos;
    bool fraction_only = text.starts_with("0.") || text.starts_with("-0.");
    return negative_exponent || fraction_only;
  }

  // Length of the UTF-8 sequence at p (its first byte is >= 0x80), or 0 if it is not valid
  // UTF-8 (overlong forms, surrogates and code points past U+10FFFF included).
  static size_t utf8_length(const unsigned char* p, const unsigned char* end) {
    unsigned char c = p[0];
    size_t n = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (n == 0 || static_cast<size_t>(end - p) < n) return 0;
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; ++i) {
      if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    }
    return n;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  const unsigned char* begin_;
  const unsigned char* p_;
  const unsigned char* end_;
  std::string_view source_;
  int64_t line_ = 1;
  std::string buffer_;
};

}  // namespace ytape::json_internal
