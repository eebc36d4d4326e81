// The interface of the MPI module, libytape_mpi.so (cli/mpi_module.cc): the few MPI calls
// ytape makes, as C functions over Open MPI. ytape loads the module the first time a run is
// distributed (cli/mpi.cc), so that no other command pays for loading Open MPI's libraries
// (about a millisecond at each process's start).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/// The module's functions. Each returns an MPI error code (0 for success) unless it says.
struct YtapeMpi {
  /// Whether MPI_Init has run, and whether MPI_Finalize has.
  int (*started)(int* started, int* finalized);
  /// Starts MPI asking for MPI_THREAD_MULTIPLE (errors returned, not fatal), if it has not
  /// started; `*level` is then 0 (MPI_THREAD_SINGLE or FUNNELED), 1 (SERIALIZED) or 2
  /// (MULTIPLE).
  int (*start)(int* level);
  int (*rank)(int* rank);
  int (*size)(int* size);
  /// Starts sending `send_bytes` to `to` and receiving `recv_bytes` from `from`, both with
  /// tag `tag`; `*pair` is what `test` and `release` take.
  int (*exchange)(const void* send, int send_bytes, int to, void* recv, int recv_bytes, int from,
                  int tag, void** pair);
  /// Sets done[0] (the receive) and done[1] (the send).
  int (*test)(void* pair, int done[2]);
  void (*release)(void* pair);
  /// MPI_Error_string of `code` into `text` (at least 256 bytes).
  void (*error_string)(int code, char* text, int capacity);
  int (*finalize)(void);
  /// MPI_Abort of the world with `code`; does not return.
  void (*abort)(int code);
};

/// The module's one exported symbol.
const struct YtapeMpi* ytape_mpi_module(void);

#ifdef __cplusplus
}
#endif
