#include "tracer/lang/source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// What a file of mode `mode` is, for a message, when it is not a regular file.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string not_regular(mode_t mode) {
  return fmt::format("it is {}, not a program file", file_kind(mode));
}

std::string too_large(int64_t bytes) {
  return fmt::format("it is {} bytes, more than the {} MiB a program file may be", bytes,
                     kMaxSourceBytes >> 20);
}

// Reads the open regular file `fd` of `size` bytes; a file that grows meanwhile is read up
// to one byte past the limit, so that it is refused rather than read without end.
std::string read_open_file(int fd, int64_t size, std::string& text) {
  text.clear();
  text.reserve(static_cast<size_t>(size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::strerror(errno);
    if (n == 0) return {};
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > kMaxSourceBytes) {
      text.clear();
      return fmt::format("it grew past the {} MiB a program file may be while it was read",
                         kMaxSourceBytes >> 20);
    }
  }
}

}  // namespace

std::string read_source_file(const std::string& path, std::string& text) {
  // stat first, so that a device or FIFO is never opened (opening some has effects); the
  // open file is checked again, since the path may name something else by then, and
  // O_NONBLOCK keeps a FIFO put there meanwhile from blocking the open or the read.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  if (st.st_size > kMaxSourceBytes) return too_large(st.st_size);
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = not_regular(st.st_mode);
  } else if (st.st_size > kMaxSourceBytes) {
    why = too_large(st.st_size);
  } else {
    why = read_open_file(fd, st.st_size, text);
  }
  ::close(fd);
  return why;
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts.size()) return {};
  size_t begin = line_starts[line - 1];
  size_t end = line < line_starts.size() ? line_starts[line] - 1 : text.size();
  std::string_view out(text.data() + begin, end - begin);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

uint32_t Sources::add(std::string path, std::string text) {
  auto file = std::make_shared<SourceFile>();
  file->line_starts = find_line_starts(text);
  file->path = std::move(path);
  file->text = std::move(text);
  files_.push_back(std::move(file));
  return size() - 1;
}

uint32_t Sources::share(const Sources& other, uint32_t index) {
  files_.push_back(other.files_.at(index));
  return size() - 1;
}

uint32_t Sources::load(const std::string& path) {
  std::string text;
  std::string why = read_source_file(path, text);
  if (!why.empty()) user_error("cannot read '{}': {}", path, why);
  return add(path, std::move(text));
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
