#include "cli/io.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "runtime/inputs.h"
#include "tape/error.h"
#include "tape/json.h"

namespace ytape::cli {

std::string source_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

TensorMap gather_inputs(const Tape& t, const std::string& path, bool random, uint64_t seed) {
  TensorMap inputs;
  if (!path.empty()) inputs = load_inputs(read_file(path), source_name(path), t);
  if (random) inputs = complete_inputs(t, std::move(inputs), seed);
  return inputs;
}

std::string read_file(const std::string& path) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) user_error("cannot read {}: {}", path, std::strerror(errno));
  std::string content;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) content.append(buffer, n);
  bool failed = std::ferror(f) != 0;
  int error = errno;
  if (f != stdin) std::fclose(f);
  if (failed) user_error("cannot read {}: {}", source_name(path), std::strerror(error));
  return content;
}

void write_file(const std::string& path, std::string_view content) {
  if (path.empty() || path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return;
  }
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = mkstemp(tmp.data());
  if (fd < 0) user_error("cannot write {}: {}", path, std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      int error = errno;
      ::close(fd);
      std::remove(tmp.c_str());
      user_error("cannot write {}: {}", path, std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates the file private; give it the usual permissions of a new file.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(tmp.c_str());
    user_error("cannot write {}: {}", path, std::strerror(error));
  }
}

Tape load_tape(const std::string& path) {
  return read_tape_json(read_file(path), source_name(path));
}

}  // namespace ytape::cli
