#include "runtime/tensor_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "tape/float16.h"

namespace ytape {

namespace {

// Tensor data is copied as raw bytes; safetensors is little-endian.
static_assert(std::endian::native == std::endian::little);

// Objects on std::map: ordered_json finds each key by a linear search, which made a header of
// 10^5 tensors take a minute to read and another to write (issue #42). The order of the keys
// that keep one (tensors come back in the order the file or the user wrote them) comes from
// the parse (ParsedJson), and writing lays out its own text.
using Json = nlohmann::json;

// A parsed document, with the keys of its top-level object in the order written, and those
// of the object under the top-level key `ordered` (parse_strict).
struct ParsedJson {
  Json root;
  std::vector<std::string> keys, ordered_keys;
};

// The reference implementation's limit: a header this large is an attack, not a model.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Without the "[json.exception.parse_error.101] " prefix, which says nothing to a user.
std::string_view json_reason(const Json::exception& e) {
  std::string_view what = e.what();
  size_t end = what.find("] ");
  return end == std::string_view::npos ? what : what.substr(end + 2);
}

// A name as messages show it: hostile files may hold names of megabytes.
std::string shown(std::string_view name) {
  constexpr size_t kMax = 100;
  return name.size() <= kMax ? std::string(name) : fmt::format("{}...", name.substr(0, kMax));
}

// The checks of parse_strict, in a SAX pass before the document is built: nlohmann keeps the
// last of duplicate keys, and builds any depth of nesting; both are refused while parsing,
// before a hostile input costs memory. (Its parser with a callback could check them as it
// builds, but after each member that is a container it scans the enclosing object for
// discarded members: quadratic in the tensors of a header.)
class StrictSax final : public nlohmann::json_sax<Json> {
 public:
  StrictSax(std::string_view source, std::string_view what, int max_depth, std::string_view ordered,
            ParsedJson& out)
      : source_(source), what_(what), max_depth_(max_depth), ordered_(ordered), out_(out) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return start(); }
  bool start_array(std::size_t) override { return start(); }
  bool end_object() override { return end(); }
  bool end_array() override { return end(); }
  bool key(string_t& key) override;
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw e;  // NOLINT: rethrown as the type the parser made
  }

 private:
  struct Frame {
    std::set<std::string, std::less<>> keys;
    std::string key;
  };
  bool start() {
    // The top-level container is at depth 0.
    if (static_cast<int>(frames_.size()) > max_depth_) {
      user_error("{}: {} is nested more than {} levels deep", source_, what_, max_depth_);
    }
    frames_.emplace_back();
    return true;
  }
  bool end() {
    frames_.pop_back();
    return true;
  }

  std::string_view source_, what_;
  int max_depth_;
  std::string_view ordered_;
  ParsedJson& out_;
  std::vector<Frame> frames_;
};

bool StrictSax::key(string_t& key) {
  if (frames_.size() == 1 && frames_[0].keys.contains(key)) {
    user_error("{}: '{}' appears twice in the {}", source_, shown(key), what_);
  }
  if (frames_.back().keys.contains(key)) {
    user_error("{}: key '{}' appears twice inside '{}' in the {}", source_, shown(key),
               shown(frames_[0].key), what_);
  }
  frames_.back().keys.insert(key);
  if (frames_.size() == 1) out_.keys.push_back(key);
  if (frames_.size() == 2 && !ordered_.empty() && frames_[0].key == ordered_) {
    out_.ordered_keys.push_back(key);
  }
  frames_.back().key = key;
  return true;
}

// `text` parsed, after the checks of StrictSax. `max_depth` counts the containers inside
// the top-level one. The order of keys is kept for the top-level object and for the object
// under its key `ordered`, if given.
ParsedJson parse_strict(std::string_view text, std::string_view source, std::string_view what,
                        int max_depth, std::string_view ordered = {}) {
  ParsedJson parsed;
  try {
    StrictSax checks(source, what, max_depth, ordered, parsed);
    Json::sax_parse(text.begin(), text.end(), &checks);
    parsed.root = Json::parse(text.begin(), text.end());
    return parsed;
  } catch (const Json::exception& e) {
    user_error("{}: {} is not valid JSON: {}", source, what, json_reason(e));
  }
}

