// Source files of a model program and positions in them, shared by the lexer, the parser and
// the interpreter, so that every error can point at the line and column it is about.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ytape::tracer {

/// The largest program file read (64 MiB; ResNet-18's program is 6 kB): a larger one is
/// refused before it is read.
inline constexpr int64_t kMaxSourceBytes = int64_t{64} << 20;

/// Reads program file `path` into `text`. Returns why it cannot, or "" when it did:
/// anything but a regular file (a folder, a FIFO, a device such as /dev/zero, a socket)
/// is refused without being read or waited on, and so is a file larger than
/// kMaxSourceBytes. The reasons read after "cannot read 'PATH': ".
std::string read_source_file(const std::string& path, std::string& text);

/// A position in a source file. `file` indexes Sources; `line` and `col` are 1-based, and
/// `col` counts code points (a tab or a Greek letter is one column). Line 0 means unknown.
struct Pos {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool known() const { return line != 0; }
  friend bool operator==(Pos, Pos) = default;
};

/// One source file: its path as given (used in messages) and its whole text.
struct SourceFile {
  std::string path;
  std::string text;
  std::vector<uint32_t> line_starts;  ///< byte offset of each line; line_starts[0] == 0

  /// The text of line `line` (1-based) without its line break; empty if out of range.
  std::string_view line_text(uint32_t line) const;
};

/// All source files of a program: the main file and every file it includes. Files never
/// move once added, so views into their text stay valid for the life of the Sources.
class Sources {
 public:
  /// Adds a file from text and returns its index.
  uint32_t add(std::string path, std::string text);
  /// Adds file `index` of `other` without copying it (files are immutable) and returns
  /// its index here.
  uint32_t share(const Sources& other, uint32_t index);
  /// Reads a file from disk (read_source_file) and adds it. Throws UserError "cannot read
  /// 'path': reason".
  uint32_t load(const std::string& path);

  const SourceFile& file(uint32_t index) const { return *files_.at(index); }
  uint32_t size() const { return static_cast<uint32_t>(files_.size()); }

  /// "path:line:col", or "" for an unknown position.
  std::string where(Pos pos) const;
  /// An error message pointing at `pos`:
  ///
  ///     path:line:col: message
  ///     <the source line>
  ///     <spaces>^
  ///
  /// The caret line copies the tabs of the source line so that the caret lines up. For an
  /// unknown position, just the message.
  std::string format(Pos pos, std::string_view message) const;
  /// Throws UserError(format(pos, message)).
  [[noreturn]] void fail(Pos pos, std::string_view message) const;

 private:
  std::vector<std::shared_ptr<const SourceFile>> files_;
};

}  // namespace ytape::tracer
