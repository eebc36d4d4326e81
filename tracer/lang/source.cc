#include "tracer/lang/source.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tape/error.h"

namespace ytape::tracer {

namespace {

std::vector<uint32_t> find_line_starts(std::string_view text) {
  std::vector<uint32_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(static_cast<uint32_t>(i + 1));
  }
  return starts;
}

// The caret sits under column `col` of `line`; copying tabs keeps it aligned whatever the
// terminal's tab width, and skipping UTF-8 continuation bytes counts code points as columns.
std::string caret_line(std::string_view line, uint32_t col) {
  std::string out;
  uint32_t column = 1;
  for (char c : line) {
    if (column >= col) break;
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;
    out += c == '\t' ? '\t' : ' ';
    ++column;
  }
  out.append(col > column ? col - column : 0, ' ');
  out += '^';
  return out;
}

}  // namespace

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts.size()) return {};
  size_t begin = line_starts[line - 1];
  size_t end = line < line_starts.size() ? line_starts[line] - 1 : text.size();
  std::string_view out(text.data() + begin, end - begin);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

uint32_t Sources::add(std::string path, std::string text) {
  auto file = std::make_unique<SourceFile>();
  file->line_starts = find_line_starts(text);
  file->path = std::move(path);
  file->text = std::move(text);
  files_.push_back(std::move(file));
  return size() - 1;
}

uint32_t Sources::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error("cannot read '{}': {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) user_error("cannot read '{}': {}", path, std::strerror(errno));
  return add(path, std::move(text).str());
}

std::string Sources::where(Pos pos) const {
  if (!pos.known() || pos.file >= size()) return {};
  return fmt::format("{}:{}:{}", file(pos.file).path, pos.line, pos.col);
}

std::string Sources::format(Pos pos, std::string_view message) const {
  if (!pos.known() || pos.file >= size()) return std::string(message);
  std::string_view line = file(pos.file).line_text(pos.line);
  return fmt::format("{}: {}\n{}\n{}", where(pos), message, line, caret_line(line, pos.col));
}

void Sources::fail(Pos pos, std::string_view message) const {
  throw UserError(format(pos, message));
}

}  // namespace ytape::tracer
