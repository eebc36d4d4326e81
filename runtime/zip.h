// Zip archives as numpy's .npz files use them: members stored or deflated, read with every
// field checked against the others (the archive may be hostile), and written stored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ytape {

/// One member of an archive, as its central directory and local header give it.
struct ZipMember {
  std::string name;
  uint32_t method = 0, crc = 0, compressed = 0, size = 0, offset = 0;
  uint64_t data_begin = 0;  ///< where its (compressed) data begins in the archive
};

/// The members of the archive `bytes`, in its central directory's order, each checked: the
/// end record found, the directory and each local header agreeing, data inside the archive
/// and disjoint, names unique, methods stored (0) or deflated (8). Throws UserError naming
/// `source` for anything else: not a zip archive, zip64 (over 4 GiB or 65535 members),
/// split across files, encrypted, other methods, sizes deflate cannot give.
std::vector<ZipMember> zip_members(std::span<const uint8_t> bytes, std::string_view source);

/// Member `m` of `archive` (from zip_members), inflated into `buffer` if deflated (to
/// exactly its declared size), its CRC-32 checked. UserError naming `what` otherwise.
std::span<const uint8_t> zip_content(std::span<const uint8_t> archive, const ZipMember& m,
                                     std::vector<uint8_t>& buffer, std::string_view what);

/// Writes an archive of stored members, as numpy.savez does: the same fixed date (1980),
/// so the bytes depend on the members alone.
class ZipWriter {
 public:
  /// Appends member `name` holding `data`. UserError naming `what` where the archive would
  /// need zip64.
  void add(const std::string& name, std::span<const uint8_t> data, std::string_view what);
  /// The archive's bytes; the writer is spent. UserError naming `what` (its members) where
  /// the archive would need zip64.
  std::vector<uint8_t> finish(std::string_view what);

 private:
  std::vector<uint8_t> out_, directory_;
  uint32_t count_ = 0;
};

/// Whether `name` is valid UTF-8, as a zip name flagged so must be.
bool is_utf8(const std::string& name);

}  // namespace ytape
