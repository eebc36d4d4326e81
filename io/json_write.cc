// Writes the canonical JSON form of a tape (docs/tape-format.md). Everything is appended to
// one string (or to one piece of a megabyte at a time): a tape of 10^6 ops must be written
// in well under a second.
#include <fmt/format.h>

#include <functional>
#include <iterator>
#include <memory>
#include <span>

#include "io/json.h"
#include "tape/allocator.h"
#include "tape/error.h"

namespace ytape {

namespace {

class Writer {
 public:
  explicit Writer(const Tape& t) : t_(&t) {
    // Each file's quoted path is made once, not once per op that refers to it.
    for (const std::string& f : t.files) {
      std::string q = quoted(f);
      q.back() = ':';
      loc_prefix_.push_back(std::move(q));
    }
  }

  // The whole text, or with `put`, the text in pieces of about kPiece bytes passed to it
  // as they are made ("" returned).
  std::string write(const std::function<void(std::string_view)>* put = nullptr) {
    // Canonical ops take 60-200 bytes; an ample reserve is untouched address space until
    // written, where a short one costs a copy of the whole text and its page faults.
    out_.reserve(put != nullptr ? kPiece + (kPiece >> 2) : 160 * t_->ops.size() + 256);
    // The whole text of a big tape: its pages are faulted in on another core as it grows.
    std::unique_ptr<PageWarmer> warmer;
    if (put == nullptr && out_.capacity() >= PageWarmer::kWorthFrom)
      warmer = std::make_unique<PageWarmer>();
    int version = !t_->scopes.empty() ? 3 : has_regions(*t_) ? 2 : 1;
    fmt::format_to(std::back_inserter(out_),
                   "{{\"format\":\"{}\",\"version\":{},\"name\":", kTapeFormat, version);
    out_ += quoted(t_->name);
    out_ += ",\n\"meta\":{";
    for (size_t i = 0; i < t_->meta.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += quoted(t_->meta[i].first);
      out_ += ':';
      out_ += quoted(t_->meta[i].second);
    }
    out_ += '}';
    if (!t_->scopes.empty()) scopes();
    out_ += ",\n\"ops\":[\n";
    for (size_t i = 0; i < t_->ops.size(); ++i) {
      op(t_->ops[i]);
      out_ += i + 1 < t_->ops.size() ? ",\n" : "\n";
      if (put != nullptr && out_.size() >= kPiece) {
        (*put)(out_);
        out_.clear();
      }
      if (warmer != nullptr && (i & 1023) == 0) {
        warmer->update(0, out_.data(), out_.size(), out_.capacity());
      }
    }
    out_ += "],\n\"outputs\":[\n";
    for (size_t i = 0; i < t_->outputs.size(); ++i) {
      out_ += "{\"var\":";
      var(t_->outputs[i].var);
      out_ += ",\"name\":";
      out_ += quoted(t_->outputs[i].name);
      out_ += i + 1 < t_->outputs.size() ? "},\n" : "}\n";
    }
    out_ += "]}\n";
    if (put == nullptr) return std::move(out_);
    (*put)(out_);
    return "";
  }

 private:
  void op(const Op& op) {
    out_ += "{\"out\":";
    vars(op.outs);
    switch (op.kind) {
      case OpKind::input:
        out_ += ",\"op\":\"input\",\"name\":";
        out_ += quoted(op.name);
        break;
      case OpKind::constant:
        out_ += ",\"op\":\"const\",\"value\":";
        value(op);
        break;
      case OpKind::call:
        out_ += ",\"op\":\"";
        out_ += prim_name(op.prim);
        out_ += "\",\"args\":";
        vars(op.args);
        if (!prim_info(op.prim).attrs.empty()) attrs(op.attrs);
        break;
    }
    out_ += ",\"type\":[";
    for (size_t i = 0; i < op.outs.size(); ++i) {
      if (i > 0) out_ += ',';
      type(t_->type(op.outs[i]));
    }
    out_ += ']';
    location(",\"loc\":", op.loc);
    if (op.loc.scope != 0) {
      out_ += ",\"scope\":";
      integer(op.loc.scope);
    }
    if (!op.regions.empty()) regions(op);
    out_ += '}';
  }

  // ,"scopes":[{"path":...,"layer":...,"made":"f:l","call":"f:l","parent":N}], one per line;
  // an empty path, an unknown location and parent 0 are left out.
  void scopes() {
    out_ += ",\n\"scopes\":[\n";
    for (size_t i = 0; i < t_->scopes.size(); ++i) {
      const Scope& s = t_->scopes[i];
      out_ += '{';
      if (!s.path.empty()) {
        out_ += "\"path\":";
        out_ += quoted(s.path);
        out_ += ',';
      }
      out_ += "\"layer\":";
      out_ += quoted(s.layer);
      location(",\"made\":", s.made);
      location(",\"call\":", s.call);
      if (s.parent != 0) {
        out_ += ",\"parent\":";
        integer(s.parent);
      }
      out_ += i + 1 < t_->scopes.size() ? "},\n" : "}\n";
    }
    out_ += ']';
  }