// ---- safetensors ---------------------------------------------------------------------

// The reference writer's data order: by its dtype enum reversed (decreasing alignment).
constexpr FileDType kWriteOrder[] = {
    FileDType::u64, FileDType::i64,  FileDType::f64,    FileDType::f32, FileDType::u32,
    FileDType::i32, FileDType::bf16, FileDType::f16,    FileDType::u16, FileDType::i16,
    FileDType::i8,  FileDType::u8,   FileDType::boolean};

int write_rank(FileDType dtype) {
  return static_cast<int>(std::ranges::find(kWriteOrder, dtype) - std::begin(kWriteOrder));
}

// One tensor as the header describes it.
struct Entry {
  std::string name;
  FileDType file;
  Type type;  // ytape's: the file's shape reversed, the dtype widened
  uint64_t begin = 0;
  uint64_t end = 0;
};

template <typename... Args>
[[noreturn]] void tensor_error(std::string_view source, std::string_view name,
                               fmt::format_string<Args...> format, Args&&... args) {
  user_error("{}: tensor '{}': {}", source, shown(name),
             fmt::format(format, std::forward<Args>(args)...));
}

std::string_view header_text(std::span<const uint8_t> bytes, std::string_view source) {
  if (bytes.size() < 8) {
    user_error("{}: not a safetensors file: {} bytes is too short for the 8-byte header length",
               source, bytes.size());
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | bytes[i];
  if (n > kMaxHeaderBytes) {
    user_error("{}: safetensors header length {} is over the limit of {} bytes", source, n,
               kMaxHeaderBytes);
  }
  if (n > bytes.size() - 8) {
    user_error("{}: safetensors header length {} runs past the end of the file ({} bytes)", source,
               n, bytes.size());
  }
  return {reinterpret_cast<const char*>(bytes.data() + 8), static_cast<size_t>(n)};
}

const Json& field(const Json& entry, const char* key, std::string_view source,
                  std::string_view name) {
  auto it = entry.find(key);
  if (it == entry.end()) tensor_error(source, name, "the header entry has no \"{}\"", key);
  return *it;
}

FileDType read_dtype(const Json& dtype, std::string_view source, std::string_view name) {
  if (!dtype.is_string()) tensor_error(source, name, "\"dtype\" is not a string");
  const auto& text = dtype.get_ref<const std::string&>();
  if (std::optional<FileDType> d = parse_safetensors_dtype(text)) return *d;
  tensor_error(source, name,
               "dtype \"{}\" is not supported (ytape reads BOOL, U8-U64, I8-I64, F16, BF16, F32 "
               "and F64)",
               shown(text));
}

Shape read_shape(const Json& shape, std::string_view source, std::string_view name) {
  if (!shape.is_array()) tensor_error(source, name, "\"shape\" is not an array");
  if (shape.size() > static_cast<size_t>(kMaxFileRank)) {
    tensor_error(source, name, "shape has rank {}, more than {}", shape.size(), kMaxFileRank);
  }
  Shape dims;
  for (const Json& d : shape) {
    if (!d.is_number_integer()) tensor_error(source, name, "\"shape\" holds a non-integer");
    if (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(kMaxElements)) {
      tensor_error(source, name, "bad shape: dimension {} is too large", d.get<uint64_t>());
    }
    dims.push_back(d.get<int64_t>());
  }
  std::string problem = shape_problem(dims);
  if (!problem.empty()) tensor_error(source, name, "bad shape: {}", problem);
  return dims;
}

Entry read_entry(const std::string& name, const Json& entry, uint64_t data_size,
                 std::string_view source) {
  if (!entry.is_object()) tensor_error(source, name, "the header entry is not an object");
  FileDType dtype = read_dtype(field(entry, "dtype", source, name), source, name);
  Shape file_shape = read_shape(field(entry, "shape", source, name), source, name);
  const Json& offsets = field(entry, "data_offsets", source, name);
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    tensor_error(source, name, "\"data_offsets\" is not a pair of non-negative integers");
  }
  Entry e{name, dtype, Type{widened(dtype), Shape(file_shape.rbegin(), file_shape.rend())},
          offsets[0].get<uint64_t>(), offsets[1].get<uint64_t>()};
  if (e.end < e.begin) {
    tensor_error(source, name, "data_offsets [{},{}] end before they begin", e.begin, e.end);
  }
  if (e.end > data_size) {
    tensor_error(source, name, "data_offsets [{},{}] run past the end of the data ({} bytes)",
                 e.begin, e.end, data_size);
  }
  // Cannot overflow: shape_problem bounded the elements by 2^48.
  auto bytes = static_cast<uint64_t>(num_elements(file_shape) * file_dtype_size(dtype));
  if (e.end - e.begin != bytes) {
    tensor_error(source, name, "data_offsets [{},{}] hold {} bytes, but {} shape {} takes {}",
                 e.begin, e.end, e.end - e.begin, safetensors_name(dtype), shape_str(file_shape),
                 bytes);
  }
  return e;
}

