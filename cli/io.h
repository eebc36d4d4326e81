// File input and output for the subcommands.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/file_dtype.h"
#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape::cli {

/// The whole content of `path`, or of standard input when `path` is "-".
/// Throws UserError naming the file when it cannot be read.
std::string read_file(const std::string& path);

/// Writes `content` to `path` atomically: to a temporary file beside it, then renamed over
/// it, so a failed command never leaves a half-written file. A symbolic link is followed
/// and the file it names replaced, keeping the link; a replaced file keeps its mode. A
/// device, FIFO or socket is written directly (`-o /dev/null` stays a device). An empty
/// path or "-" writes to standard output.
void write_file(const std::string& path, std::string_view content);
/// write_file of the pieces' concatenation, each written from where it lies: nothing is
/// joined in memory.
void write_file(const std::string& path, std::span<const std::string_view> pieces);
/// Receives the pieces of a text in order.
using PutText = std::function<void(std::string_view)>;
/// write_file of the pieces `produce` puts, each written as it comes: a text of gigabytes
/// (a 10^7-op tape's JSON) is never held whole. A throw from `produce` leaves no file.
void write_file(const std::string& path, const std::function<void(const PutText&)>& produce);
/// write_file of the tape's canonical JSON (io/json.h), written as it is made.
void write_tape_file(const std::string& path, const Tape& t);
/// Writes `tensors` to `path` as a safetensors file (write_file), each as `as` where given
/// (write_safetensors), straight from the tensors' own memory.
void write_safetensors_file(const std::string& path, const TensorMap& tensors,
                            std::optional<FileDType> as = std::nullopt);

/// A file a command reads or writes, and the option or argument that names it.
struct NamedFile {
  std::string_view option;  ///< "--data", "-o", "TAPE"
  const std::string& path;  ///< empty when not given
};

/// Refuses to run (UserError) when an output names the same file as one of the inputs or
/// as another output: by the file's identity (device and inode, links followed), not its
/// spelling, so `-o ./d/../data.bin` is caught too. Outputs that do not exist yet are
/// compared by their absolute path. Paths not given, "-", devices and FIFOs are left out.
/// Call before any work, so that nothing is read, computed or written in vain.
void refuse_overwrites(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs);

/// Reads and validates a tape in JSON form from `path` ("-" for standard input).
Tape load_tape(const std::string& path);

/// The input values of `t` for a run: read from each of `paths` (load_inputs: safetensors,
/// numpy's .npy and .npz, or JSON), merged (an input in two files is a UserError naming
/// both), then, with `random`, completed with values made up from `seed`. Tensors `t` does
/// not read are an error, or with `skip_extra` left out.
TensorMap gather_inputs(const Tape& t, const std::vector<std::string>& paths, bool random,
                        uint64_t seed, bool skip_extra = false);

/// `option` naming each of `paths`, for refuse_overwrites.
std::vector<NamedFile> named_files(std::string_view option, const std::vector<std::string>& paths);

/// Writes `tensors` to `path` (write_file) by its name: numpy's .npz, .npy (one tensor
/// only), else safetensors; each as `dtype` (a file dtype's name, file_dtype.h) where not
/// empty.
void write_outputs(const std::string& path, const TensorMap& tensors, const std::string& dtype);
/// The names --dtype takes.
std::vector<std::string> file_dtype_names();

/// How a path is named in messages: "<stdin>" for "-".
std::string source_name(const std::string& path);

}  // namespace ytape::cli
