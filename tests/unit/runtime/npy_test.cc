#include "runtime/npy.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "runtime/tensor_file.h"
#include "unit/runtime/tensor_bytes.h"

namespace ytape {
namespace {

using testing::Bytes;
using testing::bytes_of;
using testing::tensor_of;

void append(Bytes& out, std::string_view s) {
  out.insert(out.end(), s.begin(), s.end());
}
void append(Bytes& out, const Bytes& b) {
  out.insert(out.end(), b.begin(), b.end());
}
void put(Bytes& out, uint64_t v, int size) {
  for (int i = 0; i < size; ++i) out.push_back(static_cast<uint8_t>(v >> 8 * i));
}
void set32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> 8 * i);
}

// A .npy file of format `major`.0 with the header text as given (no padding) and data.
Bytes npy_of(std::string_view header, const Bytes& data = {}, int major = 1) {
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  put(out, header.size(), major == 1 ? 2 : 4);
  append(out, header);
  append(out, data);
  return out;
}

// A header dict as numpy writes it, unpadded.
std::string dict(std::string_view descr, std::string_view shape, bool fortran = false) {
  return fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr,
                     fortran ? "True" : "False", shape);
}

Tensor read_one(const Bytes& f) {
  TensorMap m = read_npy(f, "a.npy", "x");
  REQUIRE(m.size() == 1);
  CHECK(m[0].first == "x");
  return m[0].second;
}

// The message of the UserError `f` throws, or "" if it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

void check_bad_npy(const Bytes& f, std::string_view phrase) {
  std::string message = error_of([&] { read_npy(f, "a.npy", "x"); });
  CAPTURE(message);
  CHECK(message.starts_with("a.npy: "));
  CHECK(message.find(phrase) != std::string::npos);
}

// ---- .npz archives made by hand --------------------------------------------------------

Bytes deflated(const Bytes& in) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  Bytes out(deflateBound(&z, in.size()));
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct ZipMember {
  std::string name;
  Bytes content;
  bool deflate = false;
};

// A zip archive of `members`, laid out as Python's zipfile writes it, without extra fields.
Bytes zip_of(const std::vector<ZipMember>& members) {
  Bytes out, directory;
  for (const ZipMember& m : members) {
    Bytes data = m.deflate ? deflated(m.content) : m.content;
    auto crc = crc32(0, m.content.data(), static_cast<uInt>(m.content.size()));
    auto fields = [&](Bytes& to) {
      put(to, 20, 2);                 // version needed
      put(to, 0, 2);                  // flags
      put(to, m.deflate ? 8 : 0, 2);  // method
      put(to, 0x00210000, 4);         // 1980-01-01 00:00
      put(to, crc, 4);
      put(to, data.size(), 4);
      put(to, m.content.size(), 4);
      put(to, m.name.size(), 2);
      put(to, 0, 2);  // extra field
    };
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);  // made by
    fields(directory);
    put(directory, 0, 6);  // comment length, disk, internal attributes
    put(directory, 0, 4);  // external attributes
    put(directory, out.size(), 4);
    append(directory, m.name);
    put(out, 0x04034b50, 4);
    fields(out);
    append(out, m.name);
    append(out, data);
  }
  size_t begin = out.size();
  append(out, directory);
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, members.size(), 2);
  put(out, members.size(), 2);
  put(out, directory.size(), 4);
  put(out, begin, 4);
  put(out, 0, 2);
  return out;
}

void check_bad_npz(const Bytes& f, std::string_view phrase) {
  std::string message = error_of([&] { read_npz(f, "a.npz"); });
  CAPTURE(message);
  CHECK(message.starts_with("a.npz: "));
  CHECK(message.find(phrase) != std::string::npos);
}

