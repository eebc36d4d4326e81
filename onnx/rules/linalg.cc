// MatMul, Gemm, Einsum and Det. A row-major (M, K) matrix is the column-major (K, M) one, its
// transpose, so ONNX's A * B is, on the tape, matmul(B', A') with A', B' the tape's
// tensors: (A B)' = B' A'. Batch dims follow the first two and broadcast as in numpy.
#include "onnx/rules/linalg.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <map>
#include <string>

namespace ytape::onnx_import {

namespace {

// `x` (a matrix and batch dims) broadcast to the batch dims `batch`.
Var to_batch(Importer& im, Var x, const Shape& batch) {
  Shape s = im.type(x).shape;
  Shape want{s[0], s[1]};
  want.insert(want.end(), batch.begin(), batch.end());
  if (s == want) return x;
  return im.op<Prim::broadcast_to>({x}, {.shape = want});
}

Shape broadcast_batch(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()) - 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i + 2 < a.size() ? a[i + 2] : 1, y = i + 2 < b.size() ? b[i + 2] : 1;
    if (x != y && x != 1 && y != 1) user_error("batch dims {} and {} do not broadcast", x, y);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace

Var onnx_matmul(Importer& im, Var a, Var b) {
  Shape sa = im.type(a).shape, sb = im.type(b).shape;
  if (sa.empty() || sb.empty()) user_error("MatMul of a scalar");
  // A vector a is a row (1, K), its tape form (K, 1); a vector b is a column (K, 1), (1, K).
  if (sa.size() == 1) a = im.reshape(a, {sa[0], 1});
  if (sb.size() == 1) b = im.reshape(b, {1, sb[0]});
  Shape ta = im.type(a).shape, tb = im.type(b).shape;
  Shape batch = broadcast_batch(ta, tb);
  Shape out{tb[0], ta[1]};  // (N, M, batch...)
  out.insert(out.end(), batch.begin(), batch.end());
  Var y;
  if (!batch.empty() && std::all_of(tb.begin() + 2, tb.end(), [](int64_t d) { return d == 1; })) {
    // One matrix b for every matrix of a (a Linear layer on a sequence): a's columns side by
    // side, (K, M * batch), are one product, with no copy of b per batch and one weight
    // gradient rather than a sum over the batch.
    int64_t columns = 1;
    for (size_t i = 1; i < ta.size(); ++i) columns *= ta[i];
    y = im.op<Prim::matmul>({im.reshape(b, {tb[0], tb[1]}), im.reshape(a, {ta[0], columns})});
  } else {
    y = im.op<Prim::matmul>({to_batch(im, b, batch), to_batch(im, a, batch)});
  }
  if (sb.size() == 1) out.erase(out.begin());
  if (sa.size() == 1) out.erase(out.begin() + (sb.size() == 1 ? 0 : 1));
  return im.reshape(y, out);
}

namespace {

void matmul(Importer& im, const Node& n) {
  im.set_output(n, 0, onnx_matmul(im, im.input(n, 0), im.input(n, 1)));
}

// alpha * op(A) op(B) + beta * C; (op(A) op(B))' = op(B)' op(A)', and op(B)' is B' or its
// transpose as B is transposed or not.
void gemm(Importer& im, const Node& n) {
  Var a = im.input(n, 0), b = im.input(n, 1);
  bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
  Var y = im.op<Prim::matmul>({b, a}, {.transpose_a = tb, .transpose_b = ta});
  DType dt = im.type(y).dtype;
  double alpha = attr_float(n, "alpha", 1), beta = attr_float(n, "beta", 1);
  if (alpha != 1) y = im.op<Prim::mul>({y, im.scalar(dt, alpha)});
  if (im.has_input(n, 2)) {
    Var c = im.input(n, 2);
    if (beta != 1) c = im.op<Prim::mul>({c, im.scalar(dt, beta)});
    y = im.op<Prim::add>({y, c});
  }
  im.set_output(n, 0, y);
}

// ---- Einsum: each operand's labels made distinct (diagonals taken), its dims permuted and
// given size 1 to align with every label, the operands multiplied with broadcasting, the
// labels missing from the output summed. Labels are chars; "..." stands for the broadcast
// dims, named here by the chars '0', '1', ... (right-aligned across operands, as numpy).

struct Term {
  Var x;
  std::string labels;  // one per ONNX axis
};

// The labels of one operand's term, "..." expanded for an operand of rank `rank`.
std::string expand_term(std::string_view term, int rank, int ellipsis_rank) {
  std::string out;
  size_t dots = term.find("...");
  int letters = static_cast<int>(term.size()) - (dots == std::string_view::npos ? 0 : 3);
  int inner = rank - letters;
  if (dots == std::string_view::npos ? inner != 0 : inner < 0) {
    user_error("the term '{}' does not fit an operand of rank {}", term, rank);
  }
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int e = ellipsis_rank - inner; e < ellipsis_rank; ++e) out += static_cast<char>('0' + e);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      out += term[i];
    } else {
      user_error("the term '{}' has '{}', not a letter", term, term[i]);
    }
  }
  return out;
}

