#include "runtime/npy.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runtime/tensor_file.h"
#include "tape/strings.h"

namespace ytape {

namespace {

// Elements are copied as little-endian bytes by decode_elements and encode_elements.
static_assert(std::endian::native == std::endian::little);

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy itself refuses headers over 10000 bytes unless told otherwise; a megabyte is far
// beyond any real one and still cheap to scan.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;
// A real header nests a few levels at most (a nested structured descr); this bounds the
// parser's recursion.
constexpr int kMaxHeaderDepth = 64;

// A name or header as messages show it: hostile files may hold megabytes of anything.
std::string shown(std::string_view text) {
  constexpr size_t kMax = 100;
  if (text.size() <= kMax) return printable(text);
  return printable(text.substr(0, kMax)) + "...";
}

// ---- the header: a Python dict literal -------------------------------------------------

// A Python literal of the kinds a header holds.
struct PyValue {
  enum class Kind { string, boolean, integer, none, tuple, list };
  Kind kind = Kind::none;
  std::string text;  // a string's value, or an integer's digits
  int64_t integer = 0;
  bool overflow = false;  // an integer beyond int64_t
  bool boolean = false;
  std::vector<PyValue> items;
};

using PyDict = std::vector<std::pair<std::string, PyValue>>;

// A recursive-descent parser of the literals ast.literal_eval would take in a header:
// strings, True/False/None, integers (with Python 2's 'L' suffix, which old files hold),
// tuples and lists.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  PyDict dict();

 private:
  PyValue value(int depth);
  PyValue sequence(char close, PyValue::Kind kind, int depth);
  PyValue string();
  PyValue number();
  PyValue word();
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("'{}'", c));
  }
  [[noreturn]] void fail(std::string_view expected) const {
    user_error(
        "{}: the .npy header is not a Python dict literal as numpy writes one: expected {} "
        "at character {} of \"{}\"",
        what_, expected, pos_, shown(text_));
  }

  std::string_view text_, what_;
  size_t pos_ = 0;
};

PyDict HeaderParser::dict() {
  PyDict entries;
  expect('{');
  while (!eat('}')) {
    skip_space();
    if (pos_ == text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail("a string key or '}'");
    }
    std::string key = string().text;
    expect(':');
    entries.emplace_back(std::move(key), value(1));
    if (!eat(',')) {
      expect('}');
      break;
    }
  }
  skip_space();
  if (pos_ != text_.size()) fail("the end of the header after the dict");
  return entries;
}

PyValue HeaderParser::value(int depth) {
  if (depth > kMaxHeaderDepth) fail(fmt::format("literals nested at most {} deep", depth - 1));
  skip_space();
  char c = pos_ < text_.size() ? text_[pos_] : '\0';
  if (c == '\'' || c == '"') return string();
  if (c == '-' || (c >= '0' && c <= '9')) return number();
  if (c == '(') return ++pos_, sequence(')', PyValue::Kind::tuple, depth);
  if (c == '[') return ++pos_, sequence(']', PyValue::Kind::list, depth);
  return word();
}

// After the opening bracket. A parenthesized value without a comma is that value, as in
// Python: (5) is 5, (5,) a tuple.
PyValue HeaderParser::sequence(char close, PyValue::Kind kind, int depth) {
  PyValue seq;
  seq.kind = kind;
  bool comma = false;
  while (!eat(close)) {
    seq.items.push_back(value(depth + 1));
    comma = eat(',');
    if (!comma) {
      expect(close);
      break;
    }
  }
  if (kind == PyValue::Kind::tuple && seq.items.size() == 1 && !comma) return seq.items[0];
  return seq;
}

PyValue HeaderParser::string() {
  char quote = text_[pos_++];
  PyValue s;
  s.kind = PyValue::Kind::string;
  while (pos_ < text_.size() && text_[pos_] != quote) {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;  // only refusals see escapes
    s.text += text_[pos_++];
  }
  if (pos_ == text_.size()) fail(fmt::format("the closing {}", quote));
  ++pos_;
  return s;
}

PyValue HeaderParser::number() {
  PyValue n;
  n.kind = PyValue::Kind::integer;
  bool negative = text_[pos_] == '-';
  if (negative) n.text += text_[pos_++];
  size_t start = pos_;
  while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
    int digit = text_[pos_] - '0';
    n.overflow = n.overflow || n.integer > (std::numeric_limits<int64_t>::max() - digit) / 10;
    if (!n.overflow) n.integer = n.integer * 10 + digit;
    n.text += text_[pos_++];
  }
  if (pos_ == start) fail("a digit");
  if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
  if (negative) n.integer = -n.integer;
  return n;
}

