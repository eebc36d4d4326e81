#include "runtime/zip.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "tape/error.h"
#include "tape/strings.h"

namespace ytape {

namespace {

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalSize = 30, kCentralSize = 46, kEndSize = 22;
constexpr uint32_t kStored = 0, kDeflated = 8;
// The most a deflate stream expands (each 258-byte match costs at least 2 bits), with slack.
constexpr uint64_t kMaxDeflateRatio = 1033;

// Little-endian integers at `p`; the caller has checked the bounds.
uint32_t le16(const uint8_t* p) {
  return p[0] | p[1] << 8;
}
uint32_t le32(const uint8_t* p) {
  return le16(p) | static_cast<uint32_t>(le16(p + 2)) << 16;
}
void put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

[[noreturn]] void zip64_error(std::string_view source) {
  user_error("{}: the archive is zip64 (over 4 GiB or 65535 members), which ytape does not read",
             source);
}

// The end of central directory record: where the directory starts, its size and entries.
struct EndRecord {
  uint32_t begin = 0, size = 0, entries = 0;
};

EndRecord end_record(std::span<const uint8_t> bytes, std::string_view source) {
  // The record is the last thing in the file but for its comment, of at most 65535 bytes.
  size_t pos = bytes.size() < kEndSize ? 0 : bytes.size() - kEndSize + 1;
  size_t lowest = bytes.size() < kEndSize + 0xFFFF ? 0 : bytes.size() - kEndSize - 0xFFFF;
  bool found = false;
  while (!found && pos-- > lowest) {
    const uint8_t* p = bytes.data() + pos;
    found = le32(p) == kEndSignature && pos + kEndSize + le16(p + 20) == bytes.size();
  }
  if (!found) {
    user_error(
        "{}: not an .npz file: it is not a zip archive (it has no end of central "
        "directory record)",
        source);
  }
  const uint8_t* p = bytes.data() + pos;
  EndRecord end{le32(p + 16), le32(p + 12), le16(p + 10)};
  if ((pos >= 20 && le32(p - 20) == kZip64LocatorSignature) || end.entries == 0xFFFF ||
      end.size == 0xFFFFFFFF || end.begin == 0xFFFFFFFF) {
    zip64_error(source);
  }
  if (le16(p + 4) != 0 || le16(p + 6) != 0 || le16(p + 8) != end.entries) {
    user_error("{}: the zip archive is split across several files, which ytape does not read",
               source);
  }
  if (uint64_t{end.begin} + end.size != pos) {
    user_error(
        "{}: the zip central directory ({} bytes at offset {}) does not end where its end "
        "record begins (offset {})",
        source, end.size, end.begin, pos);
  }
  return end;
}

// The central directory entry at `pos`, which it moves past. `end` is the directory's end.
ZipMember central_entry(std::span<const uint8_t> bytes, size_t& pos, size_t end,
                        std::string_view source) {
  if (end - pos < kCentralSize || le32(bytes.data() + pos) != kCentralSignature) {
    user_error("{}: the zip central directory is malformed at offset {}", source, pos);
  }
  const uint8_t* p = bytes.data() + pos;
  size_t name_size = le16(p + 28), tail = name_size + le16(p + 30) + le16(p + 32);
  if (end - pos - kCentralSize < tail) {
    user_error("{}: a zip central directory entry runs past the directory's end", source);
  }
  ZipMember m{std::string(reinterpret_cast<const char*>(p + kCentralSize), name_size),
              le16(p + 10),
              le32(p + 16),
              le32(p + 20),
              le32(p + 24),
              le32(p + 42)};
  pos += kCentralSize + tail;
  if (m.compressed == 0xFFFFFFFF || m.size == 0xFFFFFFFF || m.offset == 0xFFFFFFFF) {
    zip64_error(source);
  }
  uint32_t flags = le16(p + 8);
  if ((flags & 0x41) != 0) {
    user_error("{}: member '{}' is encrypted, which ytape does not read", source,
               shown_name(m.name));
  }
  if (m.method != kStored && m.method != kDeflated) {
    user_error(
        "{}: member '{}' is compressed with zip method {}; ytape reads stored (0) and "
        "deflated (8) members, as numpy.savez and numpy.savez_compressed write",
        source, shown_name(m.name), m.method);
  }
  if (le16(p + 34) != 0) {
    user_error("{}: the zip archive is split across several files, which ytape does not read",
               source);
  }
  return m;
}

// Finds where `m`'s data begins, checking its local header against the directory and the
// data's bounds; `end` is where the central directory begins.
void locate_data(std::span<const uint8_t> bytes, ZipMember& m, size_t end,
                 std::string_view source) {
  if (end < kLocalSize || m.offset > end - kLocalSize ||
      le32(bytes.data() + m.offset) != kLocalSignature) {
    user_error("{}: member '{}': no zip local header at offset {}", source, shown_name(m.name),
               m.offset);
  }
  const uint8_t* p = bytes.data() + m.offset;
  uint64_t name_end = uint64_t{m.offset} + kLocalSize + le16(p + 26);
  m.data_begin = name_end + le16(p + 28);
  if (m.data_begin > end || m.compressed > end - m.data_begin) {
    user_error("{}: member '{}': its data runs past the start of the zip central directory", source,
               shown_name(m.name));
  }
  std::string_view local_name(reinterpret_cast<const char*>(p + kLocalSize), le16(p + 26));
  bool described_after = (le16(p + 6) & 0x8) != 0;  // CRC and sizes follow the data
  if (local_name != m.name || le16(p + 8) != m.method ||
      (!described_after &&
       (le32(p + 14) != m.crc || le32(p + 18) != m.compressed || le32(p + 22) != m.size))) {
    user_error("{}: member '{}': its zip local header disagrees with the central directory", source,
               shown_name(m.name));
  }
  if (m.method == kStored && m.compressed != m.size) {
    user_error("{}: member '{}' is stored, but its sizes differ ({} and {} bytes)", source,
               shown_name(m.name), m.compressed, m.size);
  }
  if (m.size > m.compressed * kMaxDeflateRatio + 64) {
    user_error("{}: member '{}' declares {} bytes from {} compressed, more than deflate gives",
               source, shown_name(m.name), m.size, m.compressed);
  }
}

// The raw deflate stream `in` inflated, which must give exactly `size` bytes.
std::vector<uint8_t> inflated(std::span<const uint8_t> in, uint32_t size, std::string_view what) {
  // One byte more than declared catches a stream that runs longer.
  std::vector<uint8_t> out(uint64_t{size} + 1);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) user_error("{}: out of memory to inflate", what);
  z.next_in = const_cast<Bytef*>(in.data());  // zlib's API predates const
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  std::string message = z.msg != nullptr ? z.msg : "";
  uint64_t produced = z.total_out;
  uInt unread = z.avail_in;
  inflateEnd(&z);
  if (rc == Z_STREAM_END && produced == size && unread == 0) {
    out.pop_back();
    return out;
  }
  if (rc == Z_DATA_ERROR) user_error("{}: the deflated data is corrupt ({})", what, message);
  if (produced > size) {
    user_error("{}: inflates to more than its declared {} bytes", what, size);
  }
  if (rc != Z_STREAM_END) {
    user_error("{}: the deflated data is cut short, after {} of its declared {} bytes", what,
               produced, size);
  }
  if (produced < size) {
    user_error("{}: inflates to {} bytes, not its declared {}", what, produced, size);
  }
  user_error("{}: {} bytes follow the end of the deflated data", what, unread);
}

// Appends the stored member `member` holding `data` to the archive `out`, and its entry to
// the central `directory`. Sizes and offsets have been checked to fit 32 bits.
void append_member(const std::string& member, std::span<const uint8_t> data,
                   std::vector<uint8_t>& out, std::vector<uint8_t>& directory) {
  auto size = static_cast<uint32_t>(data.size()), offset = static_cast<uint32_t>(out.size());
  auto crc = static_cast<uint32_t>(crc32(0, data.data(), size));
  bool ascii = std::all_of(member.begin(), member.end(), [](char c) { return c >= 0; });
  uint32_t flags = ascii ? 0 : 0x800;  // the name is UTF-8
  // Version 2.0 needed; stored; 00:00 on 1 January 1980, the earliest DOS date, as
  // numpy.savez writes; then the CRC and both sizes, the name's length, no extra field.
  auto common = [&](std::vector<uint8_t>& to) {
    for (uint32_t v : {20u, flags, kStored, 0u, 0x21u}) put16(to, v);
    for (uint32_t v : {crc, size, size}) put32(to, v);
    put16(to, static_cast<uint32_t>(member.size()));
    put16(to, 0);
  };
  put32(out, kLocalSignature);
  common(out);
  out.insert(out.end(), member.begin(), member.end());
  out.insert(out.end(), data.begin(), data.end());
  put32(directory, kCentralSignature);
  put16(directory, 3 << 8 | 20);  // made by Unix, zip 2.0, so that permissions apply
  common(directory);
  for (uint32_t v : {0u, 0u, 0u}) put16(directory, v);  // comment, disk, internal attributes
  put32(directory, 0100644u << 16);                     // a regular file, rw-r--r--
  put32(directory, offset);
  directory.insert(directory.end(), member.begin(), member.end());
}

}  // namespace