// `t` with its dims permuted to the order of `order` (a permutation of t.labels).
Term permuted(Importer& im, const Term& t, const std::string& order) {
  if (order == t.labels) return t;
  auto m = static_cast<int64_t>(order.size());
  std::vector<int64_t> perm(m);
  // New ytape dim j is new ONNX axis m - j, which is old ONNX axis p, old ytape dim m - p.
  for (int64_t j = 1; j <= m; ++j) {
    auto p = static_cast<int64_t>(t.labels.find(order[m - j]));
    perm[j - 1] = m - p;
  }
  return {im.op<Prim::permutedims>({t.x}, {.perm = perm}), order};
}

// `t` with one label that repeats taken along its diagonal, until none repeats.
Term diagonals(Importer& im, Term t) {
  for (size_t a = 0; a < t.labels.size(); ++a) {
    size_t b = t.labels.find(t.labels[a], a + 1);
    if (b == std::string::npos) continue;
    Shape s = im.onnx_shape(t.x);
    if (s[a] != s[b]) user_error("label '{}' has sizes {} and {}", t.labels[a], s[a], s[b]);
    std::string rest = t.labels;
    rest.erase(b, 1), rest.erase(a, 1);
    Term moved = permuted(im, t, rest + t.labels[a] + t.labels[b]);
    int64_t size = s[a];
    Shape flat = reversed(im.onnx_shape(moved.x));  // ytape: the pair are dims 1 and 2
    flat.erase(flat.begin()), flat[0] = size * size;
    Var x = im.reshape(moved.x, flat);
    std::vector<int64_t> start(flat.size(), 1), stop(flat), step(flat.size(), 1);
    step[0] = size + 1;
    x = im.op<Prim::slice>({x}, {.start = start, .stop = stop, .step = step});
    return diagonals(im, {x, rest + t.labels[a]});
  }
  return t;
}

std::vector<std::string> split_terms(const std::string& lhs) {
  std::vector<std::string> terms;
  for (size_t from = 0;;) {
    size_t comma = lhs.find(',', from);
    terms.push_back(lhs.substr(from, comma - from));
    if (comma == std::string::npos) return terms;
    from = comma + 1;
  }
}

int letters_in(const std::string& term) {
  return static_cast<int>(term.size()) - (term.find("...") == std::string::npos ? 0 : 3);
}

// The output's labels: the right side expanded, or (no "->") the broadcast dims and then
// the letters that occur once, in alphabetical order.
std::string output_labels(const std::string& eq, int ellipsis_rank,
                          const std::map<char, int>& count) {
  std::string out;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    bool dots = rhs.find("...") != std::string::npos;
    out = expand_term(rhs, letters_in(rhs) + (dots ? ellipsis_rank : 0), ellipsis_rank);
  } else {
    for (int e = 0; e < ellipsis_rank; ++e) out += static_cast<char>('0' + e);
    for (auto [c, k] : count) {
      if (std::isalpha(static_cast<unsigned char>(c)) && k == 1) out += c;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!count.count(out[i])) user_error("the output label '{}' is in no input", out[i]);
    if (out.find(out[i], i + 1) != std::string::npos)
      user_error("the output label '{}' repeats", out[i]);
  }
  return out;
}

// The operands, each permuted and reshaped to the dims of `all` (size 1 where it lacks the
// label), multiplied.
Var broadcast_product(Importer& im, const std::vector<Term>& ops, const std::string& all) {
  Var product;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string order;
    for (char c : all) {
      if (ops[i].labels.find(c) != std::string::npos) order += c;
    }
    Term t = permuted(im, ops[i], order);
    Shape s = im.onnx_shape(t.x), full;
    for (char c : all) {
      size_t at = order.find(c);
      full.push_back(at == std::string::npos ? 1 : s[at]);
    }
    Var x = im.reshape(t.x, reversed(full));
    product = i == 0 ? x : im.op<Prim::mul>({product, x});
  }
  return product;
}

