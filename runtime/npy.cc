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
#include "runtime/zip.h"
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
        what_, expected, pos_, shown_name(text_));
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
      what, shown_name(descr), hint);
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
        what, shown_name(s), size);
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
    if (d.overflow)
      user_error("{}: bad shape: dimension {} is too large", what, shown_name(d.text));
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
          what, shown_name(key));
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

}  // namespace

TensorMap read_npy(std::span<const uint8_t> bytes, std::string_view source, std::string_view name) {
  std::string element_what = fmt::format("{}: array '{}'", source, shown_name(name));
  TensorMap out;
  out.emplace_back(std::string(name), read_array(bytes, source, element_what));
  return out;
}

TensorMap read_npz(std::span<const uint8_t> bytes, std::string_view source) {
  TensorMap out;
  for (const ZipMember& m : zip_members(bytes, source)) {
    if (!m.name.ends_with(".npy")) continue;
    std::string name = m.name.substr(0, m.name.size() - 4);
    if (name.empty()) user_error("{}: member '.npy' names no array", source);
    std::string what = fmt::format("{}: array '{}'", source, shown_name(name));
    std::vector<uint8_t> buffer;
    out.emplace_back(std::move(name), read_array(zip_content(bytes, m, buffer, what), what, what));
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
  ZipWriter zip;
  std::set<std::string_view> names;
  for (const auto& [name, tensor] : tensors) {
    if (!names.insert(name).second) {
      user_error("cannot write two tensors named '{}' to one .npz file", shown_name(name));
    }
    if (name.empty() || name.find('\0') != name.npos || !is_utf8(name)) {
      user_error(
          "cannot write a tensor named '{}' to an .npz file: its name must be non-empty "
          "UTF-8 without NUL bytes",
          shown_name(name));
    }
    zip.add(name + ".npy", write_npy(tensor, as, fmt::format("tensor '{}'", shown_name(name))),
            fmt::format("tensor '{}'", shown_name(name)));
  }
  return zip.finish(fmt::format("{} tensors", tensors.size()));
}

}  // namespace ytape
