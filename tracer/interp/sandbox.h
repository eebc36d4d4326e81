// Where a program may read: the folder tree of its entry program and the folders allowed
// beside it. Model programs are code people download and run, so include(), isfile(),
// isdir(), ispath() and cd() look nowhere else: no `../`, absolute path or symlink leads
// out, and what lies outside is neither read nor probed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ytape::tracer {

/// `path` (relative paths from the working directory) made absolute, with `..` and every
/// symlink of the part that exists resolved: what the system would open. "" when it
/// cannot be resolved.
std::string resolved_path(const std::string& path);

/// The folders whose trees a program may read and ask about. Until the entry program is
/// known (set_entry) and while no folder is allowed, nothing is.
class ReadSandbox {
 public:
  /// Confines reading to the folder of entry program `path` (relative paths from the
  /// working directory) and the folders allowed. Only the first call counts: an included
  /// file does not widen it.
  void set_entry(const std::string& path);
  /// Allows `path` (a folder, or one file) and everything under it. Throws UserError
  /// "--allow-read PATH: reason" when it does not exist.
  void allow(const std::string& path);
  /// Lifts the confinement: every path is allowed (`allow("/")` does the same).
  void allow_all() { all_ = true; }

  /// Whether `path` (relative paths from the working directory) lies in an allowed tree,
  /// once `..` and every symlink of the part that exists are resolved. A path with a NUL
  /// character is not allowed.
  bool allows(const std::string& path) const;
  /// Throws UserError unless allows(path): `WHAT is outside the program's folder DIR;
  /// allow it with --allow-read SUGGESTION`. `what` is the call as the program wrote it
  /// (`include("../x.jl")`); `folder` says whether the path names a folder, so that
  /// the suggestion is the path itself rather than the folder holding it.
  void check(const std::string& path, std::string_view what, bool folder) const;

 private:
  std::string entry_;                 // the entry's folder, canonical; "" until set
  std::vector<std::string> allowed_;  // canonical
  bool entry_set_ = false;
  bool all_ = false;
};

}  // namespace ytape::tracer