// One tensor of every file dtype but BF16, in the ytape dtype it reads into, with its
// extreme values.
std::vector<std::pair<FileDType, Tensor>> one_of_each() {
  std::vector<std::pair<FileDType, Tensor>> out;
  const double inf = INFINITY, nan = NAN;
  for (FileDType d : kAllFileDTypes) {
    int bits = 8 * file_dtype_size(d);
    int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1, lo = -hi - 1;
    int64_t uhi = bits == 64 ? INT64_MAX : (int64_t{1} << bits) - 1;  // u64: i64's range
    switch (d) {
      case FileDType::boolean:
        out.emplace_back(d, tensor_of<bool>({3, 2}, {true, false, false, true, true, true}));
        break;
      case FileDType::i8:
      case FileDType::i16:
      case FileDType::i32:
      case FileDType::i64:
        out.emplace_back(d, tensor_of<int64_t>({3, 2}, {lo, -1, 0, 1, 2, hi}));
        break;
      case FileDType::u8:
      case FileDType::u16:
      case FileDType::u32:
      case FileDType::u64:
        out.emplace_back(d, tensor_of<int64_t>({3, 2}, {0, 1, 2, 100, uhi - 1, uhi}));
        break;
      case FileDType::f16:  // 1, NaN, -2^-24, inf, -0, -2
        out.emplace_back(
            d, tensor_of<uint16_t>({2, 3}, {0x3c00, 0x7e00, 0x8001, 0x7c00, 0x8000, 0xc000}));
        break;
      case FileDType::f32:
        out.emplace_back(d, tensor_of<float>({2, 3}, {1.5f, -0.0f, FLT_TRUE_MIN, FLT_MAX,
                                                      -float(inf), float(nan)}));
        break;
      case FileDType::f64:
        out.emplace_back(d, tensor_of<double>({1, 2, 3}, {1e300, -0.0, 5e-324, inf, nan, 0.1}));
        break;
      case FileDType::bf16:
        break;
    }
  }
  return out;
}

// numpy's descr of each file dtype, in the order of FileDType.
constexpr std::string_view kDescrs[] = {"|b1", "|u1", "<u2", "<u4", "<u8", "|i1", "<i2",
                                        "<i4", "<i8", "<f2", "",    "<f4", "<f8"};

TEST_CASE("npy round trip of every dtype") {
  for (const auto& bound : one_of_each()) {
    const auto& d = std::get<0>(bound);
    const auto& t = std::get<1>(bound);
    CAPTURE(file_dtype_name(d));
    Bytes f = write_npy(t, d);
    CHECK(same_bits(read_one(f), t));
    // The descr numpy writes, and the reversed shape.
    std::string text(f.begin(), f.end());
    std::string_view descr = kDescrs[static_cast<int>(d)];
    CHECK(text.find(fmt::format("'descr': '{}'", descr)) != std::string::npos);
    std::string shape =
        t.rank() == 2 ? fmt::format("({}, {})", t.shape()[1], t.shape()[0]) : "(3, 2, 1)";
    CHECK(text.find("'shape': " + shape) != std::string::npos);
    CHECK((text.find('\n') + 1) % 64 == 0);
  }
}

TEST_CASE("npz round trip of every dtype, in order") {
  TensorMap tensors;
  for (const auto& [d, t] : one_of_each()) tensors.emplace_back(file_dtype_name(d), t);
  tensors.emplace_back("scalar", tensor_of<double>({}, {2.5}));
  tensors.emplace_back("empty", Tensor(Type{DType::f32, {0, 3}}));
  tensors.emplace_back("dir/ünïcode", tensor_of<int64_t>({1}, {7}));
  TensorMap back = read_npz(write_npz(tensors), "a.npz");
  REQUIRE(back.size() == tensors.size());
  for (size_t i = 0; i < back.size(); ++i) {
    CAPTURE(tensors[i].first);
    CHECK(back[i].first == tensors[i].first);
    // Written in each tensor's own dtype, all of which read back as themselves.
    CHECK(same_bits(back[i].second, tensors[i].second));
  }
}

TEST_CASE("npy and npz write a tensor as another file dtype") {
  Tensor t = tensor_of<double>({3}, {0, 1, 255});
  CHECK(same_bits(read_one(write_npy(t, FileDType::u8)), tensor_of<int64_t>({3}, {0, 1, 255})));
  CHECK(same_bits(read_npz(write_npz({{"t", t}}, FileDType::f32), "a.npz")[0].second,
                  tensor_of<float>({3}, {0, 1, 255})));
  Tensor big = tensor_of<double>({2}, {1, 256});
  CHECK(error_of([&] { write_npy(big, FileDType::u8, "b.npy: tensor 'b'"); }) ==
        "b.npy: tensor 'b': element 1 is 256, which u8 does not hold (whole numbers in [0, 256))");
  CHECK(error_of([&] {
          write_npz({{"b", big}}, FileDType::i8);
        }).starts_with("tensor 'b': element 1 is 256"));
}

