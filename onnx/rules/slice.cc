// Slice, Split and Pad: ranges along axes. Positive steps and constant padding map to the
// `slice` and `pad` primitives; negative steps, negative pads' complements and the edge and
// reflect modes pick their elements with `gather` and constant indices.
#include <algorithm>
#include <optional>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// The 0-based positions of ONNX's slice [start, end) by step along a dim of `size`.
std::vector<int64_t> slice_positions(int64_t start, int64_t end, int64_t step, int64_t size) {
  if (step == 0) user_error("a step is 0");
  auto fix = [size](int64_t i, int64_t lo, int64_t hi) {
    return std::clamp(i < 0 ? i + size : i, lo, hi);
  };
  std::vector<int64_t> at;
  if (step > 0) {
    for (int64_t i = fix(start, 0, size), e = fix(end, 0, size); i < e; i += step) at.push_back(i);
  } else {
    for (int64_t i = fix(start, 0, size - 1), e = fix(end, -1, size - 1); i > e; i += step)
      at.push_back(i);
  }
  return at;
}

// Positions along each ytape dim of `x` (all of them where `at` has none).
Var pick(Importer& im, Var x, const std::vector<std::vector<int64_t>>& at) {
  Shape s = im.type(x).shape;
  std::vector<int64_t> start, stop, step;
  std::vector<int> gathers;
  for (size_t d = 0; d < s.size(); ++d) {
    const std::vector<int64_t>& p = at[d];
    bool regular = p.size() < 2 || p[1] > p[0];
    for (size_t i = 2; regular && i < p.size(); ++i) regular = p[i] - p[i - 1] == p[1] - p[0];
    if (!regular) {
      gathers.push_back(static_cast<int>(d));
      start.push_back(1), stop.push_back(s[d]), step.push_back(1);
    } else if (p.empty()) {
      start.push_back(1), stop.push_back(0), step.push_back(1);
    } else {
      start.push_back(p.front() + 1), stop.push_back(p.back() + 1);
      step.push_back(p.size() > 1 ? p[1] - p[0] : 1);
    }
  }
  bool whole = true;
  for (size_t d = 0; d < s.size(); ++d)
    whole = whole && start[d] == 1 && stop[d] == s[d] && step[d] == 1;
  Var y = whole ? x : im.op<Prim::slice>({x}, {.start = start, .stop = stop, .step = step});
  for (int d : gathers) y = im.take(y, d + 1, at[d]);
  return y;
}

std::vector<std::vector<int64_t>> all_positions(const Shape& s) {
  std::vector<std::vector<int64_t>> at(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    for (int64_t i = 0; i < s[d]; ++i) at[d].push_back(i);
  }
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
  std::vector<std::vector<int64_t>> at = all_positions(im.type(x).shape);
  for (size_t i = 0; i < starts.size(); ++i) {
    int d = ydim(axes[i], r) - 1;
    at[d] = slice_positions(starts[i], ends[i], steps[i], im.type(x).shape[d]);
  }
  im.set_output(n, 0, pick(im, x, at));
}

void split(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int d = ydim(attr_int(n, "axis", 0), im.rank(x)) - 1;
  int64_t size = im.type(x).shape[d], parts = n.output_size();
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
  int64_t from = 0;
  for (int64_t i = 0; i < parts; ++i) {
    std::vector<std::vector<int64_t>> at = all_positions(im.type(x).shape);
    at[d] = slice_positions(from, from + lengths[i], 1, size);
    from += lengths[i];
    im.set_output(n, static_cast<int>(i), pick(im, x, at));
  }
  if (from != size) user_error("the split lengths add up to {}, not {}", from, size);
}

// Edge and reflect padding as positions of the input: index j of the padded dim reads
// position clamp(j) or its reflection.
std::vector<int64_t> pad_positions(int64_t lo, int64_t hi, int64_t size, bool reflect) {
  std::vector<int64_t> at;
  for (int64_t j = -lo; j < size + hi; ++j) {
    int64_t i = j;
    if (reflect && size > 1) {
      int64_t period = 2 * (size - 1);
      i = ((j % period) + period) % period;
      if (i >= size) i = period - i;
    }
    at.push_back(std::clamp(i, int64_t{0}, size - 1));
  }
  return at;
}

void pad(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int r = im.rank(x);
  std::vector<int64_t> pads = im.static_ints(n, 1);
  if (static_cast<int>(pads.size()) != 2 * r)
    user_error("pads has {} entries for rank {}", pads.size(), r);
  std::string mode = attr_string(n, "mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") unsupported("mode '" + mode + "'");
  Shape s = im.type(x).shape;
  std::vector<int64_t> lo(r), hi(r);
  std::vector<std::vector<int64_t>> at = all_positions(s);
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
  if (im.has_input(n, 2)) value = element_value(im.static_input(n, 2), 0);
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