PyValue HeaderParser::word() {
  for (std::string_view w : {"True", "False", "None"}) {
    if (text_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      PyValue v;
      if (w != "None") v.kind = PyValue::Kind::boolean;
      v.boolean = w == "True";
      return v;
    }
  }
  fail("a string, number, tuple, list, True, False or None");
}

// ---- element types ---------------------------------------------------------------------

// numpy's kind letter of a file dtype; BF16 has none.
char npy_kind(FileDType d) {
  switch (d) {
    case FileDType::boolean:
      return 'b';
    case FileDType::u8:
    case FileDType::u16:
    case FileDType::u32:
    case FileDType::u64:
      return 'u';
    case FileDType::i8:
    case FileDType::i16:
    case FileDType::i32:
    case FileDType::i64:
      return 'i';
    case FileDType::f16:
    case FileDType::f32:
    case FileDType::f64:
      return 'f';
    case FileDType::bf16:
      break;
  }
  return '\0';
}

// The descr numpy writes for `d`: '|' for single bytes, little-endian '<' otherwise.
std::string npy_descr(FileDType d) {
  int size = file_dtype_size(d);
  return fmt::format("{}{}{}", size == 1 ? '|' : '<', npy_kind(d), size);
}

struct Descr {
  FileDType dtype = FileDType::f32;
  bool big_endian = false;
};

[[noreturn]] void unsupported_descr(std::string_view descr, std::string_view what) {
  std::string_view hint =
      descr.find('O') != descr.npos ? " (an object array: pickled Python objects)"
      : descr.size() == 3 && descr.ends_with("V2")
          ? " (2 raw bytes, as numpy saves a bfloat16 array, a type it lacks: save it as "
            "float32, or use safetensors)"
          : "";
  user_error(
      "{}: dtype '{}' is not supported{}; ytape reads bool ('|b1'), integers ('i1' to "
      "'i8', 'u1' to 'u8') and floats ('f2', 'f4', 'f8')",
      what, shown(descr), hint);
}

Descr parse_descr(const PyValue& v, std::string_view what) {
  if (v.kind == PyValue::Kind::list) {
    user_error(
        "{}: the array is structured (its 'descr' is a list of fields), which ytape does "
        "not read: save each field as an array of its own",
        what);
  }
  if (v.kind != PyValue::Kind::string) user_error("{}: 'descr' is not a string", what);
  std::string_view s = v.text;
  if (s.size() < 3) unsupported_descr(s, what);
  char order = s[0];
  for (FileDType d : kAllFileDTypes) {
    int size = file_dtype_size(d);
    if (npy_kind(d) != s[1] || s.substr(2) != std::to_string(size)) continue;
    // A single byte has no order, whatever mark it carries.
    if (size == 1 && (order == '|' || order == '<' || order == '>')) return {d, false};
    if (order == '<' || order == '>') return {d, order == '>'};
    user_error(
        "{}: dtype '{}' has no byte order ('<' little- or '>' big-endian), which its {} "
        "bytes need",
        what, shown(s), size);
  }
  unsupported_descr(s, what);
}

// ---- .npy ------------------------------------------------------------------------------

struct Header {
  Descr descr;
  Shape shape;  // ytape's
  size_t data_offset = 0;
};

// The header text, after the magic string, version and length.
std::string_view header_text(std::span<const uint8_t> bytes, std::string_view what,
                             size_t& data_offset) {
  std::string_view all(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (!all.starts_with(kMagic)) {
    user_error("{}: not a .npy file: it does not start with \"\\x93NUMPY\"", what);
  }
  if (bytes.size() < kMagic.size() + 2) user_error("{}: the .npy file ends in its version", what);
  int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    user_error("{}: .npy format version {}.{} is not supported (ytape reads 1.0, 2.0 and 3.0)",
               what, major, minor);
  }
  size_t length_bytes = major == 1 ? 2 : 4;
  size_t start = 8 + length_bytes;
  if (bytes.size() < start) user_error("{}: the .npy file ends in its header length", what);
  uint64_t n = 0;
  for (size_t i = length_bytes; i-- > 0;) n = n << 8 | bytes[8 + i];
  if (n > kMaxHeaderBytes) {
    user_error("{}: .npy header length {} is over the limit of {} bytes", what, n, kMaxHeaderBytes);
  }
  if (n > bytes.size() - start) {
    user_error("{}: .npy header length {} runs past the end of the file ({} bytes)", what, n,
               bytes.size());
  }
  data_offset = start + n;
  return all.substr(start, n);
}

