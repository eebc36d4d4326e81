// The two kinds of error ytape raises. The libraries throw; only cli/ prints and exits.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ytape {

/// Bad input from the user: a malformed tape, a shape mismatch, a missing input.
/// The message names the file, line or op and, where it can, says how to fix it.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

/// A broken invariant inside ytape: a bug, never the user's fault.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

/// Throws a UserError with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void user_error(fmt::format_string<Args...> format, Args&&... args) {
  throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

/// Throws an InternalError with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void internal_error(fmt::format_string<Args...> format, Args&&... args) {
  throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ytape
