// Fused attention (flash_attention.h). Every product is a small matrix product
// C (+)= A B with A's columns contiguous, done by one register-tiled kernel (matmul)
// vectorized over C's rows. The forward takes the scores as Sᵀ = Qᵀ K, from the block of
// queries transposed, so that the online softmax runs vertically over the queries (no sum
// or maximum across a vector), then O += V P. The backward takes S = Kᵀ Q and dP = Vᵀ dO,
// from the key block's keys and values transposed, then dV += dO Pᵀ, dK += Q dSᵀ and
// dQ += K dS; its elementwise steps need no reduction.
#include "runtime/kernels/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernels/common.h"
#include "runtime/kernels/fast_math.h"
#include "runtime/parallel.h"

namespace ytape::kernels {

namespace {

// Queries and keys per block: a 64 x 64 tile of f32 scores is 16 KB and stays in L1 with
// the slices of K and V it meets; smaller blocks spend more on the softmax's rescaling.
constexpr int64_t kBlockQ = 64;
constexpr int64_t kBlockK = 64;
// Multiply-adds below which a thread is not worth waking (a few microseconds' work; on a
// busy machine, waking one for a tiny problem took milliseconds).
constexpr int64_t kThreadWork = int64_t{1} << 18;

// Items per thread for parallel_for, given the multiply-adds of one.
int64_t grain(int64_t work) {
  return kThreadWork / std::max<int64_t>(work, 1) + 1;
}

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();

int64_t block_count(int64_t size, int64_t block) {
  return (size + block - 1) / block;
}

inline float exp_of(float x) {
  return exp_f32(x);
}
inline double exp_of(double x) {
  return std::exp(x);
}

// N elements; 64 bytes (the default) are one AVX-512 register, two under AVX2, four in the
// baseline.
template <class T, int N = 64 / sizeof(T)>
struct Vec {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};

// Columns [0, NR) of rows [0, MV vectors) of C = (add ? C : 0) + A B, summed in registers
// (4 x 4 tiles: 16 of AVX-512's 32) over p in order. B's element (p, j) is
// b[p * sbp + j * sbj].
template <class T, int MV, int NR>
inline __attribute__((always_inline)) void tile(int64_t k, const T* a, int64_t lda, const T* b,
                                                int64_t sbp, int64_t sbj, T* c, int64_t ldc,
                                                bool add) {
  using V = typename Vec<T>::type;
  constexpr int64_t kW = sizeof(V) / sizeof(T);
  V acc[NR][MV];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 8
    for (int u = 0; u < MV; ++u) {
      acc[r][u] = V{};
      if (add) std::memcpy(&acc[r][u], c + r * ldc + u * kW, sizeof(V));
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    V col[MV];
#pragma GCC unroll 8
    for (int u = 0; u < MV; ++u) std::memcpy(&col[u], a + p * lda + u * kW, sizeof(V));
#pragma GCC unroll 8
    for (int r = 0; r < NR; ++r) {
      const T x = b[p * sbp + r * sbj];
#pragma GCC unroll 8
      for (int u = 0; u < MV; ++u) acc[r][u] += col[u] * x;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 8
    for (int u = 0; u < MV; ++u) std::memcpy(c + r * ldc + u * kW, &acc[r][u], sizeof(V));
  }
}

template <class T, int MV>
inline __attribute__((always_inline)) void tile_row(int64_t n, int64_t k, const T* a, int64_t lda,
                                                    const T* b, int64_t sbp, int64_t sbj, T* c,
                                                    int64_t ldc, bool add) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    tile<T, MV, 4>(k, a, lda, b + j * sbj, sbp, sbj, c + j * ldc, ldc, add);
  for (; j < n; ++j) tile<T, MV, 1>(k, a, lda, b + j * sbj, sbp, sbj, c + j * ldc, ldc, add);
}

// C (m x n, column stride ldc) = (add ? C : 0) + A B, with A (m x k) of column stride lda
// and B's element (p, j) at b[p * sbp + j * sbj]: tiles of 4 vectors of rows, then single
// vectors, then the last rows one by one. Each element sums over p in order.
template <class T>
YTAPE_ROW_TARGETS void matmul(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                              int64_t sbp, int64_t sbj, T* c, int64_t ldc, bool add) {
  constexpr int64_t kW = sizeof(typename Vec<T>::type) / sizeof(T);
  int64_t i = 0;
  for (; i + 4 * kW <= m; i += 4 * kW)
    tile_row<T, 4>(n, k, a + i, lda, b, sbp, sbj, c + i, ldc, add);
  for (; i + 2 * kW <= m; i += 2 * kW)
    tile_row<T, 2>(n, k, a + i, lda, b, sbp, sbj, c + i, ldc, add);
  for (; i + kW <= m; i += kW) tile_row<T, 1>(n, k, a + i, lda, b, sbp, sbj, c + i, ldc, add);
  for (; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = add ? c[i + j * ldc] : T(0);
      for (int64_t p = 0; p < k; ++p) sum += a[i + p * lda] * b[p * sbp + j * sbj];
      c[i + j * ldc] = sum;
    }
  }
}

// y[c + ldy * r] = x[r + rows * c]: x (rows x cols) transposed, in 4 x 4 tiles of
// shuffles (a third of the time of element by element), the edges element by element.
template <class T>
YTAPE_ROW_TARGETS void transpose(const T* x, int64_t rows, int64_t cols, T* y, int64_t ldy) {
  using V4 = typename Vec<T, 4>::type;
  int64_t c = 0;
  for (; c + 4 <= cols; c += 4) {
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      V4 a, b, e, f;
      std::memcpy(&a, x + r + rows * c, sizeof(V4));
      std::memcpy(&b, x + r + rows * (c + 1), sizeof(V4));
      std::memcpy(&e, x + r + rows * (c + 2), sizeof(V4));
      std::memcpy(&f, x + r + rows * (c + 3), sizeof(V4));
      const V4 ab0 = __builtin_shufflevector(a, b, 0, 4, 1, 5);
      const V4 ab1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
      const V4 ef0 = __builtin_shufflevector(e, f, 0, 4, 1, 5);
      const V4 ef1 = __builtin_shufflevector(e, f, 2, 6, 3, 7);
      const V4 out[4] = {__builtin_shufflevector(ab0, ef0, 0, 1, 4, 5),
                         __builtin_shufflevector(ab0, ef0, 2, 3, 6, 7),
                         __builtin_shufflevector(ab1, ef1, 0, 1, 4, 5),
                         __builtin_shufflevector(ab1, ef1, 2, 3, 6, 7)};
      for (int u = 0; u < 4; ++u) std::memcpy(y + c + ldy * (r + u), &out[u], sizeof(V4));
    }
    for (; r < rows; ++r) {
      for (int64_t u = c; u < c + 4; ++u) y[u + ldy * r] = x[r + rows * u];
    }
  }
  for (; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) y[c + ldy * r] = x[r + rows * c];
  }
}