std::vector<ZipMember> zip_members(std::span<const uint8_t> bytes, std::string_view source) {
  EndRecord end = end_record(bytes, source);
  std::vector<ZipMember> all;
  size_t pos = end.begin, dir_end = uint64_t{end.begin} + end.size;
  std::set<std::string, std::less<>> names;
  for (uint32_t i = 0; i < end.entries; ++i) {
    all.push_back(central_entry(bytes, pos, dir_end, source));
    if (!names.insert(all.back().name).second) {
      user_error("{}: the archive has two members named '{}'", source, shown_name(all.back().name));
    }
    locate_data(bytes, all.back(), end.begin, source);
  }
  if (pos != dir_end) {
    user_error("{}: the zip central directory holds more than its {} entries", source, end.entries);
  }
  std::vector<const ZipMember*> by_offset;
  for (const ZipMember& m : all) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ZipMember* a, const ZipMember* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const ZipMember &a = *by_offset[i - 1], &b = *by_offset[i];
    if (a.data_begin + a.compressed > b.offset) {
      user_error("{}: members '{}' and '{}' overlap", source, shown_name(a.name),
                 shown_name(b.name));
    }
  }
  return all;
}

std::span<const uint8_t> zip_content(std::span<const uint8_t> archive, const ZipMember& m,
                                     std::vector<uint8_t>& buffer, std::string_view what) {
  std::span<const uint8_t> data = archive.subspan(m.data_begin, m.compressed);
  if (m.method == kDeflated) {
    buffer = inflated(data, m.size, what);
    data = buffer;
  }
  if (crc32(0, data.data(), static_cast<uInt>(data.size())) != m.crc) {
    user_error("{}: the CRC-32 of member '{}' does not match its data", what, shown_name(m.name));
  }
  return data;
}

void ZipWriter::add(const std::string& name, std::span<const uint8_t> data, std::string_view what) {
  if (data.size() >= 0xFFFFFFFF || out_.size() >= 0xFFFFFFFF || name.size() > 0xFFFF) {
    user_error("cannot write {} to a zip archive: it would need zip64, which ytape does not write",
               what);
  }
  append_member(name, data, out_, directory_);
  ++count_;
}

std::vector<uint8_t> ZipWriter::finish(std::string_view what) {
  if (count_ >= 0xFFFF || out_.size() >= 0xFFFFFFFF || directory_.size() >= 0xFFFFFFFF) {
    user_error("cannot write {} to a zip archive: it would need zip64, which ytape does not write",
               what);
  }
  auto begin = static_cast<uint32_t>(out_.size());
  out_.insert(out_.end(), directory_.begin(), directory_.end());
  put32(out_, kEndSignature);
  for (uint32_t v : {0u, 0u, count_, count_}) put16(out_, v);
  put32(out_, static_cast<uint32_t>(directory_.size()));
  put32(out_, begin);
  put16(out_, 0);  // no comment
  return std::move(out_);
}

bool is_utf8(const std::string& name) {
  try {
    (void)nlohmann::json(name).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace ytape
