#include "runtime/tensor_file.h"

#include <doctest/doctest.h>

#include <cfloat>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "unit/runtime/tensor_bytes.h"

namespace ytape {
namespace {

using testing::Bytes;
using testing::bytes_of;
using testing::tensor_of;

// A safetensors file from its header text, as given (no padding), and its data.
Bytes file_of(std::string_view header, const Bytes& data = {}) {
  Bytes out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(header.size() >> 8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

TensorMap read(std::string_view header, const Bytes& data = {}) {
  Bytes f = file_of(header, data);
  return read_safetensors(f, "w.safetensors");
}

// One tensor entry of a header.
std::string entry(std::string_view name, std::string_view dtype, std::string_view shape,
                  std::string_view offsets) {
  return fmt::format(R"("{}":{{"dtype":"{}","shape":{},"data_offsets":{}}})", name, dtype, shape,
                     offsets);
}

TEST_CASE("safetensors round trip of every dtype, rank 0 and empty tensors") {
  TensorMap tensors = {
      {"w", tensor_of<float>({3, 2}, {1, 2, 3, 4, 5, 6})},
      {"d", tensor_of<double>({2, 1, 2}, {0.5, -1, 1e300, 4})},
      {"i", tensor_of<int64_t>({3}, {-1, INT64_MAX, INT64_MIN})},
      {"m", tensor_of<bool>({2, 2}, {true, false, false, true})},
      {"s", tensor_of<double>({}, {2.5})},
      {"h", tensor_of<uint16_t>({3}, {0x3c00, 0x7e00, 0x8001})},  // f16: 1, NaN, -2^-24
      {"e", Tensor(Type{DType::f32, {0}})},
      {"e2", Tensor(Type{DType::boolean, {3, 0}})},
  };
  TensorMap back = read_safetensors(write_safetensors(tensors), "rt");
  std::map<std::string, Tensor> by_name(back.begin(), back.end());
  REQUIRE(by_name.size() == tensors.size());
  for (const auto& bound : tensors) {
    const auto& name = std::get<0>(bound);
    const auto& t = std::get<1>(bound);
    CAPTURE(name);
    CHECK(same_bits(by_name.at(name), t));
  }
  // Data order: i64, f64, f32, f16, bool, then by name; empty tensors sit between their
  // neighbours.
  std::vector<std::string> names;
  for (const auto& [name, t] : back) names.push_back(name);
  CHECK(names == std::vector<std::string>{"i", "d", "s", "e", "w", "h", "e2", "m"});
}

TEST_CASE("safetensors writes the reference library's bytes: reversed shape, same data") {
  // The reference implementation's own test vector (test_serialization): numpy shape
  // (1, 2, 3) holding 0..5 is ytape's f32[3,2,1] with the same bytes.
  Tensor t = tensor_of<float>({3, 2, 1}, {0, 1, 2, 3, 4, 5});
  Bytes expected = {64, 0,  0,   0,   0,   0,   0,   0,   123, 34,  97,  116, 116, 110, 46,  48,
                    34, 58, 123, 34,  100, 116, 121, 112, 101, 34,  58,  34,  70,  51,  50,  34,
                    44, 34, 115, 104, 97,  112, 101, 34,  58,  91,  49,  44,  50,  44,  51,  93,
                    44, 34, 100, 97,  116, 97,  95,  111, 102, 102, 115, 101, 116, 115, 34,  58,
                    91, 48, 44,  50,  52,  93,  125, 125, 0,   0,   0,   0,   0,   0,   128, 63,
                    0,  0,  0,   64,  0,   0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64};
  CHECK(write_safetensors({{"attn.0", t}}) == expected);
  TensorMap back = read_safetensors(expected, "ref");
  REQUIRE(back.size() == 1);
  CHECK(back[0].first == "attn.0");
  CHECK(same_bits(back[0].second, t));
  // test_empty: no tensors is "{}" padded to 8 bytes.
  CHECK(write_safetensors({}) == Bytes{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', 32, 32, 32, 32, 32, 32});
}

TEST_CASE("safetensors layout of a small file is pinned") {
  TensorMap tensors = {
      {"b", tensor_of<float>({2}, {1, 2})},
      {"a", tensor_of<bool>({3}, {true, false, true})},
      {"c", tensor_of<int64_t>({}, {7})},
      {"d", tensor_of<double>({2, 1}, {0.5, 0.25})},
  };
  Bytes f = write_safetensors(tensors);
  std::string header = R"({"c":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
                       R"("d":{"dtype":"F64","shape":[1,2],"data_offsets":[8,24]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[24,32]},)"
                       R"("a":{"dtype":"BOOL","shape":[3],"data_offsets":[32,35]}})";
  REQUIRE(header.size() == 220);
  header += "    ";  // padded to 224, a multiple of 8
  Bytes data = bytes_of<int64_t>({7});
  for (const Bytes& part :
       {bytes_of<double>({0.5, 0.25}), bytes_of<float>({1, 2}), Bytes{1, 0, 1}}) {
    data.insert(data.end(), part.begin(), part.end());
  }
  CHECK(f == file_of(header, data));
}

TEST_CASE("safetensors pieces are the file, its tensors' data read in place") {
  TensorMap tensors = {
      {"b", tensor_of<float>({2}, {1, 2})},
      {"a", tensor_of<bool>({3}, {true, false, true})},
      {"e", tensor_of<float>({0}, {})},
      {"d", tensor_of<double>({2, 1}, {0.5, 0.25})},
  };
  const TensorFileMetadata metadata = {{"format", "pt"}};
  for (std::optional<FileDType> as : {std::optional<FileDType>{}, std::optional(FileDType::f64)}) {
    CAPTURE(as.has_value());
    SafetensorsPieces file = safetensors_pieces(tensors, metadata, as);
    Bytes joined;
    for (std::span<const uint8_t> piece : file.pieces) {
      joined.insert(joined.end(), piece.begin(), piece.end());
    }
    CHECK(joined == write_safetensors(tensors, metadata, as));
    // The tensors written as they are (all of them, but the one already f64, when not as
    // f64) are read from their own buffers.
    size_t in_place = 0;
    for (std::span<const uint8_t> piece : file.pieces) {
      for (const auto& [name, t] : tensors) in_place += piece.data() == t.raw() ? 1 : 0;
    }
    CHECK(in_place == (as ? 1u : 4u));
  }
}

TEST_CASE("safetensors reads a file as the reference Python library writes it") {
  // torch.nn.Linear(3, 2) saved by safetensors.torch.save_file(..., metadata={"format": "pt"}):
  // metadata first, tensors sorted by name, header padded with spaces.
  std::string header = R"({"__metadata__":{"format":"pt"},)" +
                       entry("bias", "F32", "[2]", "[0,8]") + "," +
                       entry("weight", "F32", "[2,3]", "[8,32]") + "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  Bytes data = bytes_of<float>({0.5, -0.5, 11, 12, 13, 21, 22, 23});
  TensorMap tensors = read(header, data);
  REQUIRE(tensors.size() == 2);
  CHECK(tensors[0].first == "bias");
  CHECK(same_bits(tensors[0].second, tensor_of<float>({2}, {0.5, -0.5})));
  // numpy's weight[j][i] (row j, column i) is ytape's w[i+1, j+1], at (i) + 3 * (j).
  const Tensor& w = tensors[1].second;
  CHECK(tensors[1].first == "weight");
  CHECK(w.type() == Type{DType::f32, {3, 2}});
  CHECK(w.data<float>()[1 + 3 * 0] == 12);  // weight[0][1]
  CHECK(w.data<float>()[2 + 3 * 1] == 23);  // weight[1][2]
}

TEST_CASE("safetensors reads tensors in data order, whatever the header order") {
  std::string header = "{" + entry("z", "F32", "[1]", "[4,8]") + "," +
                       entry("y", "F32", "[0]", "[4,4]") + "," + entry("x", "F32", "[1]", "[0,4]") +
                       "," + entry("u", "F32", "[0]", "[8,8]") +
                       R"(,"x2":{"data_offsets":[8,8],"shape":[0],"dtype":"I64","extra":1}})";
  TensorMap tensors = read(header, bytes_of<float>({1, 2}));
  std::vector<std::string> names;
  for (const auto& [name, t] : tensors) names.push_back(name);
  CHECK(names == std::vector<std::string>{"x", "y", "z", "u", "x2"});
}

void check_bad_file(const Bytes& f, const std::string& message) {
  CHECK_THROWS_WITH_AS(read_safetensors(f, "w.safetensors"), message.c_str(), UserError);
}

void check_bad_header(std::string_view header, const Bytes& data, const std::string& message) {
  check_bad_file(file_of(header, data), "w.safetensors: " + message);
}

TEST_CASE("safetensors refuses a malformed file frame") {
  check_bad_file(Bytes(7, 0),
                 "w.safetensors: not a safetensors file: 7 bytes is too short for the 8-byte "
                 "header length");
  Bytes huge = {1, 0xe1, 0xf5, 5, 0, 0, 0, 0};  // 100'000'001
  check_bad_file(huge,
                 "w.safetensors: safetensors header length 100000001 is over the limit of "
                 "100000000 bytes");
  check_bad_file(Bytes(8, 0xff),
                 "w.safetensors: safetensors header length 18446744073709551615 is over the "
                 "limit of 100000000 bytes");
  Bytes short_header = file_of("{}      ");
  short_header[0] = 20;
  check_bad_file(short_header,
                 "w.safetensors: safetensors header length 20 runs past the end of the file (16 "
                 "bytes)");
}

TEST_CASE("safetensors refuses a header that is not a JSON object of entries") {
  check_bad_header(R"({"a": )", {},
                   "safetensors header is not valid JSON: parse error at line 1, column 7: syntax "
                   "error while parsing value - unexpected end of input; expected '[', '{', or a "
                   "literal");
  check_bad_header("{\"\xff\":1}", {},
                   "safetensors header is not valid JSON: parse error at line 1, column 3: syntax "
                   "error while parsing object key - invalid string: ill-formed UTF-8 byte; last "
                   "read: '\"\xff'; expected string literal");
  check_bad_header("[1,2]", {}, "the safetensors header is not a JSON object");
  check_bad_header(R"({"a":{"shape":[[1]]}})", {},
                   "safetensors header is nested more than 2 levels deep");
  check_bad_header(std::string(1000, '['), {},
                   "safetensors header is nested more than 2 levels deep");
  check_bad_header(
      "{" + entry("a", "F32", "[1]", "[0,4]") + "," + entry("a", "F32", "[1]", "[0,4]") + "}",
      bytes_of<float>({1}), "'a' appears twice in the safetensors header");
  check_bad_header(R"({"a":{"dtype":"F32","dtype":"F64"}})", {},
                   "key 'dtype' appears twice inside 'a' in the safetensors header");
  check_bad_header(R"({"__metadata__":[]})", {}, "\"__metadata__\" is not an object");
  check_bad_header(R"({"__metadata__":{"format":1}})", {},
                   "\"__metadata__\" entry 'format' is not a string");
  check_bad_header(R"({"a":3})", {}, "tensor 'a': the header entry is not an object");
  check_bad_header(R"({"a":{"shape":[],"data_offsets":[0,4]}})", {},
                   "tensor 'a': the header entry has no \"dtype\"");
  check_bad_header(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", {},
                   "tensor 'a': the header entry has no \"shape\"");
  check_bad_header(R"({"a":{"dtype":"F32","shape":[]}})", {},
                   "tensor 'a': the header entry has no \"data_offsets\"");
  check_bad_header(R"({"a":{"dtype":32,"shape":[],"data_offsets":[0,4]}})", {},
                   "tensor 'a': \"dtype\" is not a string");
  check_bad_header("{" + entry("a", "F8_E4M3", "[2]", "[0,2]") + "}", Bytes(2, 0),
                   "tensor 'a': dtype \"F8_E4M3\" is not supported (ytape reads BOOL, U8-U64, "
                   "I8-I64, F16, BF16, F32 and F64)");
  check_bad_header("{" + entry("a", "F16", "[3]", "[0,4]") + "}", Bytes(4, 0),
                   "tensor 'a': data_offsets [0,4] hold 4 bytes, but F16 shape [3] takes 6");
  std::string long_name(200, 'n');
  check_bad_header("{" + entry(long_name, std::string(150, 'D'), "[]", "[0,4]") + "}", Bytes(4, 0),
                   "tensor '" + std::string(100, 'n') + "...': dtype \"" + std::string(100, 'D') +
                       "...\" is not supported (ytape reads BOOL, U8-U64, I8-I64, F16, BF16, F32 "
                       "and F64)");
}

TEST_CASE("safetensors refuses bad shapes and offsets") {
  auto bad = [](std::string_view shape, std::string_view offsets, const Bytes& data,
                const std::string& message) {
    check_bad_header("{" + entry("t", "F32", shape, offsets) + "}", data, "tensor 't': " + message);
  };
  bad("3", "[0,4]", {}, "\"shape\" is not an array");
  bad("[2.5]", "[0,4]", {}, "\"shape\" holds a non-integer");
  bad(R"(["2"])", "[0,4]", {}, "\"shape\" holds a non-integer");
  bad("[2,-1]", "[0,4]", {}, "bad shape: dimension -1 is negative");
  bad("[18446744073709551615]", "[0,4]", {},
      "bad shape: dimension 18446744073709551615 is too large");
  bad("[65536,65536,65536,2]", "[0,4]", {},
      "bad shape: shape [65536,65536,65536,2] has more than 2^48 elements");
  std::string rank33 = "[1";
  for (int i = 1; i < 33; ++i) rank33 += ",1";
  bad(rank33 + "]", "[0,4]", Bytes(4, 0), "shape has rank 33, more than 32");
  bad("[1]", "[0,4,8]", {}, "\"data_offsets\" is not a pair of non-negative integers");
  bad("[1]", "[-1,4]", {}, "\"data_offsets\" is not a pair of non-negative integers");
  bad("[1]", "[0,4.0]", {}, "\"data_offsets\" is not a pair of non-negative integers");
  bad("[1]", "{}", {}, "\"data_offsets\" is not a pair of non-negative integers");
  bad("[1]", "[8,4]", Bytes(8, 0), "data_offsets [8,4] end before they begin");
  bad("[1]", "[0,4]", Bytes(3, 0), "data_offsets [0,4] run past the end of the data (3 bytes)");
  bad("[1]", "[0,18446744073709551615]", Bytes(3, 0),
      "data_offsets [0,18446744073709551615] run past the end of the data (3 bytes)");
  bad("[3,2]", "[0,16]", Bytes(16, 0),
      "data_offsets [0,16] hold 16 bytes, but F32 shape [3,2] takes 24");
}

TEST_CASE("safetensors refuses data the tensors do not tile exactly") {
  auto two = [](std::string_view a, std::string_view b) {
    return "{" + entry("a", "F32", "[2]", a) + "," + entry("b", "F32", "[2]", b) + "}";
  };
  check_bad_header(two("[0,8]", "[4,12]"), Bytes(12, 0),
                   "tensor 'b': data_offsets [4,12] overlap those of 'a' [0,8]");
  check_bad_header(two("[0,8]", "[0,8]"), Bytes(8, 0),
                   "tensor 'b': data_offsets [0,8] overlap those of 'a' [0,8]");
  check_bad_header(two("[0,8]", "[12,20]"), Bytes(20, 0),
                   "tensor 'b': data_offsets [12,20] leave a gap: bytes 8..12 of the data belong "
                   "to no tensor");
  check_bad_header(two("[4,12]", "[12,20]"), Bytes(20, 0),
                   "tensor 'a': data_offsets [4,12] leave a gap: bytes 0..4 of the data belong "
                   "to no tensor");
  check_bad_header(two("[0,8]", "[8,16]"), Bytes(17, 0),
                   "bytes 16..17 at the end of the data belong to no tensor");
  check_bad_header("{}", Bytes(1, 0), "bytes 0..1 at the end of the data belong to no tensor");
}

TEST_CASE("safetensors reads every dtype, widened: integers to i64, BF16 to f32") {
  struct Case {
    std::string_view dtype;
    Bytes data;  // three elements, little-endian
    DType widened;
    std::vector<double> values;
  };
  const Case cases[] = {
      {"U8", {0, 7, 255}, DType::i64, {0, 7, 255}},
      {"I8", {0x80, 0xff, 5}, DType::i64, {-128, -1, 5}},
      {"U16", {0xff, 0xff, 1, 0, 0, 1}, DType::i64, {65535, 1, 256}},
      {"I16", {0, 0x80, 0xfe, 0xff, 3, 0}, DType::i64, {-32768, -2, 3}},
      {"U32", {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0}, DType::i64, {4294967295.0, 0, 1}},
      {"I32",
       {0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 9, 0, 0, 0},
       DType::i64,
       {-2147483648.0, -1, 9}},
      {"U64", bytes_of<uint64_t>({0, 1, uint64_t{1} << 62}), DType::i64, {0, 1, 0x1p62}},
      {"I64", bytes_of<int64_t>({-3, 0, 3}), DType::i64, {-3, 0, 3}},
      // BF16: the high half of an f32 (1.0 is 0x3f80, -2.5 is 0xc020, 2^-133 subnormal).
      {"BF16", {0x80, 0x3f, 0x20, 0xc0, 0x01, 0x00}, DType::f32, {1, -2.5, 0x1p-133}},
      {"F16", {0x00, 0x3c, 0x00, 0xc1, 0x01, 0x00}, DType::f16, {1, -2.5, 0x1p-24}},
      {"F32", bytes_of<float>({1.5f, -0.0f, 3e38f}), DType::f32, {1.5, -0.0, 3e38f}},
      {"F64", bytes_of<double>({1e300, 2, -1}), DType::f64, {1e300, 2, -1}},
      {"BOOL", {1, 0, 1}, DType::boolean, {1, 0, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.dtype);
    std::string offsets = fmt::format("[0,{}]", c.data.size());
    TensorMap t = read("{" + entry("x", c.dtype, "[3]", offsets) + "}", c.data);
    REQUIRE(t.size() == 1);
    CHECK(t[0].second.type() == Type{c.widened, {3}});
    for (int64_t k = 0; k < 3; ++k) CHECK(element_value(t[0].second, k) == c.values[k]);
  }
  // A U64 beyond i64 has no exact ytape integer.
  check_bad_header("{" + entry("x", "U64", "[1]", "[0,8]") + "}",
                   bytes_of<uint64_t>({~uint64_t{0}}),
                   "tensor 'x': U64 element 0 is 18446744073709551615, beyond i64, which ytape's "
                   "integers are");
}

TEST_CASE("safetensors writes every dtype on request, and reads it back") {
  Tensor f = tensor_of<float>({4}, {1, -2.5f, 1.00390625f, 3e38f});  // 1 + 2^-8: a bf16 tie
  std::vector<uint8_t> bytes = write_safetensors({{"f", f}}, {}, FileDType::bf16);
  CHECK(std::string(bytes.begin() + 8, bytes.begin() + 8 + 56).find("\"dtype\":\"BF16\"") !=
        std::string::npos);
  TensorMap back = read_safetensors(bytes, "b");
  // Ties to even: 1 + 2^-8 rounds to 1; 3e38 to the nearest BF16, 3.0041e38.
  CHECK(element_value(back[0].second, 2) == 1.0);
  CHECK(element_value(back[0].second, 3) == 0x1.c4p127);
  Tensor counts = tensor_of<double>({3}, {0, 200, 255});
  for (FileDType d : {FileDType::u8, FileDType::i16, FileDType::i32, FileDType::u64}) {
    CAPTURE(file_dtype_name(d));
    TensorMap ints = read_safetensors(write_safetensors({{"c", counts}}, {}, d), "i");
    CHECK(ints[0].second.dtype() == DType::i64);
    CHECK(element_value(ints[0].second, 1) == 200);
  }
  // Integers must hold the values exactly.
  CHECK_THROWS_WITH_AS(write_safetensors({{"c", counts}}, {}, FileDType::i8),
                       "tensor 'c': element 1 is 200, which i8 does not hold (whole numbers in "
                       "[-128, 128))",
                       UserError);
  CHECK_THROWS_WITH_AS(write_safetensors({{"f", f}}, {}, FileDType::i32),
                       "tensor 'f': element 1 is -2.5, which i32 does not hold (whole numbers in "
                       "[-2147483648, 2147483648))",
                       UserError);
}

TEST_CASE("safetensors refuses BOOL bytes other than 0 and 1") {
  check_bad_header("{" + entry("m", "BOOL", "[3]", "[0,3]") + "}", Bytes{1, 0, 2},
                   "tensor 'm': BOOL element 2 is the byte 2, not 0 or 1");
}

TEST_CASE("safetensors writing refuses names the format cannot hold") {
  Tensor t = tensor_of<float>({1}, {1});
  CHECK_THROWS_WITH_AS(write_safetensors({{"a", t}, {"a", t}}),
                       "cannot write two tensors named 'a' to one safetensors file", UserError);
  CHECK_THROWS_WITH_AS(write_safetensors({{"__metadata__", t}}),
                       "a tensor in a safetensors file cannot be named '__metadata__'", UserError);
  CHECK_THROWS_WITH_AS(write_safetensors({{"a\xff", t}}),
                       "cannot write a safetensors file: a tensor name is not UTF-8 (invalid UTF-8 "
                       "byte at index 1: 0xFF)",
                       UserError);
}

TEST_CASE("safetensors metadata: written first, read back in order, absent when empty") {
  TensorMap tensors = {{"w", tensor_of<float>({2}, {1, 2})}};
  TensorFileMetadata metadata = {{"step", "12"}, {"epoch", "2"}, {"note", "caf\xc3\xa9"}};
  Bytes bytes = write_safetensors(tensors, metadata);
  std::string header(reinterpret_cast<const char*>(bytes.data() + 8), bytes.size() - 8 - 8);
  CHECK(header.starts_with(
      "{\"__metadata__\":{\"step\":\"12\",\"epoch\":\"2\",\"note\":\"caf\xc3\xa9\"},\"w\":"));
  TensorFileMetadata back;
  TensorMap read_back = read_safetensors(bytes, "m.safetensors", &back);
  CHECK(back == metadata);
  REQUIRE(read_back.size() == 1);
  CHECK(same_bits(read_back[0].second, tensors[0].second));
  // No metadata: the same bytes as the plain writer, and an empty list on reading.
  CHECK(write_safetensors(tensors, {}) == write_safetensors(tensors));
  read_safetensors(write_safetensors(tensors), "m.safetensors", &back);
  CHECK(back.empty());
  CHECK_THROWS_WITH_AS(write_safetensors(tensors, {{"a", "1"}, {"a", "2"}}),
                       "cannot write a safetensors file: metadata key 'a' appears twice",
                       UserError);
}

TEST_CASE("safetensors keeps the order of 30,000 metadata entries and tensors") {
  // Parsing kept each object's keys in a list searched on every insertion: quadratic.
  TensorMap tensors;
  TensorFileMetadata metadata;
  for (int i = 30000; i-- > 0;) {
    tensors.emplace_back(fmt::format("t{}", i), tensor_of<float>({1}, {static_cast<float>(i)}));
    metadata.emplace_back(fmt::format("k{}", i), fmt::format("{}", i));
  }
  TensorFileMetadata back;
  TensorMap read_back = read_safetensors(write_safetensors(tensors, metadata), "m", &back);
  CHECK(back == metadata);
  REQUIRE(read_back.size() == tensors.size());
  CHECK(read_back.front().first == "t0");  // data order: by name, as the reference writes
  CHECK(read_back.back().first == "t9999");
}

// ---- JSON inputs ---------------------------------------------------------------------

TensorMap read_json(std::string_view text, const std::map<std::string, Type>& want = {}) {
  return read_tensor_json(text, "in.json", [&](std::string_view name) -> const Type* {
    auto it = want.find(std::string(name));
    return it == want.end() ? nullptr : &it->second;
  });
}

void check_bad_json(std::string_view text, const std::string& message,
                    const std::map<std::string, Type>& want = {}) {
  CHECK_THROWS_WITH_AS(read_json(text, want), ("in.json: " + message).c_str(), UserError);
}

TEST_CASE("json inputs: nesting is row-major, numbers f64, booleans bool") {
  TensorMap t = read_json(
      R"({"x": [[1, 2, 3], [4, 5, 6]], "s": 2.5, "b": [true, false], "e": [], "ee": [[], []]})");
  REQUIRE(t.size() == 5);
  CHECK(t[0].first == "x");
  CHECK(same_bits(t[0].second, tensor_of<double>({3, 2}, {1, 2, 3, 4, 5, 6})));
  CHECK(t[1].first == "s");
  CHECK(same_bits(t[1].second, tensor_of<double>({}, {2.5})));
  CHECK(same_bits(t[2].second, tensor_of<bool>({2}, {true, false})));
  CHECK(t[3].second.type() == Type{DType::f64, {0}});
  CHECK(t[4].second.type() == Type{DType::f64, {0, 2}});
  CHECK(read_json("{}").empty());
  CHECK(read_tensor_json(R"({"a": 1})", "in.json").size() == 1);
}

TEST_CASE("json inputs keep the order of 30,000 names") {
  std::string text = "{";
  for (int i = 30000; i-- > 0;) text += fmt::format("{}\"x{}\": {}", i < 29999 ? "," : "", i, i);
  TensorMap t = read_json(text + "}");
  REQUIRE(t.size() == 30000);
  CHECK(t.front().first == "x29999");
  CHECK(t.back().first == "x0");
  CHECK(same_bits(t.back().second, tensor_of<double>({}, {0})));
}

TEST_CASE("json inputs convert to the wanted type") {
  std::map<std::string, Type> want = {
      {"w", Type{DType::f32, {3, 2}}},     {"i", Type{DType::i64, {4}}},
      {"m", Type{DType::boolean, {1}}},    {"z", Type{DType::f32, {3, 0}}},
      {"zz", Type{DType::f32, {4, 0, 2}}}, {"big", Type{DType::f32, {2}}},
  };
  TensorMap t =
      read_json(R"({"w": [[1, 2, 3], [4, 5, 6.5]], "i": [1, -2, 3.0, -9223372036854775808],
      "m": [false], "z": [], "zz": [[], []], "big": [3.4028235e38, -1e-50], "other": 1})",
                want);
  REQUIRE(t.size() == 7);
  CHECK(same_bits(t[0].second, tensor_of<float>({3, 2}, {1, 2, 3, 4, 5, 6.5})));
  CHECK(same_bits(t[1].second, tensor_of<int64_t>({4}, {1, -2, 3, INT64_MIN})));
  CHECK(same_bits(t[2].second, tensor_of<bool>({1}, {false})));
  CHECK(t[3].second.type() == want["z"]);
  CHECK(t[4].second.type() == want["zz"]);
  CHECK(same_bits(t[5].second, tensor_of<float>({2}, {FLT_MAX, -0.0f})));
  CHECK(t[6].second.type() == Type{DType::f64, {}});
}

TEST_CASE("json inputs refuse shapes that differ from the wanted type") {
  check_bad_json(R"({"w": [[1, 2, 3], [4, 5, 6]]})",
                 "tensor 'w' has shape [3,2] (nested [2][3]) but f32[2,3] is expected (nested "
                 "[3][2])",
                 {{"w", Type{DType::f32, {2, 3}}}});
  check_bad_json(R"({"w": []})",
                 "tensor 'w' has shape [0] (nested [0]) but f32[2] is expected (nested [2])",
                 {{"w", Type{DType::f32, {2}}}});
  check_bad_json(R"({"w": [[]]})",
                 "tensor 'w' has shape [0,1] (nested [1][0]) but f32[3,0] is expected (nested "
                 "[0][3])",
                 {{"w", Type{DType::f32, {3, 0}}}});
  check_bad_json(R"({"w": [1]})",
                 "tensor 'w' has shape [1] (nested [1]) but f32[] is expected (a plain value)",
                 {{"w", Type{DType::f32, {}}}});
}

TEST_CASE("json inputs refuse ragged nesting and values of the wrong kind") {
  check_bad_json(R"({"x": [[1, 2], [3]]})",
                 "tensor 'x' is ragged: 'x[1]' has length 1 but 'x[0]' has length 2");
  check_bad_json(R"({"x": [[1, 2], 3]})",
                 "tensor 'x' is ragged: 'x[1]' is not an array but 'x[0]' is");
  check_bad_json(R"({"x": [[1, 2], [3, [4]]]})",
                 "tensor 'x' is ragged: 'x[1][1]' is an array but 'x[0][0]' is not");
  check_bad_json(R"({"x": [[1, 2, 3], [4, 5]]})",
                 "tensor 'x' is ragged: 'x[1]' has length 2 but 'x[0]' has length 3",
                 {{"x", Type{DType::f64, {3, 2}}}});
  check_bad_json(R"({"x": [1, "2"]})", "'x[1]' is a string, not a number or a boolean");
  check_bad_json(R"({"x": [null]})", "'x[0]' is null, not a number or a boolean");
  check_bad_json(R"({"x": {"y": 1}})", "'x' is an object, not a number or a boolean");
  check_bad_json(R"({"x": [true, 1]})", "'x[1]' is a number, but 'x[0]' is a boolean");
  check_bad_json(R"({"x": [1, false]})", "'x[1]' is a boolean, but 'x[0]' is a number");
  check_bad_json(R"({"m": [1]})", "'m[0]' is a number, but 'm' is bool[1]",
                 {{"m", Type{DType::boolean, {1}}}});
  check_bad_json(R"({"x": true})", "'x' is a boolean, but 'x' is f32[]",
                 {{"x", Type{DType::f32, {}}}});
}

TEST_CASE("json inputs refuse values the wanted dtype cannot hold") {
  std::map<std::string, Type> want = {{"i", Type{DType::i64, {1}}}, {"f", Type{DType::f32, {1}}}};
  check_bad_json(R"({"i": [2.5]})", "'i[0]' = 2.5 is not an integer, as i64 needs", want);
  check_bad_json(R"({"i": [1e30]})", "'i[0]' = 1e+30 is out of range for i64", want);
  check_bad_json(R"({"i": [9223372036854775808]})",
                 "'i[0]' = 9223372036854775808 is out of range for i64", want);
  check_bad_json(R"({"i": [9.223372036854775808e18]})",
                 "'i[0]' = 9.223372036854776e+18 is out of range for i64", want);
  check_bad_json(R"({"f": [3.5e38]})", "'f[0]' = 3.5e+38 is out of range for f32", want);
  check_bad_json(R"({"f": [-1e300]})", "'f[0]' = -1e+300 is out of range for f32", want);
}

TEST_CASE("json inputs refuse malformed documents") {
  check_bad_json("{",
                 "JSON input is not valid JSON: parse error at line 1, column 2: syntax "
                 "error while parsing object key - unexpected end of input; expected string "
                 "literal");
  check_bad_json(R"({"x": 1e400})",
                 "JSON input is not valid JSON: number overflow parsing '1e400'");
  check_bad_json("[1, 2]",
                 "the JSON input is not an object of named tensors, such as {\"x\": [1, 2]}");
  check_bad_json(R"({"x": 1, "x": 2})", "'x' appears twice in the JSON input");
  std::string deep = std::string(32, '[') + "1" + std::string(32, ']');
  TensorMap t = read_json("{\"x\": " + deep + "}");
  CHECK(t[0].second.type() == Type{DType::f64, Shape(32, 1)});
  check_bad_json("{\"x\": [" + deep + "]}", "JSON input is nested more than 32 levels deep");
}

}  // namespace
}  // namespace ytape