Shape read_shape(const PyValue& v, bool fortran_order, std::string_view what) {
  if (v.kind != PyValue::Kind::tuple) user_error("{}: 'shape' is not a tuple", what);
  if (v.items.size() > static_cast<size_t>(kMaxFileRank)) {
    user_error("{}: shape has rank {}, more than {}", what, v.items.size(), kMaxFileRank);
  }
  Shape shape;
  for (const PyValue& d : v.items) {
    if (d.kind != PyValue::Kind::integer) user_error("{}: 'shape' holds a non-integer", what);
    if (d.overflow) user_error("{}: bad shape: dimension {} is too large", what, shown(d.text));
    shape.push_back(d.integer);
  }
  std::string problem = shape_problem(shape);
  if (!problem.empty()) user_error("{}: bad shape: {}", what, problem);
  if (!fortran_order) std::reverse(shape.begin(), shape.end());
  return shape;
}

Header read_header(std::span<const uint8_t> bytes, std::string_view what) {
  Header h;
  std::string_view text = header_text(bytes, what, h.data_offset);
  PyDict dict = HeaderParser(text, what).dict();
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& [key, value] : dict) {
    const PyValue** slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (slot == nullptr) {
      user_error(
          "{}: the .npy header has the key '{}'; numpy writes only 'descr', "
          "'fortran_order' and 'shape'",
          what, shown(key));
    }
    if (*slot != nullptr) user_error("{}: the .npy header has '{}' twice", what, key);
    *slot = &value;
  }
  const char* missing = descr == nullptr     ? "descr"
                        : fortran == nullptr ? "fortran_order"
                        : shape == nullptr   ? "shape"
                                             : nullptr;
  if (missing != nullptr) user_error("{}: the .npy header has no '{}'", what, missing);
  if (fortran->kind != PyValue::Kind::boolean) {
    user_error("{}: 'fortran_order' is not True or False", what);
  }
  h.descr = parse_descr(*descr, what);
  h.shape = read_shape(*shape, fortran->boolean, what);
  return h;
}

// The array of a .npy file's bytes; `what` names the file and, inside an archive, the member,
// and `element_what` the array for element errors.
Tensor read_array(std::span<const uint8_t> bytes, std::string_view what,
                  std::string_view element_what) {
  Header h = read_header(bytes, what);
  std::span<const uint8_t> data = bytes.subspan(h.data_offset);
  const int size = file_dtype_size(h.descr.dtype);
  // Cannot overflow: shape_problem bounded the elements by 2^48.
  auto expected = static_cast<uint64_t>(num_elements(h.shape) * size);
  if (data.size() != expected) {
    user_error("{}: the data is {} bytes, but {} {} elements take {}{}", what, data.size(),
               num_elements(h.shape), npy_descr(h.descr.dtype).substr(1), expected,
               data.size() > expected ? " (nothing may follow them)" : "");
  }
  if (!h.descr.big_endian) return decode_elements(h.descr.dtype, data, h.shape, element_what);
  std::vector<uint8_t> swapped(data.begin(), data.end());
  for (size_t i = 0; i < swapped.size(); i += size) {
    std::reverse(swapped.begin() + i, swapped.begin() + i + size);
  }
  return decode_elements(h.descr.dtype, swapped, h.shape, element_what);
}

// numpy's header for a C-order array of numpy shape `shape`, padded with spaces and a
// newline so that the data starts at a multiple of 64 bytes.
std::string header_of(std::string_view descr, const Shape& shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += fmt::format("{}{}", i > 0 ? ", " : "", shape[i]);
  }
  if (shape.size() == 1) dims += ",";
  std::string h =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // numpy leaves room for the first axis to grow to 21 digits, so that appending rows can
  // rewrite the header in place; matching it keeps our files byte for byte numpy's.
  if (!shape.empty()) h.append(21 - std::to_string(shape[0]).size(), ' ');
  size_t preamble = kMagic.size() + 2 + 2 + h.size() + 1;
  h.append(64 - preamble % 64, ' ');  // numpy pads a whole 64 when already aligned
  return h + "\n";
}

// ---- zip -------------------------------------------------------------------------------

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