// Masks the scores of a block pair, s[i * si + j * sj] for bq queries and bk keys: adds
// -inf where the query does not see the key. No branch: on a causal mask's diagonal it
// would be mispredicted at every row.
template <class T>
void apply_mask(const bool* mask, int64_t tk, int64_t bq, int64_t bk, T* s, int64_t si,
                int64_t sj) {
  const T bias[2] = {-kInf<T>, T(0)};
  for (int64_t i = 0; i < bq; ++i) {
    for (int64_t j = 0; j < bk; ++j) s[i * si + j * sj] += bias[mask[j + tk * i]];
  }
}

template <class T>
YTAPE_ROW_TARGETS void add(T* x, const T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

// Whether a block of queries sees none, some or all of a block of keys.
enum class Cover : uint8_t { none, some, all };

// The cover of every (key block, query block) pair and, for those covered in part, the
// mask as a tile of scores to add (0 or -inf, element (i, j) at i * si + j * sj, 0 past the
// edges), made once for all slices: masking element by element, per slice, cost the
// forward 6% (causal, 256 queries). Past kMaxTileBytes (a random mask of 2048 x 2048 in
// f32) it keeps no tiles and the kernels mask element by element.
template <class T>
class BlockMask {
 public:
  BlockMask(const bool* mask, int64_t tk, int64_t tq, int64_t si, int64_t sj)
      : key_blocks_(block_count(tk, kBlockK)),
        cover_(key_blocks_ * block_count(tq, kBlockQ)),
        tile_(cover_.size(), -1) {
    int64_t some = 0;
    for (int64_t qb = 0; qb * kBlockQ < tq; ++qb) {
      const int64_t i0 = qb * kBlockQ, bq = std::min(kBlockQ, tq - i0);
      for (int64_t kb = 0; kb < key_blocks_; ++kb) {
        const int64_t j0 = kb * kBlockK, bk = std::min(kBlockK, tk - j0);
        int64_t seen = 0;
        for (int64_t i = i0; i < i0 + bq; ++i) {
          seen += std::count(mask + j0 + tk * i, mask + j0 + tk * i + bk, true);
        }
        const int64_t at = kb + key_blocks_ * qb;
        cover_[at] = seen == 0 ? Cover::none : seen == bq * bk ? Cover::all : Cover::some;
        if (cover_[at] == Cover::some) tile_[at] = some++;
      }
    }
    if (some * kTile * static_cast<int64_t>(sizeof(T)) > kMaxTileBytes) {
      std::fill(tile_.begin(), tile_.end(), -1);
      return;
    }
    tiles_.assign(some * kTile, T(0));
    for (size_t at = 0; at < tile_.size(); ++at) {
      if (tile_[at] < 0) continue;
      const int64_t j0 = (at % key_blocks_) * kBlockK, i0 = (at / key_blocks_) * kBlockQ;
      apply_mask(mask + j0 + tk * i0, tk, std::min(kBlockQ, tq - i0), std::min(kBlockK, tk - j0),
                 tiles_.data() + tile_[at] * kTile, si, sj);
    }
  }
  Cover at(int64_t kb, int64_t qb) const { return cover_[kb + key_blocks_ * qb]; }
  /// The tile of a pair covered in part, or null.
  const T* tile(int64_t kb, int64_t qb) const {
    const int64_t t = tile_[kb + key_blocks_ * qb];
    return t < 0 ? nullptr : tiles_.data() + t * kTile;
  }

 private:
  static constexpr int64_t kTile = kBlockQ * kBlockK;
  static constexpr int64_t kMaxTileBytes = int64_t{1} << 24;
  int64_t key_blocks_;
  std::vector<Cover> cover_;
  std::vector<int64_t> tile_;
  std::vector<T> tiles_;
};

// One key block's step of the online softmax, over a tile of scores St (bq queries by bk
// keys, queries contiguous, so that every step is vertical over queries): takes
// the new running maxima m', replaces St by e^(S - m') and sets shrink to e^(m - m'), by
// which each query's sum l (updated here) and output so far shrink. Until a query sees a
// key its m stays -inf, and its e^ are taken from 0 instead, all 0 (e^(-inf - -inf) would
// be NaN). Each query sums its keys in order.
template <class T>
YTAPE_ROW_TARGETS void online_softmax_step(T* st, int64_t bq, int64_t bk, T* m, T* l, T* shrink) {
  T top[kBlockQ], base[kBlockQ], sum[kBlockQ];
  std::copy_n(m, bq, top);
  for (int64_t j = 0; j < bk; ++j) {
    const T* s = st + kBlockQ * j;
    for (int64_t i = 0; i < bq; ++i) top[i] = s[i] > top[i] ? s[i] : top[i];
  }
  for (int64_t i = 0; i < bq; ++i) {
    base[i] = top[i] == -kInf<T> ? T(0) : top[i];
    sum[i] = 0;
  }
  for (int64_t j = 0; j < bk; ++j) {
    T* s = st + kBlockQ * j;
    for (int64_t i = 0; i < bq; ++i) {
      s[i] = exp_of(s[i] - base[i]);
      sum[i] += s[i];
    }
  }
  for (int64_t i = 0; i < bq; ++i) {
    shrink[i] = exp_of(m[i] - base[i]);
    l[i] = l[i] * shrink[i] + sum[i];
    m[i] = top[i];
  }
}

template <class T>
YTAPE_ROW_TARGETS void scale(T* x, int64_t n, T factor) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

template <class T>
YTAPE_ROW_TARGETS void divide(const T* x, int64_t n, T by, T* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / by;
}

// ---- forward: one block of queries of one slice against every key block it sees

template <class T>
struct Forward {
  const T *q, *k, *v;
  const bool* mask;
  T *out, *lse;
  AttentionDims n;
  BlockMask<T> blocks;
};

// One thread's scratch: the block of queries transposed (kBlockQ, d), a tile of scores
// and then of P (kBlockQ, kBlockK), the outputs so far (dv, kBlockQ), per query m, l and
// the factor of the last step.
template <class T>
struct ForwardScratch {
  explicit ForwardScratch(const AttentionDims& n)
      : qt(kBlockQ * n.d), st(kBlockQ * kBlockK), acc(n.dv * kBlockQ) {}
  std::vector<T> qt, st, acc;
  T m[kBlockQ], l[kBlockQ], shrink[kBlockQ];
};

template <class T>
void forward_block(const Forward<T>& f, int64_t b, int64_t qb, ForwardScratch<T>& w) {
  const AttentionDims& n = f.n;
  const int64_t i0 = qb * kBlockQ, bq = std::min(kBlockQ, n.tq - i0);
  const T* k = f.k + b * n.tk * n.d;
  const T* v = f.v + b * n.tk * n.dv;
  T* st = w.st.data();
  T* acc = w.acc.data();
  transpose(f.q + (b * n.tq + i0) * n.d, n.d, bq, w.qt.data(), kBlockQ);
  std::fill_n(w.m, bq, -kInf<T>);
  std::fill_n(w.l, bq, T(0));
  std::fill_n(acc, n.dv * bq, T(0));
  for (int64_t kb = 0; kb * kBlockK < n.tk; ++kb) {
    const Cover cover = f.blocks.at(kb, qb);
    if (cover == Cover::none) continue;
    const int64_t j0 = kb * kBlockK, bk = std::min(kBlockK, n.tk - j0);
    matmul(bq, bk, n.d, w.qt.data(), kBlockQ, k + n.d * j0, 1, n.d, st, kBlockQ, false);
    if (cover == Cover::some) {
      if (const T* tile = f.blocks.tile(kb, qb)) {
        add(st, tile, kBlockQ * bk);
      } else {
        apply_mask(f.mask + j0 + n.tk * i0, n.tk, bq, bk, st, 1, kBlockQ);
      }
    }
    online_softmax_step(st, bq, bk, w.m, w.l, w.shrink);
    for (int64_t i = 0; i < bq; ++i) {
      if (w.shrink[i] != T(1)) scale(acc + n.dv * i, n.dv, w.shrink[i]);
    }
    matmul(n.dv, bq, bk, v + n.dv * j0, n.dv, st, kBlockQ, 1, acc, n.dv, true);
  }
  // A query that saw no key has acc = l = 0 and m = -inf: NaN output, lse -inf.
  T* out = f.out + (b * n.tq + i0) * n.dv;
  for (int64_t i = 0; i < bq; ++i) {
    divide(acc + n.dv * i, n.dv, w.l[i], out + n.dv * i);
    f.lse[b * n.tq + i0 + i] = w.m[i] + std::log(w.l[i]);
  }
}

// ---- backward: one slice, key blocks outside, the query blocks that see them inside

template <class T>
struct Backward {
  const T *q, *k, *v;
  const bool* mask;
  const T *out, *lse, *dout;
  T *dq, *dk, *dv;
  AttentionDims n;
  BlockMask<T> blocks;
};

// One thread's scratch: a key block's keys and values transposed (kBlockK, d) and
// (kBlockK, dv), tiles of P and of dP then dS (kBlockK, kBlockQ), per query of the slice
// its lse and D, and dout with the columns of queries that see no key zeroed.
template <class T>
struct BackwardScratch {
  explicit BackwardScratch(const AttentionDims& n)
      : kt(kBlockK * n.d),
        vt(kBlockK * n.dv),
        p(kBlockK * kBlockQ),
        ds(kBlockK * kBlockQ),
        lse(n.tq),
        delta(n.tq) {}
  std::vector<T> kt, vt, p, ds, lse, delta, dout;
};

// Over a tile of bk keys by bq queries (keys contiguous, masked): P = e^(S - lse) in place
// of S, and dS = P ⊙ (dP - D) in place of dP.
template <class T>
YTAPE_ROW_TARGETS void score_gradients(T* p, T* dp, int64_t bk, int64_t bq, const T* lse,
                                       const T* delta) {
  for (int64_t i = 0; i < bq; ++i) {
    T* s = p + kBlockK * i;
    T* g = dp + kBlockK * i;
    for (int64_t j = 0; j < bk; ++j) {
      s[j] = exp_of(s[j] - lse[i]);
      g[j] = s[j] * (g[j] - delta[i]);
    }
  }
}

// Per query its D and lse, as used by the blocks. A query that sees no key gets lse +inf
// (so P = e^(S - inf) = 0), D = 0 and a zero dout (NaN there would reach dK and dV
// through 0 * NaN). Returns the slice's dout to use.
template <class T>
const T* prepare_queries(const Backward<T>& g, int64_t b, BackwardScratch<T>& w) {
  const AttentionDims& n = g.n;
  const T* out = g.out + b * n.tq * n.dv;
  const T* dout = g.dout + b * n.tq * n.dv;
  bool blind = false;
  for (int64_t i = 0; i < n.tq; ++i) {
    T sum = 0;
    for (int64_t c = 0; c < n.dv; ++c) sum += dout[c + n.dv * i] * out[c + n.dv * i];
    const T lse = g.lse[b * n.tq + i];
    blind = blind || lse == -kInf<T>;
    w.lse[i] = lse == -kInf<T> ? kInf<T> : lse;
    w.delta[i] = lse == -kInf<T> ? T(0) : sum;
  }
  if (!blind) return dout;
  w.dout.assign(dout, dout + n.tq * n.dv);
  for (int64_t i = 0; i < n.tq; ++i) {
    if (w.lse[i] == kInf<T>) std::fill_n(w.dout.data() + n.dv * i, n.dv, T(0));
  }
  return w.dout.data();
}

// dq, dk, dv of one slice: each key block's dk and dv sum over the query blocks in order,
// each query block's dq over the key blocks in order.
template <class T>
void backward_slice(const Backward<T>& g, int64_t b, BackwardScratch<T>& w) {
  const AttentionDims& n = g.n;
  const T* dout = prepare_queries(g, b, w);
  const T* q = g.q + b * n.tq * n.d;
  const T* k = g.k + b * n.tk * n.d;
  T* dq = g.dq + b * n.tq * n.d;
  T* dk = g.dk + b * n.tk * n.d;
  T* dv = g.dv + b * n.tk * n.dv;
  std::fill_n(dq, n.tq * n.d, T(0));
  std::fill_n(dk, n.tk * n.d, T(0));
  std::fill_n(dv, n.tk * n.dv, T(0));
  T* p = w.p.data();
  T* ds = w.ds.data();
  for (int64_t kb = 0; kb * kBlockK < n.tk; ++kb) {
    const int64_t j0 = kb * kBlockK, bk = std::min(kBlockK, n.tk - j0);
    transpose(k + n.d * j0, n.d, bk, w.kt.data(), kBlockK);
    transpose(g.v + (b * n.tk + j0) * n.dv, n.dv, bk, w.vt.data(), kBlockK);
    for (int64_t qb = 0; qb * kBlockQ < n.tq; ++qb) {
      const Cover cover = g.blocks.at(kb, qb);
      if (cover == Cover::none) continue;
      const int64_t i0 = qb * kBlockQ, bq = std::min(kBlockQ, n.tq - i0);
      matmul(bk, bq, n.d, w.kt.data(), kBlockK, q + n.d * i0, 1, n.d, p, kBlockK, false);
      matmul(bk, bq, n.dv, w.vt.data(), kBlockK, dout + n.dv * i0, 1, n.dv, ds, kBlockK, false);
      if (cover == Cover::some) {
        if (const T* tile = g.blocks.tile(kb, qb)) {
          add(p, tile, kBlockK * bq);
        } else {
          apply_mask(g.mask + j0 + n.tk * i0, n.tk, bq, bk, p, kBlockK, 1);
        }
      }
      score_gradients(p, ds, bk, bq, w.lse.data() + i0, w.delta.data() + i0);
      matmul(n.dv, bk, bq, dout + n.dv * i0, n.dv, p, kBlockK, 1, dv + n.dv * j0, n.dv, true);
      matmul(n.d, bk, bq, q + n.d * i0, n.d, ds, kBlockK, 1, dk + n.d * j0, n.d, true);
      matmul(n.d, bq, bk, k + n.d * j0, n.d, ds, 1, kBlockK, dq + n.d * i0, n.d, true);
    }
  }
}

}  // namespace

