#include "tape/tape.h"

#include <fmt/format.h>

#include <cstring>

#include "tape/float16.h"
#include "tape/strings.h"

namespace ytape {

// Most of a long tape's memory (docs/benchmarks.md, "An 80-byte op"): a field added to Op
// for every op costs 10^7 of it.
static_assert(sizeof(void*) != 8 || sizeof(Op) <= 80, "an Op has grown past 80 bytes");

size_t Tape::num_inputs() const {
  size_t n = 0;
  while (n < ops.size() && ops[n].kind == OpKind::input) ++n;
  return n;
}

std::vector<Type> Tape::input_types() const {
  std::vector<Type> out;
  for (size_t i = 0, n = num_inputs(); i < n; ++i) out.push_back(type(ops[i].outs[0]));
  return out;
}

std::vector<Type> Tape::output_types() const {
  std::vector<Type> out;
  for (const Output& o : outputs) out.push_back(type(o.var));
  return out;
}

std::string Tape::loc_str(Loc loc) const {
  if (!loc.known() || loc.file > files.size()) return {};
  return fmt::format("{}:{}", printable(files[loc.file - 1]), loc.line);
}

std::string Tape::where_str(Loc loc) const {
  std::string out = loc_str(loc);
  if (const Scope* s = scope_of(loc)) {
    out += out.empty() ? "in " : " in ";
    out += printable(s->path.empty() ? s->layer : s->path);
  }
  return out;
}

double literal_at(const Op& op, DType dtype, int64_t i) {
  const uint8_t* p = op.value.data() + i * dtype_size(dtype);
  switch (dtype) {
    case DType::f32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::f64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::i64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::boolean:
      return *p ? 1.0 : 0.0;
    case DType::f16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_f32(v);
    }
  }
  return 0;
}

std::string literal_str(const Op& op, DType dtype, int64_t i) {
  const uint8_t* p = op.value.data() + i * dtype_size(dtype);
  switch (dtype) {
    case DType::f32: {
      float v;
      std::memcpy(&v, p, 4);
      return float32_str(v);
    }
    case DType::f64:
      return float_str(literal_at(op, dtype, i));
    case DType::i64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return fmt::format("{}", v);
    }
    case DType::boolean:
      return *p ? "true" : "false";
    case DType::f16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return float16_str(v);
    }
  }
  return {};
}

}  // namespace ytape