// One member, as the central directory gives it.
struct Member {
  std::string name;
  uint32_t method = 0, crc = 0, compressed = 0, size = 0, offset = 0;
  uint64_t data_begin = 0;  // from the local header
};

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
Member central_entry(std::span<const uint8_t> bytes, size_t& pos, size_t end,
                     std::string_view source) {
  if (end - pos < kCentralSize || le32(bytes.data() + pos) != kCentralSignature) {
    user_error("{}: the zip central directory is malformed at offset {}", source, pos);
  }
  const uint8_t* p = bytes.data() + pos;
  size_t name_size = le16(p + 28), tail = name_size + le16(p + 30) + le16(p + 32);
  if (end - pos - kCentralSize < tail) {
    user_error("{}: a zip central directory entry runs past the directory's end", source);
  }
  Member m{std::string(reinterpret_cast<const char*>(p + kCentralSize), name_size),
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
    user_error("{}: member '{}' is encrypted, which ytape does not read", source, shown(m.name));
  }
  if (m.method != kStored && m.method != kDeflated) {
    user_error(
        "{}: member '{}' is compressed with zip method {}; ytape reads stored (0) and "
        "deflated (8) members, as numpy.savez and numpy.savez_compressed write",
        source, shown(m.name), m.method);
  }
  if (le16(p + 34) != 0) {
    user_error("{}: the zip archive is split across several files, which ytape does not read",
               source);
  }
  return m;
}

// Finds where `m`'s data begins, checking its local header against the directory and the
// data's bounds; `end` is where the central directory begins.
void locate_data(std::span<const uint8_t> bytes, Member& m, size_t end, std::string_view source) {
  if (end < kLocalSize || m.offset > end - kLocalSize ||
      le32(bytes.data() + m.offset) != kLocalSignature) {
    user_error("{}: member '{}': no zip local header at offset {}", source, shown(m.name),
               m.offset);
  }
  const uint8_t* p = bytes.data() + m.offset;
  uint64_t name_end = uint64_t{m.offset} + kLocalSize + le16(p + 26);
  m.data_begin = name_end + le16(p + 28);
  if (m.data_begin > end || m.compressed > end - m.data_begin) {
    user_error("{}: member '{}': its data runs past the start of the zip central directory", source,
               shown(m.name));
  }
  std::string_view local_name(reinterpret_cast<const char*>(p + kLocalSize), le16(p + 26));
  bool described_after = (le16(p + 6) & 0x8) != 0;  // CRC and sizes follow the data
  if (local_name != m.name || le16(p + 8) != m.method ||
      (!described_after &&
       (le32(p + 14) != m.crc || le32(p + 18) != m.compressed || le32(p + 22) != m.size))) {
    user_error("{}: member '{}': its zip local header disagrees with the central directory", source,
               shown(m.name));
  }
  if (m.method == kStored && m.compressed != m.size) {
    user_error("{}: member '{}' is stored, but its sizes differ ({} and {} bytes)", source,
               shown(m.name), m.compressed, m.size);
  }
  if (m.size > m.compressed * kMaxDeflateRatio + 64) {
    user_error("{}: member '{}' declares {} bytes from {} compressed, more than deflate gives",
               source, shown(m.name), m.size, m.compressed);
  }
}

// The members of the archive in directory order, each checked, their data disjoint.
std::vector<Member> members(std::span<const uint8_t> bytes, std::string_view source) {
  EndRecord end = end_record(bytes, source);
  std::vector<Member> all;
  size_t pos = end.begin, dir_end = uint64_t{end.begin} + end.size;
  std::set<std::string, std::less<>> names;
  for (uint32_t i = 0; i < end.entries; ++i) {
    all.push_back(central_entry(bytes, pos, dir_end, source));
    if (!names.insert(all.back().name).second) {
      user_error("{}: the archive has two members named '{}'", source, shown(all.back().name));
    }
    locate_data(bytes, all.back(), end.begin, source);
  }
  if (pos != dir_end) {
    user_error("{}: the zip central directory holds more than its {} entries", source, end.entries);
  }
  std::vector<const Member*> by_offset;
  for (const Member& m : all) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Member* a, const Member* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const Member &a = *by_offset[i - 1], &b = *by_offset[i];
    if (a.data_begin + a.compressed > b.offset) {
      user_error("{}: members '{}' and '{}' overlap", source, shown(a.name), shown(b.name));
    }
  }
  return all;
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

