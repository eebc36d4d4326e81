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

/// While on, the first SIGINT or SIGTERM does not end ytape: it prints one line
/// ("ytape: SIGINT: stopping after this step and writing a checkpoint; again to stop at
/// once") and is recorded for stop_signal(), so that `train` can finish its step and save
/// it. A second such signal ends ytape as described above.
void set_graceful_stop(bool on);

/// The signal that asked for a graceful stop (SIGINT or SIGTERM), or 0.
int stop_signal();

}  // namespace ytape::cli
