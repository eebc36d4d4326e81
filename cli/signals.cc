#include "cli/signals.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace ytape::cli {

namespace {

// A lock-free atomic pointer is safe to read in a signal handler.
std::atomic<const char*> pending{nullptr};
static_assert(std::atomic<const char*>::is_always_lock_free);
bool terminal = false;  // read in the handler, set once before it is installed
std::atomic<bool> graceful{false};
std::atomic<int> stop_requested{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

const char* message(int sig) {
  switch (sig) {
    case SIGINT:
      return "ytape: interrupted (SIGINT); no file was left half-written\n";
    case SIGTERM:
      return "ytape: terminated (SIGTERM); no file was left half-written\n";
    default:
      return "ytape: hung up (SIGHUP); no file was left half-written\n";
  }
}

void say(const char* text) {
  if (::write(STDERR_FILENO, text, std::strlen(text)) < 0) return;  // nothing more to do
}

const char* stopping(int sig) {
  return sig == SIGINT ? "ytape: SIGINT: stopping after this step and writing a checkpoint; "
                         "again to stop at once\n"
                       : "ytape: SIGTERM: stopping after this step and writing a checkpoint; "
                         "again to stop at once\n";
}

// Only async-signal-safe calls: unlink, write, strlen, signal, raise.
void on_signal(int sig) {
  if (graceful.load() && sig != SIGHUP && stop_requested.load() == 0) {
    stop_requested.store(sig);
    if (terminal) say("\n");
    say(stopping(sig));
    return;
  }
  if (const char* path = pending.load()) ::unlink(path);
  // On a terminal the line starts fresh, after a progress line or the echoed ^C.
  if (terminal) say("\n");
  say(message(sig));
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_signal_handlers() {
  terminal = ::isatty(STDERR_FILENO) == 1;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal ignored by whoever started ytape (nohup, a background job) stays ignored.
    if (std::signal(sig, on_signal) == SIG_IGN) std::signal(sig, SIG_IGN);
  }
  std::signal(SIGXFSZ, SIG_IGN);
}

void set_pending_file(const char* path) {
  pending.store(path);
}

void set_graceful_stop(bool on) {
  graceful.store(on);
}

int stop_signal() {
  return stop_requested.load();
}

}  // namespace ytape::cli