TEST_CASE("npy and npz refuse to write BF16, which numpy lacks") {
  Tensor t = tensor_of<float>({1}, {1});
  CHECK(error_of([&] { write_npy(t, FileDType::bf16, "w.npy: tensor 'w'"); }) ==
        "w.npy: tensor 'w': cannot write BF16 to a numpy file: numpy has no bfloat16 (write f32, "
        "or use safetensors)");
  CHECK(
      error_of([&] { write_npy(t, FileDType::bf16); }).starts_with("a tensor: cannot write BF16"));
  CHECK(error_of([&] {
          write_npz({{"w", t}}, FileDType::bf16);
        }).starts_with("tensor 'w': cannot write BF16"));
}

TEST_CASE("npy reads and writes the bytes numpy.save writes") {
  // np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)) with numpy 1.24: the header padded
  // with spaces and a newline to 118 bytes, so the data starts at byte 128.
  std::string header = dict("<f4", "(2, 3)");
  header.append(117 - header.size(), ' ');
  header += '\n';
  Bytes expected = npy_of(header, bytes_of<float>({0, 1, 2, 3, 4, 5}));
  REQUIRE(expected.size() == 128 + 24);
  CHECK(expected[8] == 118);
  // numpy's (2, 3) C-order array is ytape's [3,2] with the same bytes: a[1][0] is 3.
  Tensor t = tensor_of<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  CHECK(same_bits(read_one(expected), t));
  CHECK(write_npy(t) == expected);

  // np.save(f, np.float64(2.5)): a 0-d array.
  std::string scalar = dict("<f8", "()");
  scalar.append(117 - scalar.size(), ' ');
  scalar += '\n';
  Bytes expected_scalar = npy_of(scalar, bytes_of<double>({2.5}));
  Tensor s = tensor_of<double>({}, {2.5});
  CHECK(same_bits(read_one(expected_scalar), s));
  CHECK(write_npy(s) == expected_scalar);
}

TEST_CASE("npy reads a Fortran-order array with its shape as it is") {
  // np.asfortranarray(np.arange(6, dtype='<i2').reshape(2, 3)): column-major already.
  Tensor t = read_one(npy_of(dict("<i2", "(2, 3)", true), bytes_of<int16_t>({0, 3, 1, 4, 2, 5})));
  CHECK(same_bits(t, tensor_of<int64_t>({2, 3}, {0, 3, 1, 4, 2, 5})));
}

TEST_CASE("npy reads any spacing and key order, 1-tuples, versions 2.0 and 3.0, big-endian") {
  Bytes data = bytes_of<float>({1, 2, 3, 4, 5});
  Tensor expected = tensor_of<float>({5}, {1, 2, 3, 4, 5});
  CHECK(same_bits(read_one(npy_of("{'shape':(5,),'fortran_order':False,'descr':'<f4'}", data)),
                  expected));
  CHECK(same_bits(read_one(npy_of(" { \"descr\" : \"<f4\" ,\n 'fortran_order' : False , 'shape' "
                                  ": ( 5 , ) , }   \n",
                                  data)),
                  expected));
  CHECK(same_bits(read_one(npy_of(dict("<f4", "(5L,)"), data)), expected));  // Python 2
  CHECK(same_bits(read_one(npy_of(dict("<f4", "(5,)"), data, 2)), expected));
  CHECK(same_bits(read_one(npy_of(dict("<f4", "(5,)"), data, 3)), expected));
  Bytes big = {0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe};
  CHECK(same_bits(read_one(npy_of(dict(">i4", "(2,)"), big)), tensor_of<int64_t>({2}, {258, -2})));
  CHECK(same_bits(read_one(npy_of(dict("<u1", "(2,)"), {7, 200})),
                  tensor_of<int64_t>({2}, {7, 200})));
  CHECK(same_bits(read_one(npy_of(dict(">b1", "(1,)"), {1})), tensor_of<bool>({1}, {true})));
}

TEST_CASE("npy refuses a malformed frame") {
  Bytes ok = npy_of(dict("<f4", "(1,)"), bytes_of<float>({1}));
  check_bad_npy({}, "not a .npy file: it does not start with \"\\x93NUMPY\"");
  check_bad_npy(Bytes(ok.begin(), ok.begin() + 6), "ends in its version");
  check_bad_npy(Bytes(ok.begin(), ok.begin() + 9), "ends in its header length");
  Bytes v4 = ok;
  v4[6] = 4;
  check_bad_npy(v4, ".npy format version 4.0 is not supported (ytape reads 1.0, 2.0 and 3.0)");
  check_bad_npy(Bytes(ok.begin(), ok.begin() + 20),
                "header length 57 runs past the end of the file (20 bytes)");
  Bytes huge = npy_of("", {}, 2);
  set32(huge, 8, 2'000'000);
  check_bad_npy(huge, "header length 2000000 is over the limit of 1048576 bytes");
  check_bad_npy(npy_of(dict("<f4", "(1,)")), "the data is 0 bytes, but 1 f4 elements take 4");
  CHECK(error_of([&] { read_npy(npy_of(dict("<f4", "(1,)"), Bytes(5)), "a.npy", "x"); }) ==
        "a.npy: the data is 5 bytes, but 1 f4 elements take 4 (nothing may follow them)");
}