template <class T>
void attention_forward(const T* q, const T* k, const T* v, const bool* mask, T* out, T* lse,
                       const AttentionDims& n) {
  BlockMask<T> blocks(mask, n.tk, n.tq, 1, kBlockQ);
  const Forward<T> f{q, k, v, mask, out, lse, n, std::move(blocks)};
  const int64_t query_blocks = block_count(n.tq, kBlockQ);
  const int64_t work = std::min(n.tq, kBlockQ) * n.tk * (n.d + n.dv);
  parallel_for(n.batch * query_blocks, grain(work), [&](int64_t begin, int64_t end) {
    ForwardScratch<T> w(n);
    for (int64_t t = begin; t < end; ++t) forward_block(f, t / query_blocks, t % query_blocks, w);
  });
}

template <class T>
void attention_backward(const T* q, const T* k, const T* v, const bool* mask, const T* out,
                        const T* lse, const T* dout, T* dq, T* dk, T* dv, const AttentionDims& n) {
  BlockMask<T> blocks(mask, n.tk, n.tq, kBlockK, 1);
  const Backward<T> g{q, k, v, mask, out, lse, dout, dq, dk, dv, n, std::move(blocks)};
  parallel_for(n.batch, grain(n.tq * n.tk * (n.d + n.dv)), [&](int64_t begin, int64_t end) {
    BackwardScratch<T> w(n);
    for (int64_t b = begin; b < end; ++b) backward_slice(g, b, w);
  });
}

template void attention_forward<float>(const float*, const float*, const float*, const bool*,
                                       float*, float*, const AttentionDims&);
template void attention_forward<double>(const double*, const double*, const double*, const bool*,
                                        double*, double*, const AttentionDims&);
template void attention_backward<float>(const float*, const float*, const float*, const bool*,
                                        const float*, const float*, const float*, float*, float*,
                                        float*, const AttentionDims&);
template void attention_backward<double>(const double*, const double*, const double*, const bool*,
                                         const double*, const double*, const double*, double*,
                                         double*, double*, const AttentionDims&);

}  // namespace ytape::kernels
