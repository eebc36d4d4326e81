// TfIdfVectorizer over integers (strings are refused with their dtype): per sequence (the
// last ONNX axis, the tape's first dim), how often each n-gram of the pool occurs, its
// elements `skip` apart for every skip up to max_skip_count (a 1-gram counted once), as
// ONNX Runtime counts them. Each pool n-gram and skip is a comparison of shifted slices of
// X with its elements, the matches and-ed and summed; each output column adds the counts
// of the pool n-grams that ngram_indexes maps to it. TF gives the counts, IDF the weight
// where the count is not 0, TFIDF the count times the weight.
#include <optional>

#include "onnx/rules/arith.h"

namespace ytape::onnx_import {

namespace {

// The tape grows with the pool's n-grams times the skips times their lengths.
constexpr int64_t kMaxComparisons = int64_t{1} << 16;

// How often `gram` occurs along the sequences of `x` (L, B...), its elements `skip` apart:
// a (1, B...) count in `d`, or nothing when no sequence is long enough.
std::optional<Var> occurrences(Importer& im, Var x, const std::vector<int64_t>& gram, int64_t skip,
                               DType d) {
  auto n = static_cast<int64_t>(gram.size());
  int64_t starts = im.type(x).shape[0] - (n - 1) * (skip + 1);
  if (starts <= 0) return std::nullopt;
  std::optional<Var> match;
  for (int64_t j = 0; j < n; ++j) {
    Var eq = im.op<Prim::eq>({im.slice(x, 1, j * (skip + 1), starts),
                              im.scalar(DType::i64, static_cast<double>(gram[j]))});
    match = match ? im.op<Prim::select>({*match, eq, im.scalar(DType::boolean, 0)}) : eq;
  }
  return im.op<Prim::sum>({im.op<Prim::convert>({*match}, {.dtype = d})}, {.dims = {1}});
}

// The pool's n-grams, in order: ngram_counts[i] is where its (i + 1)-grams start.
std::vector<std::vector<int64_t>> pool_grams(const Node& n) {
  std::vector<int64_t> counts = attr_ints(n, "ngram_counts"), pool = attr_ints(n, "pool_int64s");
  if (pool.empty() && find_attr(n, "pool_strings")) unsupported("TfIdfVectorizer of strings");
  auto size = static_cast<int64_t>(pool.size());
  std::vector<std::vector<int64_t>> grams;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t end = i + 1 < counts.size() ? counts[i + 1] : size;
    auto len = static_cast<int64_t>(i + 1);
    if (counts[i] < 0 || end < counts[i] || end > size || (end - counts[i]) % len != 0)
      user_error("ngram_counts {} do not divide a pool of {}", shape_str(counts), size);
    for (int64_t at = counts[i]; at < end; at += len)
      grams.emplace_back(pool.begin() + at, pool.begin() + at + len);
  }
  return grams;
}

// The occurrences of `gram` for every skip up to `max_skip` (a 1-gram's once), summed.
std::optional<Var> count(Importer& im, Var x, const std::vector<int64_t>& gram, int64_t max_skip,
                         DType d) {
  std::optional<Var> total;
  for (int64_t skip = 0; skip <= (gram.size() == 1 ? 0 : max_skip); ++skip) {
    std::optional<Var> c = occurrences(im, x, gram, skip, d);
    if (c) total = total ? arith::add(im, *total, *c) : *c;
  }
  return total;
}

void tfidf_vectorizer(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  if (im.type(x).dtype != DType::i64) user_error("X must be integers");
  if (im.rank(x) < 1 || im.rank(x) > 2) user_error("X must be (C) or (N, C)");
  std::string mode = attr_string(n, "mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    user_error("mode '{}' is not TF, IDF or TFIDF", mode);
  int64_t min_n = attr_int(n, "min_gram_length", 1), max_n = attr_int(n, "max_gram_length", 1),
          max_skip = attr_int(n, "max_skip_count", 0);
  std::vector<int64_t> indexes = attr_ints(n, "ngram_indexes");
  if (min_n < 1 || max_n < min_n || max_skip < 0)
    user_error("min_gram_length, max_gram_length or max_skip_count is not valid");
  std::vector<float> weights;
  if (const onnx::AttributeProto* w = find_attr(n, "weights"))
    weights.assign(w->floats().begin(), w->floats().end());
  std::vector<std::vector<int64_t>> grams = pool_grams(n);
  if (indexes.size() != grams.size() || (!weights.empty() && weights.size() != grams.size()))
    user_error("ngram_indexes and weights must have one entry per n-gram of the pool ({})",
               grams.size());
  int64_t columns = 0;
  for (int64_t c : indexes) {
    if (c < 0 || c >= kMaxComparisons) user_error("ngram index {} is not in 0..2^16", c);
    columns = std::max(columns, c + 1);
  }
  if (columns == 0) user_error("the pool has no n-grams");
  // Each factor is at least 1, so none may pass the bound before their product is formed.
  auto n_grams = static_cast<int64_t>(grams.size());
  if (max_skip >= kMaxComparisons || max_n > kMaxComparisons ||
      std::max<int64_t>(n_grams, 1) * (max_skip + 1) * max_n > kMaxComparisons)
    unsupported("a TfIdfVectorizer of more than 2^16 comparisons");
  Shape one = im.type(x).shape;
  one[0] = 1;
  DType d = DType::f32;
  std::vector<std::optional<Var>> column(columns);
  for (size_t g = 0; g < grams.size(); ++g) {
    auto len = static_cast<int64_t>(grams[g].size());
    if (len < min_n || len > max_n) continue;
    std::optional<Var> total = count(im, x, grams[g], max_skip, d);
    if (!total) continue;
    Var v = im.reshape(*total, one);
    double weight = weights.empty() ? 1 : weights[g];
    if (mode == "IDF")
      v = im.op<Prim::convert>({im.op<Prim::gt>({v, arith::k(im, v, 0)})}, {.dtype = d});
    if (mode != "TF") v = arith::mul(im, v, arith::k(im, v, weight));
    std::optional<Var>& to = column[indexes[g]];
    to = to ? arith::add(im, *to, v) : v;
  }
  std::vector<Var> parts;
  for (const std::optional<Var>& c : column)
    parts.push_back(c ? *c : im.constant(Tensor(Type{d, one})));
  im.set_output(n, 0, parts.size() == 1 ? parts[0] : im.op<Prim::concat>(parts, {.dim = 1}));
}

}  // namespace

void add_text_rules(Rules& r) {
  r["TfIdfVectorizer"] = tfidf_vectorizer;
}

}  // namespace ytape::onnx_import