// `keys` are the metadata's keys in the header's order.
void check_metadata(const Json& metadata, const std::vector<std::string>& keys,
                    std::string_view source) {
  if (!metadata.is_object()) user_error("{}: \"__metadata__\" is not an object", source);
  for (const std::string& key : keys) {
    if (!metadata.at(key).is_string()) {
      user_error("{}: \"__metadata__\" entry '{}' is not a string", source, shown(key));
    }
  }
}

// {"key":"value",...}, compact, in the given order.
std::string metadata_text(const TensorFileMetadata& metadata) {
  std::set<std::string_view> keys;
  std::string text = "{";
  for (const auto& [key, value] : metadata) {
    if (!keys.insert(key).second) {
      user_error("cannot write a safetensors file: metadata key '{}' appears twice", shown(key));
    }
    text +=
        fmt::format("{}{}:{}", text.size() > 1 ? "," : "", Json(key).dump(), Json(value).dump());
  }
  return text + "}";
}

// Sorts the entries by their data and checks that they tile it, as the reference does.
void check_layout(std::vector<Entry>& entries, uint64_t data_size, std::string_view source) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  uint64_t covered = 0;
  const Entry* last = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < covered) {
      tensor_error(source, e.name, "data_offsets [{},{}] overlap those of '{}' [{},{}]", e.begin,
                   e.end, shown(last->name), last->begin, last->end);
    }
    if (e.begin > covered) {
      tensor_error(source, e.name,
                   "data_offsets [{},{}] leave a gap: bytes {}..{} of the data belong to no tensor",
                   e.begin, e.end, covered, e.begin);
    }
    covered = e.end;
    last = &e;
  }
  if (covered != data_size) {
    user_error("{}: bytes {}..{} at the end of the data belong to no tensor", source, covered,
               data_size);
  }
}

Tensor load(const Entry& e, std::span<const uint8_t> data, std::string_view source) {
  return decode_elements(e.file, data.subspan(e.begin, e.end - e.begin), e.type.shape,
                         fmt::format("{}: tensor '{}'", source, shown(e.name)));
}

// ---- JSON inputs ---------------------------------------------------------------------

// Dimensions along the first elements of a nested value, outermost first.
std::vector<int64_t> nesting_of(const Json& value) {
  std::vector<int64_t> dims;
  const Json* v = &value;
  while (v->is_array()) {
    dims.push_back(static_cast<int64_t>(v->size()));
    if (v->empty()) break;
    v = &v->front();
  }
  return dims;
}