TEST_CASE("npy refuses a malformed header, saying what it expected") {
  CHECK(error_of([&] { read_npy(npy_of("{'descr' '<f4'}"), "a.npy", "x"); }) ==
        "a.npy: the .npy header is not a Python dict literal as numpy writes one: expected ':' "
        "at character 9 of \"{'descr' '<f4'}\"");
  check_bad_npy(npy_of("['descr']"), "expected '{' at character 0");
  check_bad_npy(npy_of("{'descr': '<f4'"), "expected '}'");
  check_bad_npy(npy_of("{'descr: '<f4'}"), "expected ':'");
  check_bad_npy(npy_of("{'descr': '<f4'} x"), "expected the end of the header after the dict");
  check_bad_npy(npy_of("{'descr': <f4}"), "expected a string, number, tuple, list");
  check_bad_npy(npy_of("{1: 2}"), "expected a string key or '}'");
  check_bad_npy(npy_of("{'shape': (-)}"), "expected a digit");
  check_bad_npy(npy_of("{'shape': " + std::string(100, '(') + "}"), "nested at most 64 deep");
  check_bad_npy(npy_of("{'descr': '<f4', 'fortran_order': False}"),
                "the .npy header has no 'shape'");
  check_bad_npy(npy_of("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}"),
                "the .npy header has the key 'x'; numpy writes only 'descr', 'fortran_order' "
                "and 'shape'");
  check_bad_npy(npy_of("{'descr': '<f4', 'descr': '<f4'}"), "the .npy header has 'descr' twice");
  check_bad_npy(npy_of("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}"),
                "'fortran_order' is not True or False");
  check_bad_npy(npy_of(dict("<f4", "(5)")), "'shape' is not a tuple");
  check_bad_npy(npy_of(dict("<f4", "(5, 'a')")), "'shape' holds a non-integer");
  check_bad_npy(npy_of(dict("<f4", "(2, -1)")), "bad shape: dimension -1 is negative");
  check_bad_npy(npy_of(dict("<f4", "(99999999999999999999,)")),
                "bad shape: dimension 99999999999999999999 is too large");
  check_bad_npy(npy_of(dict("<f4", "(65536, 65536, 65537)")), "more than 2^48 elements");
  std::string rank33 = "(";
  for (int i = 0; i < 33; ++i) rank33 += "1, ";
  check_bad_npy(npy_of(dict("<f4", rank33 + ")")), "shape has rank 33, more than 32");
  check_bad_npy(npy_of(dict("<f4", "(2,)"), bytes_of<float>({1})),
                "the data is 4 bytes, but 2 f4 elements take 8");
}

TEST_CASE("npy refuses dtypes ytape does not read, naming them") {
  CHECK(error_of([&] { read_npy(npy_of(dict("<c8", "()")), "a.npy", "x"); }) ==
        "a.npy: dtype '<c8' is not supported; ytape reads bool ('|b1'), integers ('i1' to 'i8', "
        "'u1' to 'u8') and floats ('f2', 'f4', 'f8')");
  check_bad_npy(npy_of(dict("|O", "()")), "dtype '|O' is not supported (an object array");
  check_bad_npy(npy_of(dict("<U3", "()")), "dtype '<U3' is not supported");
  check_bad_npy(npy_of(dict("<f16", "()")), "dtype '<f16' is not supported");
  check_bad_npy(npy_of(dict("<V2", "()")), "numpy saves a bfloat16 array");
  check_bad_npy(npy_of(dict("", "()")), "dtype '' is not supported");
  check_bad_npy(npy_of(dict("V", "()")), "dtype 'V' is not supported");
  check_bad_npy(npy_of(dict("|f4", "()")), "dtype '|f4' has no byte order");
  check_bad_npy(npy_of(dict("=i8", "()")), "dtype '=i8' has no byte order");
  check_bad_npy(npy_of("{'descr': [('a', '<f4'), ('b', '<i2')], 'fortran_order': False, "
                       "'shape': (2,), }"),
                "the array is structured (its 'descr' is a list of fields)");
  check_bad_npy(npy_of("{'descr': 4, 'fortran_order': False, 'shape': ()}"),
                "'descr' is not a string");
  // Element errors name the array.
  CHECK(error_of([&] {
          read_npy(npy_of(dict("|b1", "(2,)"), {1, 2}), "a.npy", "x");
        }) == "a.npy: array 'x': BOOL element 1 is the byte 2, not 0 or 1");
  check_bad_npy(npy_of(dict("<u8", "()"), Bytes(8, 0xff)), "array 'x': U64 element 0");
}

