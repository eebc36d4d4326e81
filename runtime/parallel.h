// Threads: one setting governs ytape's own loops, OpenBLAS and oneDNN. ytape's loops run on
// OpenMP's threads, the ones oneDNN uses: a second pool would wake its threads while
// OpenMP's still spin after a convolution, and on few cores the two would fight.
#pragma once

#include <cstdint>
#include <functional>

namespace ytape {

/// Sets the number of threads for ytape's loops and for OpenBLAS (n >= 1); oneDNN's
/// kernels take the same number (runtime/kernels/onednn_conv.cc).
void set_num_threads(int n);
/// The current setting (default: default_num_threads()).
int num_threads();
/// The machine's processors, at most 8: the default setting, and the number of parts into
/// which the kernels that split a sum between threads split it, whatever the setting, so
/// that their results do not depend on it.
int default_num_threads();
/// The cores this process may run on (its CPU affinity), at least 1.
int usable_cores();
/// How many threads of other processes are running on the machine now (the least of
/// `samples` readings 2 ms apart of the kernel's count of runnable tasks, /proc/stat's
/// procs_running, less this process's running threads; 0 where that cannot be read). A
/// busy core makes a team of threads wait for the one that shares it at every step.
int other_running_threads(int samples = 3);
/// The cores that look free now: usable_cores() less other_running_threads(samples), which
/// may be 0 or less on a busy machine.
int free_cores(int samples = 3);
/// Starts OpenMP's threads for the current setting, if they are not running yet. OpenMP
/// creates them at its first parallel loop and ends the process (exit 1, its own message)
/// when it cannot: started before a run allocates its buffers, a run under a memory limit
/// (ulimit -v) fails there instead, with ytape's error.
void start_threads();

/// Ends OpenBLAS's threads until its next call that needs them, which starts them again.
/// OpenBLAS starts them when it loads and when given a thread count (set_num_threads, and
/// the first use of the setting, which this makes), and each then spins for about 2^28
/// cycles (0.1 s) waiting for work, taking a core from OpenMP's threads: the thread that
/// shares it makes each of their loops wait (100 ms more for the 58 loops of ResNet-18's
/// example weights). Does nothing where the BLAS has no such threads, nor under a limit on
/// the address space or the data segment (ulimit -v, -d).
void park_blas_threads();

/// Runs body(begin, end) over [0, n) split into at most num_threads() contiguous chunks;
/// runs inline when n < grain or one thread is set. Chunks are deterministic for a given
/// n and thread count, so results do not depend on timing.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

}  // namespace ytape