const Json& first_leaf(const Json& value) {
  const Json* v = &value;
  while (v->is_array() && !v->empty()) v = &v->front();
  return *v;
}

std::string nesting_str(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "a plain value";
  return fmt::format("nested [{}]", fmt::join(dims, "]["));
}

std::string_view kind(const Json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

// Reads one named value into a tensor, walking the nesting in document (= memory) order.
class NestedReader {
 public:
  NestedReader(std::string_view source, std::string_view name) : source_(source), name_(name) {}

  Tensor read(const Json& value, const Type* wanted);

 private:
  void fill(const Json& value);
  void put(const Json& leaf);
  void put_number(const Json& leaf);
  int64_t to_i64(const Json& leaf);
  std::string path(bool first = false) const;

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    user_error("{}: {}", source_, fmt::format(format, std::forward<Args>(args)...));
  }

  std::string_view source_;
  std::string_view name_;
  bool wanted_ = false;
  std::vector<int64_t> dims_;  // outermost first: the tensor's shape reversed
  std::vector<int64_t> index_;
  Tensor out_;
  int64_t next_ = 0;
};

// 'x[1][0]': the element being read, or the first element at the same depth.
std::string NestedReader::path(bool first) const {
  std::string p = fmt::format("'{}", name_);
  for (int64_t i : index_) p += fmt::format("[{}]", first ? 0 : i);
  return p + "'";
}

Tensor NestedReader::read(const Json& value, const Type* wanted) {
  dims_ = nesting_of(value);
  DType dtype = first_leaf(value).is_boolean() ? DType::boolean : DType::f64;
  if (wanted != nullptr) {
    std::vector<int64_t> want(wanted->shape.rbegin(), wanted->shape.rend());
    // An empty array stands for any shape with a zero at its level.
    bool fits =
        dims_ == want || (!dims_.empty() && dims_.back() == 0 && dims_.size() < want.size() &&
                          std::equal(dims_.begin(), dims_.end(), want.begin()));
    if (!fits) {
      fail("tensor '{}' has shape {} ({}) but {} is expected ({})", name_,
           shape_str(Shape(dims_.rbegin(), dims_.rend())), nesting_str(dims_), type_str(*wanted),
           nesting_str(want));
    }
    dims_ = want;
    dtype = wanted->dtype;
    wanted_ = true;
  }
  out_ = Tensor(Type{dtype, Shape(dims_.rbegin(), dims_.rend())});
  fill(value);
  return out_;
}

void NestedReader::fill(const Json& value) {
  size_t level = index_.size();
  if (level == dims_.size()) {
    if (value.is_array()) {
      fail("tensor '{}' is ragged: {} is an array but {} is not", name_, path(), path(true));
    }
    put(value);
    return;
  }
  if (!value.is_array()) {
    fail("tensor '{}' is ragged: {} is not an array but {} is", name_, path(), path(true));
  }
  if (static_cast<int64_t>(value.size()) != dims_[level]) {
    fail("tensor '{}' is ragged: {} has length {} but {} has length {}", name_, path(),
         value.size(), path(true), dims_[level]);
  }
  index_.push_back(0);
  for (const Json& item : value) {
    fill(item);
    ++index_.back();
  }
  index_.pop_back();
}

void NestedReader::put(const Json& leaf) {
  bool is_bool = out_.dtype() == DType::boolean;
  if (!leaf.is_boolean() && !leaf.is_number()) {
    fail("{} is {}, not a number or a boolean", path(), kind(leaf));
  }
  if (leaf.is_boolean() != is_bool) {
    if (wanted_) {
      fail("{} is {}, but '{}' is {}", path(), kind(leaf), name_, type_str(out_.type()));
    }
    fail("{} is {}, but {} is {}", path(), kind(leaf), path(true),
         is_bool ? "a boolean" : "a number");
  }
  if (is_bool) {
    out_.data<bool>()[next_++] = leaf.get<bool>();
  } else {
    put_number(leaf);
  }
}

