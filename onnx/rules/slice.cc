// Slice, Split and Pad: ranges along axes. Positive steps and constant padding map to the
// `slice` and `pad` primitives; negative steps, negative pads' complements and the edge and
// reflect modes pick their elements with `gather` and constant indices.
#include <algorithm>
#include <optional>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// The positions taken along one dim: `count` of them, every `step`-th from `first` (a
// slice of the tape), or, where they are not ascending evenly (a negative step, edge and
// reflect padding), the list of them (a gather). Whole dims and slices are never listed,
// so that their size costs nothing at import; a list is bounded (kMaxListed).
struct Positions {
  int64_t first = 0, count = 0, step = 1;
  std::vector<int64_t> list;
  bool listed = false;
};

// A whole dim of `size`.
Positions whole(int64_t size) {
  return {0, size, 1, {}, false};
}

// ONNX's slice [start, end) by step along a dim of `size`: a negative start or end counts
// from the end, and both are clamped to the dim.
Positions slice_positions(int64_t start, int64_t end, int64_t step, int64_t size) {
  if (step == 0) user_error("a step is 0");
  auto fix = [size](int64_t i, int64_t lo, int64_t hi) {
    return std::clamp(i < 0 ? i + size : i, lo, hi);
  };
  if (size == 0) return {0, 0, 1, {}, false};
  if (step > 0) {
    int64_t from = fix(start, 0, size), to = fix(end, 0, size);
    int64_t count = to > from ? (to - from - 1) / step + 1 : 0;
    return {from, count, count < 2 ? 1 : step, {}, false};
  }
  int64_t from = fix(start, 0, size - 1), to = fix(end, -1, size - 1);
  // -step overflows for INT64_MIN; as unsigned it does not.
  uint64_t stride = 0 - static_cast<uint64_t>(step);
  auto count =
      from > to ? static_cast<int64_t>(static_cast<uint64_t>(from - to - 1) / stride) + 1 : 0;
  if (count < 2) return {from, count, 1, {}, false};
  Positions p{from, listed(count, "a slice's positions"), step, {}, true};
  for (int64_t i = 0; i < count; ++i) p.list.push_back(from + i * step);
  return p;
}

// The positions along each ytape dim of `x`: a slice for every dim, then a gather along each
// listed one.
Var pick(Importer& im, Var x, const std::vector<Positions>& at) {
  Shape s = im.type(x).shape;
  std::vector<int64_t> start, stop, step;
  bool whole_tensor = true;
  for (size_t d = 0; d < s.size(); ++d) {
    const Positions& p = at[d];
    if (p.listed || (p.first == 0 && p.count == s[d] && p.step == 1)) {
      start.push_back(1), stop.push_back(s[d]), step.push_back(1);
    } else {
      start.push_back(p.first + 1), stop.push_back(p.first + (p.count - 1) * p.step + 1);
      step.push_back(p.step);
      if (p.count == 0) stop.back() = p.first;
      whole_tensor = false;
    }
  }
  Var y = whole_tensor ? x : im.op<Prim::slice>({x}, {.start = start, .stop = stop, .step = step});
  for (size_t d = 0; d < s.size(); ++d) {
    if (at[d].listed) y = im.take(y, static_cast<int>(d) + 1, at[d].list);
  }
  return y;
}

std::vector<Positions> all_positions(const Shape& s) {
  std::vector<Positions> at;
  for (int64_t size : s) at.push_back(whole(size));
  return at;
}

void slice(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  std::vector<int64_t> starts = im.static_ints(n, 1), ends = im.static_ints(n, 2);
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (im.has_input(n, 3)) axes = im.static_ints(n, 3);
  if (im.has_input(n, 4)) steps = im.static_ints(n, 4);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    user_error("starts, ends, axes and steps differ in length");
  }
  std::vector<Positions> at = all_positions(im.type(x).shape);
  for (size_t i = 0; i < starts.size(); ++i) {
    int d = ydim(axes[i], r) - 1;
    at[d] = slice_positions(starts[i], ends[i], steps[i], im.type(x).shape[d]);
  }
  im.set_output(n, 0, pick(im, x, at));
}

