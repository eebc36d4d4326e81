#include "cli/io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "cli/piece_writer.h"
#include "cli/signals.h"
#include "io/json.h"
#include "runtime/file_dtype.h"
#include "runtime/inputs.h"
#include "runtime/npy.h"
#include "runtime/tensor_file.h"
#include "tape/error.h"
#include "tape/strings.h"

namespace ytape::cli {

std::string source_name(const std::string& path) {
  return path == "-" ? "<stdin>" : printable(path);
}

TensorMap gather_inputs(const Tape& t, const std::vector<std::string>& paths, bool random,
                        uint64_t seed, bool skip_extra) {
  TensorMap inputs;
  std::map<std::string, std::string> from;  // input name -> the file that gave it
  for (const std::string& path : paths) {
    for (auto& [name, tensor] : load_inputs(read_file(path), source_name(path), t, skip_extra)) {
      auto [it, fresh] = from.emplace(name, source_name(path));
      if (!fresh) {
        user_error("input '{}' is in both {} and {}: give each input once", name, it->second,
                   source_name(path));
      }
      inputs.emplace_back(std::move(name), std::move(tensor));
    }
  }
  if (random) inputs = complete_inputs(t, std::move(inputs), seed);
  return inputs;
}

std::string read_file(const std::string& path) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) user_error("cannot read {}: {}", path, std::strerror(errno));
  std::string content;
  // A regular file is read into a string of its size: grown by doubling, a 10^6-op tape
  // would leave ~1.5 times its size of freed copies behind in the process (its peak memory).
  struct stat st {};
  if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode)) content.reserve(st.st_size);
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) content.append(buffer, n);
  bool failed = std::ferror(f) != 0;
  int error = errno;
  if (f != stdin) std::fclose(f);
  if (failed) user_error("cannot read {}: {}", source_name(path), std::strerror(error));
  return content;
}

namespace {

namespace fs = std::filesystem;

// Writes all of `content` to `fd`; false with errno set when a write fails.
bool write_all(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Writes a file's content to `fd`: false with errno set when a write fails.
using WriteContent = std::function<bool(int fd)>;

// A device, FIFO or socket is written as it is: renaming a file over it would destroy it.
void write_through(const std::string& path, const WriteContent& write) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) user_error("cannot write {}: {}", path, std::strerror(errno));
  bool ok = write(fd);
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) user_error("cannot write {}: {}", path, std::strerror(error));
}

// The file a chain of symbolic links ends at (which need not exist), so that replacing it
// keeps the links.
fs::path follow_links(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) user_error("cannot write {}: {}", path, ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  user_error("cannot write {}: {}", path, std::strerror(ELOOP));
}

// Fault injection for the command-line tests: with YTAPE_TEST_STALL_WRITE=SECONDS a write
// stops halfway for that long, so that a test can signal ytape while a temporary file is
// half-written.
void stall_for_tests() {
  if (const char* s = std::getenv("YTAPE_TEST_STALL_WRITE")) ::sleep(std::atoi(s));
}

// Writes the pieces one after another in two halves by bytes, with the fault-injection
// hook between them; false with errno set when a write fails.
bool write_halves(int fd, std::span<const std::string_view> pieces) {
  size_t total = 0;
  for (std::string_view piece : pieces) total += piece.size();
  size_t half = total / 2, done = 0;
  bool stalled = false;
  for (std::string_view piece : pieces) {
    if (!stalled && done + piece.size() >= half) {
      size_t first = half - done;
      if (!write_all(fd, piece.substr(0, first))) return false;
      stall_for_tests();
      stalled = true;
      done += first;
      piece.remove_prefix(first);
    }
    if (!write_all(fd, piece)) return false;
    done += piece.size();
  }
  if (!stalled) stall_for_tests();
  return true;
}