  // `key` and "file:line", if `loc` is known.
  void location(std::string_view key, Loc loc) {
    if (!loc.known() || loc.file > loc_prefix_.size()) return;
    out_ += key;
    out_ += loc_prefix_[loc.file - 1];
    integer(loc.line);
    out_ += '"';
  }

  void var(Var v) { integer(int64_t{v.id} + 1); }

  void vars(std::span<const Var> vs) {
    out_ += '[';
    for (size_t i = 0; i < vs.size(); ++i) {
      if (i > 0) out_ += ',';
      var(vs[i]);
    }
    out_ += ']';
  }

  void integer(int64_t v) {
    fmt::format_int digits(v);
    out_.append(digits.data(), digits.size());
  }

  void type(const Type& t) {
    out_ += '"';
    out_ += dtype_name(t.dtype);
    out_ += '[';
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i > 0) out_ += ',';
      integer(t.shape[i]);
    }
    out_ += "]\"";
  }

  // Shortest round-trip digits; JSON has no NaN or infinity, so those are strings.
  void float_text(const std::string& s) {
    bool finite = s != "nan" && s != "inf" && s != "-inf";
    if (!finite) out_ += '"';
    out_ += s;
    if (!finite) out_ += '"';
  }

  void value(const Op& op) {
    const Type& t = t_->type(op.outs[0]);
    int64_t n = t.size();
    out_ += '[';
    for (int64_t i = 0; i < n; ++i) {
      if (i > 0) out_ += ',';
      if (is_float(t.dtype)) {
        float_text(literal_str(op, t.dtype, i));
      } else {
        out_ += literal_str(op, t.dtype, i);
      }
    }
    out_ += ']';
  }

  void attrs(const Attrs& attrs) {
    out_ += ",\"attrs\":{";
    bool first = true;
    for (const Attr& a : attrs) {
      if (!first) out_ += ',';
      first = false;
      // Attribute names come from ops.def: plain identifiers, nothing to escape.
      out_ += '"';
      out_ += a.name;
      out_ += "\":";
      attr_value(a.value);
    }
    out_ += '}';
  }

  void attr_value(const AttrValue& v) {
    switch (attr_kind(v)) {
      case AttrKind::int_:
        integer(std::get<int64_t>(v));
        return;
      case AttrKind::ints: {
        const std::vector<int64_t>& xs = std::get<std::vector<int64_t>>(v);
        out_ += '[';
        for (size_t i = 0; i < xs.size(); ++i) {
          if (i > 0) out_ += ',';
          integer(xs[i]);
        }
        out_ += ']';
        return;
      }
      case AttrKind::float_:
        float_text(float_str(std::get<double>(v)));
        return;
      case AttrKind::bool_:
        out_ += std::get<bool>(v) ? "true" : "false";
        return;
      case AttrKind::string:
        out_ += quoted(std::get<std::string>(v));
        return;
      case AttrKind::dtype:
        out_ += '"';
        out_ += dtype_name(std::get<DType>(v));
        out_ += '"';
        return;
    }
    internal_error("bad attribute kind");
  }

  // Whether any op of `t` holds regions (then the file is format version 2).
  static bool has_regions(const Tape& t) {
    for (const Op& op : t.ops) {
      if (!op.regions.empty()) return true;
    }
    return false;
  }

  // ,"regions":[{"name":...,"ops":[...],"yield":[...]}], each region's ops one per line.
  void regions(const Op& op) {
    out_ += ",\"regions\":[";
    const Tape* outer = t_;
    for (size_t k = 0; k < op.regions.size(); ++k) {
      const Tape& r = op.regions[k];
      t_ = &r;  // the region's types; locations still name the outermost tape's files
      out_ += k > 0 ? ",\n{\"name\":" : "\n{\"name\":";
      out_ += quoted(r.name);
      out_ += ",\"ops\":[\n";
      for (size_t i = 0; i < r.ops.size(); ++i) {
        this->op(r.ops[i]);
        out_ += i + 1 < r.ops.size() ? ",\n" : "\n";
      }
      out_ += "],\"yield\":[";
      for (size_t i = 0; i < r.outputs.size(); ++i) {
        if (i > 0) out_ += ',';
        var(r.outputs[i].var);
      }
      out_ += "]}";
    }
    t_ = outer;
    out_ += ']';
  }

  static constexpr size_t kPiece = size_t{1} << 20;
  const Tape* t_;  // the tape whose ops are being written: the outermost, or a region
  std::string out_;
  std::vector<std::string> loc_prefix_;  // "\"path: for each file, quoted, without the line
};

}  // namespace

std::string write_tape_json(const Tape& t) {
  return Writer(t).write();
}

void write_tape_json(const Tape& t, const std::function<void(std::string_view)>& put) {
  Writer(t).write(&put);
}

}  // namespace ytape