TEST_CASE("npz reads stored and deflated members in archive order, skipping other files") {
  Bytes x = write_npy(tensor_of<float>({3, 2}, {0, 1, 2, 3, 4, 5}));
  Bytes y = write_npy(Tensor(Type{DType::i64, {1000}}));  // zeros, which deflate well
  Bytes f = zip_of({{"x.npy", x}, {"notes.txt", {'h', 'i'}}, {"y.npy", y, true}, {"dir/", {}}});
  TensorMap m = read_npz(f, "a.npz");
  REQUIRE(m.size() == 2);
  CHECK(m[0].first == "x");
  CHECK(same_bits(m[0].second, tensor_of<float>({3, 2}, {0, 1, 2, 3, 4, 5})));
  CHECK(m[1].first == "y");
  CHECK(same_bits(m[1].second, Tensor(Type{DType::i64, {1000}})));
  CHECK(f.size() < y.size());  // y was deflated
  CHECK(read_npz(zip_of({}), "a.npz").empty());
}

TEST_CASE("npz: a member's faults name the archive and the array") {
  Bytes bad = npy_of(dict("<c8", "()"));
  CHECK(error_of([&] {
          read_npz(zip_of({{"z.npy", bad, true}}), "a.npz");
        }) ==
        "a.npz: array 'z': dtype '<c8' is not supported; ytape reads bool ('|b1'), integers "
        "('i1' to 'i8', 'u1' to 'u8') and floats ('f2', 'f4', 'f8')");
  check_bad_npz(zip_of({{"z.npy", {1, 2, 3}}}), "array 'z': not a .npy file");
  check_bad_npz(zip_of({{".npy", write_npy(tensor_of<float>({}, {1}))}}),
                "member '.npy' names no array");
}

TEST_CASE("npz refuses a malformed archive") {
  Bytes x = write_npy(tensor_of<float>({2}, {1, 2}));
  Bytes f = zip_of({{"x.npy", x}});
  const size_t data = 30 + 5, central = data + x.size(), end = f.size() - 22;
  check_bad_npz({}, "not an .npz file: it is not a zip archive");
  check_bad_npz(x, "not a zip archive");
  Bytes crc = f;
  crc[data + x.size() - 1] ^= 1;
  check_bad_npz(crc, "array 'x': the CRC-32 of member 'x.npy' does not match its data");
  Bytes zip64 = f;
  set32(zip64, end + 16, 0xFFFFFFFF);
  check_bad_npz(zip64, "the archive is zip64 (over 4 GiB or 65535 members)");
  Bytes split = f;
  split[end + 4] = 1;
  check_bad_npz(split, "split across several files");
  Bytes method = f;
  method[central + 10] = 12;
  check_bad_npz(method, "member 'x.npy' is compressed with zip method 12");
  Bytes encrypted = f;
  encrypted[central + 8] = 1;
  check_bad_npz(encrypted, "member 'x.npy' is encrypted");
  Bytes offset = f;
  set32(offset, central + 42, 7);
  check_bad_npz(offset, "member 'x.npy': no zip local header at offset 7");
  Bytes local = f;
  local[30] = 'y';
  check_bad_npz(local, "its zip local header disagrees with the central directory");
  Bytes size = f;
  set32(size, central + 20, static_cast<uint32_t>(x.size() + 1));
  set32(size, central + 24, static_cast<uint32_t>(x.size() + 1));
  check_bad_npz(size, "its data runs past the start of the zip central directory");
  Bytes directory = f;
  set32(directory, end + 12, 45);
  check_bad_npz(directory, "does not end where its end record begins");
  Bytes entry = f;
  entry[central] = 0;
  check_bad_npz(entry, "the zip central directory is malformed at offset");
  check_bad_npz(zip_of({{"x.npy", x}, {"x.npy", x}}), "the archive has two members named 'x.npy'");
}

