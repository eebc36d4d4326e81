// Open MPI for distributed runs (docs/distributed.md): the world's ranks as a Transport.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/comm.h"

namespace ytape::cli {

/// Whether mpirun started this process (its environment names the job's size).
bool launched_by_mpirun();

/// Starts MPI (once; it ends when the process exits normally) and returns a transport over
/// every rank of the job. A rank waits at most `timeout` for a message, then throws
/// UserError naming the rank it waited for. Throws UserError when MPI cannot start.
std::unique_ptr<Transport> mpi_world(std::chrono::milliseconds timeout);

/// The threads each rank takes by default: this machine's cores shared by the job's ranks
/// on it (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE), at least 1.
int threads_per_rank();

/// The options --distributed (auto, mpi, off) and --comm-timeout (seconds) of train and run.
void add_distributed_options(CLI::App& sub, std::string& mode, double& timeout_seconds);

/// The group of a distributed run as --distributed `mode` asks (auto: when mpirun started
/// this process), or null for one process.
std::unique_ptr<Communicator> start_group(const std::string& mode, double timeout_seconds);

/// What the group's collectives took over `runs` runs of a tape, per `what` ("step"):
/// bytes sent, time, the time waited for and the share that overlapped the work; a line.
std::string communication_line(const Communicator& c, int64_t runs, std::string_view what);

/// "rank R: " once MPI has started in this process, for its messages; else "".
std::string mpi_rank_prefix();

/// Ends every rank of the job at once (MPI_Abort), with exit status `code`: what a rank
/// does after an error, so that the others do not wait for it.
[[noreturn]] void mpi_abort(int code);

}  // namespace ytape::cli