// Whether `name` is valid UTF-8, as a zip name flagged so must be.
bool utf8(const std::string& name) {
  try {
    (void)nlohmann::json(name).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
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

TensorMap read_npy(std::span<const uint8_t> bytes, std::string_view source, std::string_view name) {
  std::string element_what = fmt::format("{}: array '{}'", source, shown(name));
  TensorMap out;
  out.emplace_back(std::string(name), read_array(bytes, source, element_what));
  return out;
}

TensorMap read_npz(std::span<const uint8_t> bytes, std::string_view source) {
  TensorMap out;
  for (const Member& m : members(bytes, source)) {
    if (!m.name.ends_with(".npy")) continue;
    std::string name = m.name.substr(0, m.name.size() - 4);
    if (name.empty()) user_error("{}: member '.npy' names no array", source);
    std::string what = fmt::format("{}: array '{}'", source, shown(name));
    auto data = bytes.subspan(m.data_begin, m.compressed);
    std::vector<uint8_t> buffer;
    if (m.method == kDeflated) {
      buffer = inflated(data, m.size, what);
      data = buffer;
    }
    if (crc32(0, data.data(), static_cast<uInt>(data.size())) != m.crc) {
      user_error("{}: the CRC-32 of member '{}' does not match its data", what, shown(m.name));
    }
    out.emplace_back(std::move(name), read_array(data, what, what));
  }
  return out;
}

std::vector<uint8_t> write_npy(const Tensor& t, std::optional<FileDType> as,
                               std::string_view what) {
  if (what.empty()) what = "a tensor";
  FileDType dtype = as.value_or(file_dtype_of(t.dtype()));
  if (dtype == FileDType::bf16) {
    user_error(
        "{}: cannot write BF16 to a numpy file: numpy has no bfloat16 (write f32, or use "
        "safetensors)",
        what);
  }
  if (t.rank() > kMaxFileRank) {
    user_error("{}: rank {} is more than {}, the most a numpy file holds here", what, t.rank(),
               kMaxFileRank);
  }
  std::vector<uint8_t> elements = encode_elements(t, dtype, what);
  std::string header = header_of(npy_descr(dtype), Shape(t.shape().rbegin(), t.shape().rend()));
  // Version 1.0, then the header's 2-byte length.
  std::string preamble(kMagic);
  for (size_t byte : {size_t{1}, size_t{0}, header.size() & 0xFF, header.size() >> 8}) {
    preamble += static_cast<char>(byte);
  }
  preamble += header;
  std::vector<uint8_t> out(preamble.begin(), preamble.end());
  out.insert(out.end(), elements.begin(), elements.end());
  return out;
}

std::vector<uint8_t> write_npz(const TensorMap& tensors, std::optional<FileDType> as) {
  std::vector<uint8_t> out, directory;
  std::set<std::string_view> names;
  for (const auto& [name, tensor] : tensors) {
    if (!names.insert(name).second) {
      user_error("cannot write two tensors named '{}' to one .npz file", shown(name));
    }
    if (name.empty() || name.find('\0') != name.npos || !utf8(name)) {
      user_error(
          "cannot write a tensor named '{}' to an .npz file: its name must be non-empty "
          "UTF-8 without NUL bytes",
          shown(name));
    }
    std::vector<uint8_t> npy = write_npy(tensor, as, fmt::format("tensor '{}'", shown(name)));
    if (npy.size() >= 0xFFFFFFFF || out.size() >= 0xFFFFFFFF || name.size() > 0xFFFF - 4) {
      user_error(
          "cannot write tensor '{}' to an .npz file: the archive would need zip64, which "
          "ytape does not write",
          shown(name));
    }
    append_member(name + ".npy", npy, out, directory);
  }
  if (tensors.size() >= 0xFFFF || out.size() >= 0xFFFFFFFF || directory.size() >= 0xFFFFFFFF) {
    user_error(
        "cannot write {} tensors to an .npz file: the archive would need zip64, which "
        "ytape does not write",
        tensors.size());
  }
  auto begin = static_cast<uint32_t>(out.size());
  out.insert(out.end(), directory.begin(), directory.end());
  put32(out, kEndSignature);
  auto count = static_cast<uint32_t>(tensors.size());
  for (uint32_t v : {0u, 0u, count, count}) put16(out, v);
  put32(out, static_cast<uint32_t>(directory.size()));
  put32(out, begin);
  put16(out, 0);  // no comment
  return out;
}

}  // namespace ytape