// write_file's way: `write` fills a temporary file beside `path` (or a device as it is),
// which is renamed over it when complete. The temporary file is removed when `write`
// fails or throws.
void write_atomically(const std::string& path, const WriteContent& write) {
  struct stat existing {};
  bool exists = ::stat(path.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) user_error("cannot write {}: it is a directory", path);
    return write_through(path, write);
  }
  fs::path target = follow_links(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";  // appended, not `"." + ...`, which GCC 12 warns of wrongly
  name += target.filename().string();
  name += ".XXXXXX";
  std::string tmp = (dir / name).string();
  // Registered before it exists: a signal from here on removes it (or finds nothing).
  set_pending_file(tmp.c_str());
  int fd = mkstemp(tmp.data());
  if (fd < 0) {
    set_pending_file(nullptr);
    user_error("cannot write {}: {}", path, std::strerror(errno));
  }
  // mkstemp creates the file private: give it the mode of the file it replaces, or the
  // usual mode of a new file.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, exists ? existing.st_mode & 07777 : 0666 & ~mask);
  bool ok = false;
  try {
    ok = write(fd);
  } catch (...) {
    ::close(fd);
    std::remove(tmp.c_str());
    set_pending_file(nullptr);
    throw;
  }
  int error = errno;
  if (ok && ::close(fd) != 0) {
    ok = false;
    error = errno;
  } else if (!ok) {
    ::close(fd);
  }
  if (ok && std::rename(tmp.c_str(), target.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) std::remove(tmp.c_str());
  set_pending_file(nullptr);
  if (!ok) user_error("cannot write {}: {}", path, std::strerror(error));
}

}  // namespace

void write_file(const std::string& path, std::string_view content) {
  write_file(path, std::span<const std::string_view>(&content, 1));
}

void write_file(const std::string& path, std::span<const std::string_view> pieces) {
  if (path.empty() || path == "-") {
    for (std::string_view piece : pieces) std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    return;
  }
  write_atomically(path, [&](int fd) { return write_halves(fd, pieces); });
}

void write_file(const std::string& path, const std::function<void(const PutText&)>& produce) {
  if (path.empty() || path == "-") {
    produce([](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
    std::fflush(stdout);
    return;
  }
  write_atomically(path, [&](int fd) {
    // The first piece is written here (a small tape's only one); the later ones by a
    // thread while the next are made.
    bool ok = true;
    int error = 0;
    std::optional<PieceWriter> later;
    produce([&](std::string_view piece) {
      if (!ok) return;
      if (later) return later->put(piece);
      ok = write_all(fd, piece);
      error = errno;
      stall_for_tests();  // after the first piece: the file is begun
      if (ok) later.emplace(fd);
    });
    if (ok && later) {
      ok = later->finish();
      error = errno;
    }
    errno = error;  // that of the failed write: making the later pieces may have changed it
    return ok;
  });
}

void write_tape_file(const std::string& path, const Tape& t) {
  write_file(path, [&](const PutText& put) { write_tape_json(t, put); });
}

void write_safetensors_file(const std::string& path, const TensorMap& tensors,
                            std::optional<FileDType> as) {
  SafetensorsPieces file = safetensors_pieces(tensors, {}, as);
  std::vector<std::string_view> pieces;
  for (std::span<const uint8_t> piece : file.pieces) {
    pieces.emplace_back(reinterpret_cast<const char*>(piece.data()), piece.size());
  }
  write_file(path, pieces);
}

namespace {

// What identifies the file `path` names: its device and inode where it exists, else its
// absolute, normalized path. Nothing for what cannot be overwritten by mistake.
std::optional<std::string> file_identity(const std::string& path) {
  if (path.empty() || path == "-") return std::nullopt;
  struct stat s {};
  if (::stat(path.c_str(), &s) == 0) {
    if (!S_ISREG(s.st_mode)) return std::nullopt;
    return fmt::format("{}:{}", s.st_dev, s.st_ino);
  }
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? std::optional(path) : std::optional(p.string());
}

}  // namespace

void refuse_overwrites(const std::vector<NamedFile>& inputs,
                       const std::vector<NamedFile>& outputs) {
  std::vector<std::pair<const NamedFile*, std::string>> seen;
  for (const NamedFile& f : inputs) {
    if (auto id = file_identity(f.path)) seen.emplace_back(&f, *id);
  }
  size_t num_inputs = seen.size();
  for (const NamedFile& out : outputs) {
    std::optional<std::string> id = file_identity(out.path);
    if (!id) continue;
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i].second != *id) continue;
      const NamedFile& other = *seen[i].first;
      user_error("{} {} is the file that {} {}: writing it would destroy {}; give another file",
                 out.option, source_name(out.path), other.option,
                 i < num_inputs ? "reads" : "writes", i < num_inputs ? "an input" : "an output");
    }
    seen.emplace_back(&out, *id);
  }
}