void NestedReader::put_number(const Json& leaf) {
  switch (out_.dtype()) {
    case DType::f64:
      out_.data<double>()[next_++] = leaf.get<double>();
      return;
    case DType::f32: {
      double d = leaf.get<double>();
      // The smallest magnitude that rounds to infinity in f32.
      if (std::abs(d) >= 0x1.ffffffp127) fail("{} = {} is out of range for f32", path(), d);
      out_.data<float>()[next_++] = static_cast<float>(d);
      return;
    }
    case DType::i64:
      out_.data<int64_t>()[next_++] = to_i64(leaf);
      return;
    case DType::f16: {
      double d = leaf.get<double>();
      // The smallest magnitude that rounds to infinity in f16.
      if (std::abs(d) >= 65520) fail("{} = {} is out of range for f16", path(), d);
      out_.data<uint16_t>()[next_++] = f16_from_double(d);
      return;
    }
    case DType::boolean:
      break;
  }
  internal_error("put_number on a {} tensor", type_str(out_.type()));
}

int64_t NestedReader::to_i64(const Json& leaf) {
  if (leaf.is_number_unsigned()) {
    auto u = leaf.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("{} = {} is out of range for i64", path(), u);
    }
    return static_cast<int64_t>(u);
  }
  if (leaf.is_number_integer()) return leaf.get<int64_t>();
  double d = leaf.get<double>();
  if (d != std::trunc(d)) fail("{} = {} is not an integer, as i64 needs", path(), d);
  if (d < -0x1p63 || d >= 0x1p63) fail("{} = {} is out of range for i64", path(), d);
  return static_cast<int64_t>(d);
}

// The first piece of a safetensors file: the header's length (8 bytes, little-endian) and
// the header, compact JSON as a dump of the header object would be, written entry by entry
// and padded with spaces to a multiple of 8 bytes. `order`: the tensors in file order;
// `file`: the dtype each is written as.
template <typename FileOf>
std::vector<uint8_t> safetensors_header(
    const std::vector<const std::pair<std::string, Tensor>*>& order,
    const TensorFileMetadata& metadata, const FileOf& file) {
  std::string text = "{";
  uint64_t offset = 0;
  try {
    if (!metadata.empty()) text += "\"__metadata__\":" + metadata_text(metadata);
    for (const auto* named : order) {
      const Tensor& t = named->second;
      auto end = offset + static_cast<uint64_t>(t.size() * file_dtype_size(file(t)));
      nlohmann::ordered_json entry = {{"dtype", safetensors_name(file(t))},
                                      {"shape", Shape(t.shape().rbegin(), t.shape().rend())},
                                      {"data_offsets", {offset, end}}};
      text += fmt::format("{}{}:{}", text.size() > 1 ? "," : "", Json(named->first).dump(),
                          entry.dump());
      offset = end;
    }
  } catch (const Json::type_error& e) {
    user_error("cannot write a safetensors file: a tensor name is not UTF-8 ({})", json_reason(e));
  }
  text += "}";
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out;
  out.reserve(8 + text.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(uint64_t{text.size()} >> 8 * i));
  out.insert(out.end(), text.begin(), text.end());
  return out;
}

}  // namespace

