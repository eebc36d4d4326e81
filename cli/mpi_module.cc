// libytape_mpi.so: cli/mpi_module.h's functions over Open MPI's C API. It depends on
// nothing of ytape's, so that it links libmpi alone and loads into any ytape binary.
#include "cli/mpi_module.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace {

int started(int* started, int* finalized) {
  int code = MPI_Initialized(started);
  return code != MPI_SUCCESS ? code : MPI_Finalized(finalized);
}

int start(int* level) {
  int initialized = 0, provided = MPI_THREAD_SINGLE, code = MPI_Initialized(&initialized);
  if (code == MPI_SUCCESS && !initialized) {
    code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (code == MPI_SUCCESS) code = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  } else if (code == MPI_SUCCESS) {
    code = MPI_Query_thread(&provided);
  }
  *level = provided == MPI_THREAD_MULTIPLE ? 2 : provided == MPI_THREAD_SERIALIZED ? 1 : 0;
  return code;
}

int rank(int* r) {
  return MPI_Comm_rank(MPI_COMM_WORLD, r);
}
int size(int* s) {
  return MPI_Comm_size(MPI_COMM_WORLD, s);
}

int exchange(const void* send, int send_bytes, int to, void* recv, int recv_bytes, int from,
             int tag, void** pair) {
  auto* requests = new MPI_Request[2]{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  *pair = requests;
  int code = MPI_Irecv(recv, recv_bytes, MPI_BYTE, from, tag, MPI_COMM_WORLD, &requests[0]);
  if (code != MPI_SUCCESS) return code;
  return MPI_Isend(send, send_bytes, MPI_BYTE, to, tag, MPI_COMM_WORLD, &requests[1]);
}

int test(void* pair, int done[2]) {
  auto* requests = static_cast<MPI_Request*>(pair);
  int code = MPI_Test(&requests[0], &done[0], MPI_STATUS_IGNORE);
  return code != MPI_SUCCESS ? code : MPI_Test(&requests[1], &done[1], MPI_STATUS_IGNORE);
}

void release(void* pair) {
  delete[] static_cast<MPI_Request*>(pair);
}

void error_string(int code, char* text, int capacity) {
  char full[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, full, &length) != MPI_SUCCESS) length = 0;
  length = std::min(length, capacity - 1);
  std::memcpy(text, full, static_cast<size_t>(length));
  text[length] = '\0';
}

int finalize() {
  return MPI_Finalize();
}

void abort_world(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

constexpr YtapeMpi kModule = {started, start,   rank,         size,     exchange,
                              test,    release, error_string, finalize, abort_world};

}  // namespace

extern "C" __attribute__((visibility("default"))) const YtapeMpi* ytape_mpi_module() {
  return &kModule;
}