void einsum(Importer& im, const Node& n) {
  std::string eq;
  for (char c : attr_string(n, "equation", "")) {
    if (c != ' ') eq += c;
  }
  std::vector<std::string> terms = split_terms(eq.substr(0, eq.find("->")));
  if (static_cast<int>(terms.size()) != n.input_size())
    user_error("the equation '{}' has {} terms for {} inputs", eq, terms.size(), n.input_size());
  int ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int rank = im.rank(im.input(n, static_cast<int>(i)));
    ellipsis_rank = std::max(ellipsis_rank, rank - letters_in(terms[i]));
  }
  if (ellipsis_rank > 9) user_error("'...' stands for {} dims, more than 9", ellipsis_rank);
  std::vector<Term> ops;
  std::map<char, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    Var x = im.input(n, static_cast<int>(i));
    ops.push_back(diagonals(im, {x, expand_term(terms[i], im.rank(x), ellipsis_rank)}));
    for (char c : ops.back().labels) ++count[c];
  }
  std::string out = output_labels(eq, ellipsis_rank, count), all = out;
  for (auto [c, k] : count) {
    if (out.find(c) == std::string::npos) all += c;
  }
  Var product = broadcast_product(im, ops, all);
  auto r = static_cast<int64_t>(all.size());
  std::vector<int64_t> summed;  // ONNX axes out.size().. r - 1, as ytape dims
  for (int64_t a = r - 1; a >= static_cast<int64_t>(out.size()); --a) summed.push_back(r - a);
  if (!summed.empty()) product = im.op<Prim::sum>({product}, {.dims = summed});
  im.set_output(n, 0, product);
}

// ---- Det, by Laplace's expansion along the rows, bottom up: the minor of the last k rows
// and a set S of k columns (a bit mask) is the sum over the columns j of S, the p-th of
// them, of (-1)^p a[M - k, j] minor(S less j). Each of the 2^M minors is built once, M 2^M
// products in all and no divisions, so the tape is differentiable everywhere (the pivots
// of an LU would choose rows by the values). The tape grows as M 2^M: up to 8 x 8.

constexpr int kMaxDet = 8;

void det(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  const Type& t = im.type(x);
  if (!is_float(t.dtype)) user_error("Det of {}, not floats", dtype_name(t.dtype));
  if (t.rank() < 2 || t.shape[0] != t.shape[1])
    user_error("Det of a {} tensor, not of square matrices", shape_str(im.onnx_shape(x)));
  auto m = static_cast<int>(t.shape[0]);
  if (m > kMaxDet)
    unsupported(
        fmt::format("Det of {0} x {0} matrices (ytape's are at most {1} x {1})", m, kMaxDet));
  Shape batch(t.shape.begin() + 2, t.shape.end());
  if (m == 0) {
    im.set_output(n, 0, im.op<Prim::broadcast_to>({im.scalar(t.dtype, 1)}, {.shape = batch}));
    return;
  }
  std::vector<Var> a;  // a[i m + j]: row i, column j (the tape's dims 2 and 1)
  for (int i = 0; i < m; ++i) {
    Var row = im.slice(x, 2, i, 1);
    for (int j = 0; j < m; ++j) a.push_back(im.reshape(im.slice(row, 1, j, 1), batch));
  }
  std::vector<Var> minor(size_t{1} << m);
  for (unsigned mask = 1; mask < minor.size(); ++mask) {
    int row = m - std::popcount(mask), p = 0;
    for (int j = 0; j < m; ++j) {
      if (!(mask & (1u << j))) continue;
      unsigned rest = mask & ~(1u << j);
      Var term = rest == 0 ? a[row * m + j] : im.op<Prim::mul>({a[row * m + j], minor[rest]});
      if (p++ == 0)
        minor[mask] = term;
      else
        minor[mask] = p % 2 == 0 ? im.op<Prim::sub>({minor[mask], term})
                                 : im.op<Prim::add>({minor[mask], term});
    }
  }
  im.set_output(n, 0, minor.back());
}

}  // namespace

void add_linalg_rules(Rules& r) {
  r["MatMul"] = matmul;
  r["Gemm"] = gemm;
  r["Einsum"] = einsum;
  r["Det"] = det;
}

}  // namespace ytape::onnx_import