TEST_CASE("npz refuses overlapping members and deflated data that is not as declared") {
  Bytes x = write_npy(tensor_of<float>({2}, {1, 2}));
  Bytes two = zip_of({{"x.npy", x}, {"y.npy", x}});
  // x's data made to run into y's local header; its local header says that its sizes
  // follow the data, as a streaming writer's does.
  size_t central = 2 * (35 + x.size());
  two[6] = 0x8;
  set32(two, central + 20, static_cast<uint32_t>(x.size() + 10));
  set32(two, central + 24, static_cast<uint32_t>(x.size() + 10));
  check_bad_npz(two, "members 'x.npy' and 'y.npy' overlap");

  Bytes z = zip_of({{"x.npy", x, true}});
  size_t compressed = z.size() - 22 - 46 - 5 - 35, end = z.size() - 22;
  size_t dir = end - 46 - 5;
  Bytes small = z;  // declares one byte fewer than the stream gives
  set32(small, dir + 24, static_cast<uint32_t>(x.size() - 1));
  set32(small, 22, static_cast<uint32_t>(x.size() - 1));
  check_bad_npz(small, "array 'x': inflates to more than its declared");
  Bytes large = z;
  set32(large, dir + 24, static_cast<uint32_t>(x.size() + 1));
  set32(large, 22, static_cast<uint32_t>(x.size() + 1));
  check_bad_npz(large, fmt::format("array 'x': inflates to {} bytes, not its declared {}", x.size(),
                                   x.size() + 1));
  Bytes corrupt = z;
  corrupt[35] = 0xff;  // a reserved block type
  check_bad_npz(corrupt, "array 'x': the deflated data is corrupt");
  // Cut short: the stream's last bytes moved out of the member.
  Bytes cut = z;
  set32(cut, dir + 20, static_cast<uint32_t>(compressed - 2));
  set32(cut, 18, static_cast<uint32_t>(compressed - 2));
  check_bad_npz(cut, "array 'x': the deflated data is cut short");
  Bytes bomb = z;  // 4 GB declared from a few bytes
  set32(bomb, dir + 24, 0xFFFFFFF0);
  set32(bomb, 22, 0xFFFFFFF0);
  check_bad_npz(bomb, "member 'x.npy' declares 4294967280 bytes from");
}

// Every error on hostile input is a UserError: no crash, no out-of-bounds read (the
// sanitizer builds check the latter), no other exception.
void check_fails_cleanly(const Bytes& f, bool npz) {
  try {
    if (npz) {
      read_npz(f, "a.npz");
    } else {
      read_npy(f, "a.npy", "x");
    }
  } catch (const UserError&) {
  }
}

TEST_CASE("npy and npz refuse every truncation and survive every flipped byte") {
  Bytes npy = write_npy(tensor_of<float>({2}, {1, 2}));
  Bytes npz = zip_of({{"x.npy", npy}, {"y.npy", npy, true}});
  for (size_t n = 0; n < npy.size(); ++n) {
    CHECK(!error_of([&] { read_npy(Bytes(npy.begin(), npy.begin() + n), "a.npy", "x"); }).empty());
  }
  for (size_t n = 0; n < npz.size(); ++n) {
    CHECK(!error_of([&] { read_npz(Bytes(npz.begin(), npz.begin() + n), "a.npz"); }).empty());
  }
  for (size_t i = 0; i < npz.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      Bytes f = npz;
      f[i] ^= flip;
      CHECK_NOTHROW(check_fails_cleanly(f, true));
      if (i < npy.size()) {
        Bytes g = npy;
        g[i] ^= flip;
        CHECK_NOTHROW(check_fails_cleanly(g, false));
      }
    }
  }
}

TEST_CASE("npz refuses to write what numpy could not load back") {
  Tensor t = tensor_of<float>({1}, {1});
  CHECK(error_of([&] {
          write_npz({{"a", t}, {"a", t}});
        }) == "cannot write two tensors named 'a' to one .npz file");
  CHECK(error_of([&] {
          write_npz({{"", t}});
        })
            .starts_with("cannot write a tensor named '' to an .npz file: its name must be "
                         "non-empty UTF-8 without NUL bytes"));
  CHECK(!error_of([&] { write_npz({{std::string("a\0b", 3), t}}); }).empty());
  CHECK(!error_of([&] { write_npz({{"\xff", t}}); }).empty());
}

}  // namespace
}  // namespace ytape
