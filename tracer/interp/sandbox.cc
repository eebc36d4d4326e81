#include "tracer/interp/sandbox.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "tape/error.h"

namespace ytape::tracer {

namespace fs = std::filesystem;

namespace {

bool within(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

// Absolute path `p` as a message shows it: relative to the working directory when it lies
// under it, as the command line would name it, else absolute.
std::string shown(const fs::path& p) {
  std::error_code ec;
  fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  if (ec || !within(p.string(), cwd.string())) return p.string();
  fs::path relative = p.lexically_relative(cwd);
  return relative.empty() ? "." : relative.string();
}

}  // namespace

std::string resolved_path(const std::string& path) {
  // weakly_canonical: symlinks and `..` of the existing part resolved as the system
  // resolves them when it opens the path, the rest lexically.
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) return {};
  fs::path p = fs::weakly_canonical(absolute, ec);
  return ec ? std::string() : p.string();
}

void ReadSandbox::set_entry(const std::string& path) {
  if (entry_set_) return;
  entry_set_ = true;
  std::error_code ec;
  fs::path folder = fs::absolute(path, ec).parent_path();
  fs::path canonical = fs::canonical(folder, ec);
  // A folder that cannot be resolved allows nothing; its program cannot be read either.
  if (!ec) entry_ = canonical.string();
}

void ReadSandbox::allow(const std::string& path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(fs::absolute(path, ec), ec);
  if (ec) user_error("--allow-read {}: {}", path, ec.message());
  allowed_.push_back(canonical.string());
}

bool ReadSandbox::allows(const std::string& path) const {
  // The system reads a path up to its first NUL: what it opened would not be what was
  // checked.
  if (path.find('\0') != std::string::npos) return false;
  if (all_) return true;
  std::string p = resolved_path(path);
  if (p.empty()) return false;
  if (!entry_.empty() && within(p, entry_)) return true;
  for (const std::string& root : allowed_) {
    if (within(p, root)) return true;
  }
  return false;
}

void ReadSandbox::check(const std::string& path, std::string_view what, bool folder) const {
  if (path.find('\0') != std::string::npos) user_error("{}: a path holds no NUL character", what);
  if (allows(path)) return;
  // The suggestion is the folder the path leads to, symlinks followed: the one to allow.
  std::error_code ec;
  fs::path lexical = fs::absolute(path, ec).lexically_normal();
  if (!lexical.has_filename() && lexical != lexical.root_path()) lexical = lexical.parent_path();
  std::string leads = resolved_path(path);
  fs::path target = leads.empty() ? lexical : fs::path(leads);
  fs::path suggestion = folder || target == target.root_path() ? target : target.parent_path();
  std::string where;
  if (!entry_.empty()) {
    where = fmt::format("the program's folder {}", shown(entry_));
    if (!allowed_.empty()) where += " and the folders allowed with --allow-read";
  } else if (!allowed_.empty()) {
    where = "the folders allowed with --allow-read";
  } else {
    where = "every folder the program may read (none: no program file was run)";
  }
  std::string via = target == lexical ? "" : fmt::format(" (it leads to {})", shown(target));
  user_error("{}{} is outside {}; allow it with --allow-read {}", what, via, where,
             shown(suggestion));
}

}  // namespace ytape::tracer