// The lengths of Split's parts along a dim of `size`: given (each 0 or more, summing to the
// size), or as even as can be, the last part shorter.
std::vector<int64_t> split_lengths(Importer& im, const Node& n, int64_t size, int64_t parts) {
  if (parts == 0) user_error("the node has no outputs");
  std::vector<int64_t> lengths;
  if (std::optional<std::vector<int64_t>> given = im.ints_input_or_attr(n, 1, "split")) {
    lengths = *given;
  } else {
    int64_t each = (size + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      lengths.push_back(std::clamp(size - i * each, int64_t{0}, each));
  }
  if (static_cast<int64_t>(lengths.size()) != parts)
    user_error("split has {} lengths for {} outputs", lengths.size(), parts);
  for (int64_t l : lengths) {
    if (l < 0) user_error("split has a length of {}; each is 0 or more", l);
  }
  int64_t total = 0;
  for (int64_t l : lengths) {
    total += std::min(l, size + 1);  // past the size it is wrong however much, and cannot overflow
    if (total > size) break;
  }
  if (total != size)
    user_error("the split lengths {} do not add up to the axis' {}", shape_str(lengths), size);
  return lengths;
}

void split(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int d = ydim(attr_int(n, "axis", 0), im.rank(x)) - 1;
  int64_t size = im.type(x).shape[d], parts = n.output_size();
  std::vector<int64_t> lengths = split_lengths(im, n, size, parts);
  int64_t from = 0;
  for (int64_t i = 0; i < parts; ++i) {
    std::vector<Positions> at = all_positions(im.type(x).shape);
    at[d] = Positions{from, lengths[i], 1, {}, false};
    from += lengths[i];
    im.set_output(n, static_cast<int>(i), pick(im, x, at));
  }
}

// Edge and reflect padding as positions of the input: index j of the padded dim reads
// position clamp(j) or its reflection.
Positions pad_positions(int64_t lo, int64_t hi, int64_t size, bool reflect) {
  int64_t total = listed(size + lo + hi, "the padded dim");
  Positions p{0, total, 1, {}, true};
  for (int64_t j = -lo; j < size + hi; ++j) {
    int64_t i = j;
    if (reflect && size > 1) {
      int64_t period = 2 * (size - 1);
      i = ((j % period) + period) % period;
      if (i >= size) i = period - i;
    }
    p.list.push_back(std::clamp(i, int64_t{0}, size - 1));
  }
  return p;
}

// Pads of more than any tensor's size are refused first, so that the sums below cannot
// overflow.
std::vector<int64_t> read_pads(Importer& im, const Node& n, int rank) {
  std::vector<int64_t> pads = im.static_ints(n, 1);
  if (static_cast<int>(pads.size()) != 2 * rank)
    user_error("pads has {} entries for rank {}", pads.size(), rank);
  for (int64_t p : pads) {
    if (p < -kMaxElements || p > kMaxElements)
      user_error("pads has {}, more than any tensor's size (2^48)", p);
  }
  return pads;
}

void pad(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  std::vector<int64_t> pads = read_pads(im, n, r);
  std::string mode = attr_string(n, "mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") unsupported("mode '" + mode + "'");
  Shape s = im.type(x).shape;
  std::vector<int64_t> lo(r), hi(r);
  std::vector<Positions> at = all_positions(s);
  for (int d = 0; d < r; ++d) {  // ytape dim d is ONNX axis r - 1 - d
    lo[d] = pads[r - 1 - d], hi[d] = pads[2 * r - 1 - d];
    if (mode != "constant" || lo[d] < 0 || hi[d] < 0) {
      if (mode != "constant" && s[d] == 0) user_error("cannot pad an empty dim in mode '{}'", mode);
      at[d] = mode == "constant" ? slice_positions(-lo[d] > 0 ? -lo[d] : 0,
                                                   s[d] + std::min<int64_t>(hi[d], 0), 1, s[d])
                                 : pad_positions(lo[d], hi[d], s[d], mode == "reflect");
      lo[d] = mode == "constant" ? std::max<int64_t>(lo[d], 0) : 0;
      hi[d] = mode == "constant" ? std::max<int64_t>(hi[d], 0) : 0;
    }
  }
  Var y = pick(im, x, at);
  double value = 0;
  if (im.has_input(n, 2)) value = im.static_number(n, 2);
  bool any = std::any_of(lo.begin(), lo.end(), [](int64_t v) { return v > 0; }) ||
             std::any_of(hi.begin(), hi.end(), [](int64_t v) { return v > 0; });
  if (any) {
    y = im.op<Prim::pad>(
        {y}, {.lo = lo, .hi = hi, .interior = std::vector<int64_t>(r, 0), .value = value});
  }
  im.set_output(n, 0, y);
}

}  // namespace

void add_slice_rules(Rules& r) {
  r["Slice"] = slice;
  r["Split"] = split;
  r["Pad"] = pad;
}

}  // namespace ytape::onnx_import