std::vector<std::string> file_dtype_names() {
  std::vector<std::string> names;
  for (FileDType d : kAllFileDTypes) names.emplace_back(file_dtype_name(d));
  return names;
}

void write_outputs(const std::string& path, const TensorMap& tensors, const std::string& dtype) {
  std::optional<FileDType> as;
  if (!dtype.empty()) as = parse_file_dtype(dtype);
  std::vector<uint8_t> bytes;
  if (path.ends_with(".npz")) {
    bytes = write_npz(tensors, as);
  } else if (path.ends_with(".npy")) {
    if (tensors.size() != 1) {
      user_error("-o {} holds one array, but there are {} outputs: write .npz or .safetensors",
                 source_name(path), tensors.size());
    }
    bytes = write_npy(tensors[0].second, as, fmt::format("output '{}'", tensors[0].first));
  } else {
    return write_safetensors_file(path, tensors, as);
  }
  write_file(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

std::vector<NamedFile> named_files(std::string_view option, const std::vector<std::string>& paths) {
  std::vector<NamedFile> files;
  for (const std::string& path : paths) files.push_back({option, path});
  return files;
}

namespace {

// A regular file's text in pages of its own, which the reader gives back as it goes: read
// into a string, a tape's text stays for the whole read, which it would make about a
// quarter of the peak memory of `ytape check`. Null when the file is not regular or
// changes size as it is read (the caller then reads it as a string).
class ReleasedText {
 public:
  explicit ReleasedText(const std::string& path) {
    int fd = path == "-" ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    }
    size_t done = 0;
    while (base_ != nullptr && done < size_) {
      ssize_t n = ::read(fd, base_ + done, size_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    char extra = 0;
    if (base_ != nullptr && (done != size_ || ::read(fd, &extra, 1) != 0)) unmap();
    ::close(fd);
  }
  ~ReleasedText() { unmap(); }
  ReleasedText(const ReleasedText&) = delete;
  ReleasedText& operator=(const ReleasedText&) = delete;

  explicit operator bool() const { return base_ != nullptr; }
  std::string_view text() const { return {base_, size_}; }
  // Gives back the whole pages of the first n bytes.
  void release(size_t n) {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t end = n / page * page;
    if (end <= released_) return;
    ::madvise(base_ + released_, end - released_, MADV_DONTNEED);
    released_ = end;
  }

 private:
  void unmap() {
    if (base_ != nullptr) ::munmap(base_, size_);
    base_ = nullptr;
  }
  char* base_ = nullptr;
  size_t size_ = 0, released_ = 0;
};

}  // namespace

Tape load_tape(const std::string& path) {
  if (path.ends_with(".jl")) {
    user_error(
        "{} is a program, and this command reads a tape: trace it first, as `ytape trace "
        "{} -f FUNCTION ARGS... -o tape.json` (docs/language.md)",
        source_name(path), source_name(path));
  }
  ReleasedText file(path);
  if (!file) return read_tape_json(read_file(path), source_name(path));
  return read_tape_json(file.text(), source_name(path), [&](size_t n) { file.release(n); });
}

}  // namespace ytape::cli
