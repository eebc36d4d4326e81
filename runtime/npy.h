// numpy's array files: .npy (one array) and .npz (a zip archive of .npy members, as
// numpy.savez and numpy.savez_compressed write it).
//
// As with safetensors (runtime/tensor_file.h), a C-order numpy array is the row-major view
// of a ytape tensor: the same bytes under the reversed shape, nothing transposed, so
// np.load of a written f32[3,2] gives a (2, 3) array. A Fortran-order array is column-major
// already and keeps its shape. Element types are runtime/file_dtype.h's: reading widens
// them to a ytape dtype, and writing can store a tensor as any of them but BF16, which numpy
// lacks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/file_dtype.h"
#include "runtime/tensor.h"

namespace ytape {

/// Reads the bytes of a .npy file, of format version 1.0, 2.0 or 3.0, as one tensor named
/// `name`. The header must be a dict literal with exactly the keys 'descr', 'fortran_order'
/// and 'shape' (any order and spacing, trailing commas allowed). 'descr' is 'b1', 'i1' or
/// 'u1' after any byte-order mark ('|', '<', '>'), or '<' or '>' then 'i2', 'i4', 'i8',
/// 'u2', 'u4', 'u8', 'f2', 'f4' or 'f8': big-endian ('>') elements are byte-swapped.
/// Elements are widened as decode_elements does (integers to i64, a U64 above i64's range
/// refused). The data must be exactly the shape's elements, with nothing after them.
/// Throws UserError naming `source` (and the array, for its elements) for anything else: a
/// bad magic string, version or header, an unsupported descr (objects, strings, complex,
/// structured arrays; the message names it), a rank over kMaxFileRank, a bad shape or a
/// wrong data size. Never reads out of bounds; allocates only the tensor, whose bytes the
/// file holds.
TensorMap read_npy(std::span<const uint8_t> bytes, std::string_view source, std::string_view name);

/// Reads the bytes of a .npz file: every member named NAME.npy, read as read_npy does into
/// a tensor named NAME, in the order of the archive's central directory; other members
/// (whose names do not end in ".npy") are skipped, as numpy's loader gives them no array.
/// Members may be stored (numpy.savez) or deflated (numpy.savez_compressed); each must
/// inflate to exactly its declared size and match its CRC-32. Throws UserError naming
/// `source`, and the array where one is at fault ("a.npz: array 'x': ..."), for a file that
/// is not a zip archive, zip64 archives (over 4 GiB or 65535 members), split, encrypted or
/// otherwise compressed members, members that overlap or run out of bounds, two members of
/// one name, an empty NAME, and any fault read_npy reports. Allocates at most what the
/// declared sizes say, which bounded by the deflate ratio is about 1032 times the file.
TensorMap read_npz(std::span<const uint8_t> bytes, std::string_view source);

/// The bytes of a .npy file holding `t`: format 1.0, C order, the shape reversed, elements
/// as `as` (by default file_dtype_of(t.dtype())) converted by encode_elements; byte for byte
/// what np.save (numpy 1.24) writes for that array, its data at a multiple of 64 bytes.
/// Throws UserError naming `what` (such as "y.npy: tensor 'y'"; "a tensor" when empty) for
/// BF16, which numpy has no dtype for, for a rank over kMaxFileRank, and for elements `as`
/// does not hold.
std::vector<uint8_t> write_npy(const Tensor& t, std::optional<FileDType> as = std::nullopt,
                               std::string_view what = "");

/// The bytes of an uncompressed .npz file (as numpy.savez writes) holding `tensors` in
/// order, each as the member NAME.npy that write_npy(tensor, as) gives; np.load reads it
/// back under the same names. Throws UserError as write_npy does (naming the tensor), and
/// for two tensors of one name, a name that is empty, not UTF-8 or holds a NUL byte, and
/// an archive that would need zip64 (4 GiB or more, or 65535 members or more).
std::vector<uint8_t> write_npz(const TensorMap& tensors,
                               std::optional<FileDType> as = std::nullopt);

}  // namespace ytape
