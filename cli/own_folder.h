// The folder of the running ytape binary, where it finds its companions: ytape-onnx beside
// it and the MPI module under ../<libdir>/ytape/ (cli/CMakeLists.txt).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "tape/error.h"

namespace ytape::cli {

/// The folder of /proc/self/exe. Throws UserError if it cannot be read.
inline std::filesystem::path own_folder() {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) user_error("cannot find the folder of ytape's binary (/proc/self/exe)");
  return std::filesystem::path(std::string(exe, static_cast<size_t>(n))).parent_path();
}

}  // namespace ytape::cli