TensorMap read_safetensors(std::span<const uint8_t> bytes, std::string_view source,
                           TensorFileMetadata* metadata) {
  std::string_view header = header_text(bytes, source);
  ParsedJson parsed = parse_strict(header, source, "safetensors header", 2, "__metadata__");
  if (!parsed.root.is_object()) {
    user_error("{}: the safetensors header is not a JSON object", source);
  }
  std::span<const uint8_t> data = bytes.subspan(8 + header.size());
  std::vector<Entry> entries;
  if (metadata != nullptr) metadata->clear();
  for (const std::string& name : parsed.keys) {
    const Json& entry = parsed.root.at(name);
    if (name == "__metadata__") {
      check_metadata(entry, parsed.ordered_keys, source);
      if (metadata == nullptr) continue;
      for (const std::string& key : parsed.ordered_keys) {
        metadata->emplace_back(key, entry.at(key).get<std::string>());
      }
    } else {
      entries.push_back(read_entry(name, entry, data.size(), source));
    }
  }
  check_layout(entries, data.size(), source);
  TensorMap tensors;
  for (const Entry& e : entries) tensors.emplace_back(e.name, load(e, data, source));
  return tensors;
}

std::vector<uint8_t> write_safetensors(const TensorMap& tensors) {
  return write_safetensors(tensors, {}, std::nullopt);
}

std::vector<uint8_t> write_safetensors(const TensorMap& tensors, const TensorFileMetadata& metadata,
                                       std::optional<FileDType> as) {
  SafetensorsPieces file = safetensors_pieces(tensors, metadata, as);
  size_t size = 0;
  for (std::span<const uint8_t> piece : file.pieces) size += piece.size();
  std::vector<uint8_t> out;
  out.reserve(size);
  for (std::span<const uint8_t> piece : file.pieces)
    out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

SafetensorsPieces safetensors_pieces(const TensorMap& tensors, const TensorFileMetadata& metadata,
                                     std::optional<FileDType> as) {
  std::vector<const std::pair<std::string, Tensor>*> order;
  std::set<std::string_view> names;
  for (const auto& named : tensors) {
    if (!names.insert(named.first).second) {
      user_error("cannot write two tensors named '{}' to one safetensors file", named.first);
    }
    if (named.first == "__metadata__") {
      user_error("a tensor in a safetensors file cannot be named '__metadata__'");
    }
    if (named.second.raw() == nullptr && named.second.type().size() != 0) {
      internal_error("write_safetensors: tensor '{}' has no data", named.first);
    }
    order.push_back(&named);
  }
  auto file = [&](const Tensor& t) { return as.value_or(file_dtype_of(t.dtype())); };
  std::sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
    int ra = write_rank(file(a->second)), rb = write_rank(file(b->second));
    return ra != rb ? ra < rb : a->first < b->first;
  });
  SafetensorsPieces out;
  // The conversions first, as their errors came before the header's when the file was one
  // buffer.
  std::vector<int> encoded(order.size(), -1);  // per tensor in order: its entry of out.encoded
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& [name, t] = *order[k];
    if (as && *as != file_dtype_of(t.dtype())) {
      encoded[k] = static_cast<int>(out.encoded.size());
      out.encoded.push_back(encode_elements(t, *as, fmt::format("tensor '{}'", name)));
    }
  }
  out.header = safetensors_header(order, metadata, file);
  out.pieces.emplace_back(out.header);
  for (size_t k = 0; k < order.size(); ++k) {
    const Tensor& t = order[k]->second;
    if (encoded[k] >= 0) {
      out.pieces.emplace_back(out.encoded[encoded[k]]);
    } else if (t.raw() != nullptr) {
      out.pieces.emplace_back(static_cast<const uint8_t*>(t.raw()), static_cast<size_t>(t.bytes()));
    }
  }
  return out;
}

TensorMap read_tensor_json(std::string_view text, std::string_view source, const WantedType& want) {
  ParsedJson parsed = parse_strict(text, source, "JSON input", kMaxFileRank);
  if (!parsed.root.is_object()) {
    user_error("{}: the JSON input is not an object of named tensors, such as {{\"x\": [1, 2]}}",
               source);
  }
  TensorMap tensors;
  for (const std::string& name : parsed.keys) {
    const Json& value = parsed.root.at(name);
    const Type* wanted = want ? want(name) : nullptr;
    tensors.emplace_back(name, NestedReader(source, name).read(value, wanted));
  }
  return tensors;
}

}  // namespace ytape
