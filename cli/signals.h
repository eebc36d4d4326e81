// How ytape ends when a signal stops it, so that no file is left half-written.
#pragma once

namespace ytape::cli {

/// Installs what main() relies on. SIGINT, SIGTERM and SIGHUP remove the temporary file of
/// a write in progress (see set_pending_file), print one line ("ytape: interrupted
/// (SIGINT); no file was left half-written") and end ytape by the same signal, so that
/// the exit status is 128 + its number as a shell expects. SIGXFSZ is ignored: a write
/// beyond `ulimit -f` then fails with EFBIG and a message instead of killing ytape.
void install_signal_handlers();

/// The temporary file being written, which a signal removes; nullptr when there is none.
/// The string must stay alive until it is cleared.
void set_pending_file(const char* path);

}  // namespace ytape::cli
