// The fused attention kernels (runtime/kernels/flash_attention.h) against a naive
// reference that writes the whole score matrix and sums in long double, against finite
// differences, and at two thread counts.
#include "runtime/kernels/flash_attention.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/parallel.h"

namespace ytape {

namespace {

using kernels::attention_backward;
using kernels::attention_forward;
using kernels::AttentionDims;

using Real = long double;
constexpr Real kInf = std::numeric_limits<Real>::infinity();

using MaskFn = std::function<bool(int64_t j, int64_t i)>;

// One problem: sizes, a mask and inputs exact in f32, so that the f32 kernel and the
// reference see the same numbers.
struct Problem {
  AttentionDims n;
  std::unique_ptr<bool[]> mask;
  std::vector<double> q, k, v, dout;
};

std::vector<double> random_values(int64_t size, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> x(static_cast<size_t>(size));
  for (double& e : x) e = static_cast<float>(dist(rng));
  return x;
}

Problem make_problem(AttentionDims n, const MaskFn& sees, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Problem p{n, std::make_unique<bool[]>(n.tk * n.tq), {}, {}, {}, {}};
  for (int64_t i = 0; i < n.tq; ++i) {
    for (int64_t j = 0; j < n.tk; ++j) p.mask[j + n.tk * i] = sees(j, i);
  }
  p.q = random_values(n.d * n.tq * n.batch, rng);
  p.k = random_values(n.d * n.tk * n.batch, rng);
  p.v = random_values(n.dv * n.tk * n.batch, rng);
  p.dout = random_values(n.dv * n.tq * n.batch, rng);
  return p;
}

bool all(int64_t, int64_t) {
  return true;
}
bool causal(int64_t j, int64_t i) {
  return j <= i;
}

MaskFn random_mask(double density, uint64_t seed) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [rng, density](int64_t, int64_t) {
    return std::uniform_real_distribution<double>(0, 1)(*rng) < density;
  };
}

struct Result {
  std::vector<Real> out, lse, dq, dk, dv;
};

// The whole score column of each query, its softmax, and the gradient formulas of the
// header, term by term in long double. A query that sees no key: NaN out, -inf lse, no
// gradient.
Result reference(const Problem& p) {
  const AttentionDims& n = p.n;
  Result r;
  r.out.assign(n.dv * n.tq * n.batch, 0);
  r.lse.assign(n.tq * n.batch, 0);
  r.dq.assign(n.d * n.tq * n.batch, 0);
  r.dk.assign(n.d * n.tk * n.batch, 0);
  r.dv.assign(n.dv * n.tk * n.batch, 0);
  std::vector<Real> s(n.tk), prob(n.tk);
  for (int64_t b = 0; b < n.batch; ++b) {
    const double* q = p.q.data() + n.d * n.tq * b;
    const double* k = p.k.data() + n.d * n.tk * b;
    const double* v = p.v.data() + n.dv * n.tk * b;
    const double* dout = p.dout.data() + n.dv * n.tq * b;
    Real* out = r.out.data() + n.dv * n.tq * b;
    Real* dq = r.dq.data() + n.d * n.tq * b;
    Real* dk = r.dk.data() + n.d * n.tk * b;
    Real* dv = r.dv.data() + n.dv * n.tk * b;
    for (int64_t i = 0; i < n.tq; ++i) {
      Real m = -kInf;
      for (int64_t j = 0; j < n.tk; ++j) {
        s[j] = -kInf;
        if (!p.mask[j + n.tk * i]) continue;
        s[j] = 0;
        for (int64_t c = 0; c < n.d; ++c) s[j] += Real(k[c + n.d * j]) * q[c + n.d * i];
        m = std::max(m, s[j]);
      }
      if (m == -kInf) {
        for (int64_t c = 0; c < n.dv; ++c) out[c + n.dv * i] = NAN;
        r.lse[i + n.tq * b] = -kInf;
        continue;
      }
      Real l = 0;
      for (int64_t j = 0; j < n.tk; ++j) l += std::exp(s[j] - m);
      r.lse[i + n.tq * b] = m + std::log(l);
      for (int64_t j = 0; j < n.tk; ++j) {
        prob[j] = std::exp(s[j] - m) / l;
        for (int64_t c = 0; c < n.dv; ++c) out[c + n.dv * i] += prob[j] * v[c + n.dv * j];
      }
      Real delta = 0;
      for (int64_t c = 0; c < n.dv; ++c) delta += dout[c + n.dv * i] * out[c + n.dv * i];
      for (int64_t j = 0; j < n.tk; ++j) {
        Real dp = 0;
        for (int64_t c = 0; c < n.dv; ++c) dp += Real(v[c + n.dv * j]) * dout[c + n.dv * i];
        const Real ds = prob[j] * (dp - delta);
        for (int64_t c = 0; c < n.d; ++c) {
          dq[c + n.d * i] += ds * k[c + n.d * j];
          dk[c + n.d * j] += ds * q[c + n.d * i];
        }
        for (int64_t c = 0; c < n.dv; ++c) dv[c + n.dv * j] += prob[j] * dout[c + n.dv * i];
      }
    }
  }
  return r;
}

template <class T>
struct Outputs {
  std::vector<T> out, lse, dq, dk, dv;
};

template <class T>
std::vector<T> cast(const std::vector<double>& x) {
  return std::vector<T>(x.begin(), x.end());
}

// The kernels in T, the backward from the forward's own out and lse.
template <class T>
Outputs<T> run(const Problem& p, const std::vector<double>& dout) {
  const AttentionDims& n = p.n;
  const std::vector<T> q = cast<T>(p.q), k = cast<T>(p.k), v = cast<T>(p.v), dy = cast<T>(dout);
  Outputs<T> o;
  o.out.resize(n.dv * n.tq * n.batch);
  o.lse.resize(n.tq * n.batch);
  o.dq.assign(n.d * n.tq * n.batch, T(7));  // overwritten, not accumulated
  o.dk.assign(n.d * n.tk * n.batch, T(7));
  o.dv.assign(n.dv * n.tk * n.batch, T(7));
  attention_forward(q.data(), k.data(), v.data(), p.mask.get(), o.out.data(), o.lse.data(), n);
  attention_backward(q.data(), k.data(), v.data(), p.mask.get(), o.out.data(), o.lse.data(),
                     dy.data(), o.dq.data(), o.dk.data(), o.dv.data(), n);
  return o;
}

// The largest |got - want| / (|want| + mean |want|) (the mean keeps elements near 0
// within reach of the whole tensor's rounding); NaN and infinities must match exactly.
template <class T>
double worst_error(const std::vector<T>& got, const std::vector<Real>& want) {
  REQUIRE(got.size() == want.size());
  Real mean = 0;
  for (Real w : want) mean += std::isfinite(w) ? std::abs(w) : 0;
  mean /= static_cast<Real>(std::max<size_t>(want.size(), 1));
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (Real(got[i]) == want[i]) continue;
    if (!std::isfinite(want[i])) {
      const bool same = std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i];
      worst = same ? worst : kInf;
      continue;
    }
    const Real err = std::abs(Real(got[i]) - want[i]) / (std::abs(want[i]) + mean);
    worst = std::isnan(err) ? kInf : std::max(worst, static_cast<double>(err));
  }
  return worst;
}

// tol for out and lse; the gradients sum products of dS = P ⊙ (dP - D), which cancel,
// and in f32 carry the rounding of the recomputed S (1.4e-5 measured): 3 tol.
template <class T>
void check_against_reference(const Problem& p, const Result& want, double tol) {
  const Outputs<T> got = run<T>(p, p.dout);
  const struct {
    const char* name;
    const std::vector<T>& got;
    const std::vector<Real>& want;
    double tol;
  } checks[] = {{"out", got.out, want.out, tol},
                {"lse", got.lse, want.lse, tol},
                {"dq", got.dq, want.dq, 3 * tol},
                {"dk", got.dk, want.dk, 3 * tol},
                {"dv", got.dv, want.dv, 3 * tol}};
  for (const auto& c : checks) {
    const std::string tensor = c.name;
    const double error = worst_error(c.got, c.want);
    CAPTURE(tensor);
    CAPTURE(error);
    CHECK(error <= c.tol);
  }
}

void check_both(const Problem& p) {
  CAPTURE(p.n.d);
  CAPTURE(p.n.dv);
  CAPTURE(p.n.tq);
  CAPTURE(p.n.tk);
  CAPTURE(p.n.batch);
  const Result want = reference(p);
  std::string type = "f64";
  CAPTURE(type);
  check_against_reference<double>(p, want, 1e-12);
  type = "f32";
  check_against_reference<float>(p, want, 1e-5);
}

}  // namespace

TEST_CASE("flash attention: one query, one key, one feature") {
  check_both(make_problem({1, 1, 1, 1, 1}, all, 1));
}

TEST_CASE("flash attention: small odd sizes, all keys seen") {
  check_both(make_problem({3, 5, 7, 11, 2}, all, 2));
}

TEST_CASE("flash attention: causal, d = 64, 256 queries and keys, 3 slices") {
  check_both(make_problem({64, 64, 256, 256, 3}, causal, 3));
}

TEST_CASE("flash attention: more keys than queries, causal from the last query") {
  // Query i sees the keys up to its position in the whole sequence, i + (tk - tq), as a
  // decoder does with cached keys.
  check_both(make_problem(
      {16, 24, 100, 150, 2}, [](int64_t j, int64_t i) { return j <= i + 50; }, 4));
}

TEST_CASE("flash attention: more queries than keys, causal") {
  check_both(make_problem({16, 8, 150, 100, 2}, causal, 5));
}

TEST_CASE("flash attention: no mask, tails in every dim") {
  check_both(make_problem({128, 65, 70, 130, 2}, all, 6));
}

TEST_CASE("flash attention: random masks") {
  check_both(make_problem({5, 7, 90, 130, 2}, random_mask(0.5, 7), 8));
  check_both(make_problem({17, 3, 130, 90, 2}, random_mask(0.03, 9), 10));
}

TEST_CASE("flash attention: a random mask too large to keep as tiles of scores") {
  // 23 x 23 blocks of 64 x 64 covered in part: 17 MB of tiles in f64, past the kernel's
  // 16 MB, so every block is masked element by element.
  const Problem p = make_problem({2, 3, 1472, 1472, 1}, random_mask(0.5, 17), 18);
  check_against_reference<double>(p, reference(p), 1e-12);
}

TEST_CASE("flash attention: a query that sees no key gives NaN, -inf lse and no gradient") {
  // Query 5 sees nothing, nor do queries 64..69 (a whole block of queries).
  const MaskFn sees = [](int64_t j, int64_t i) { return i != 5 && i < 64 && j <= i + 3; };
  Problem p = make_problem({8, 6, 70, 90, 2}, sees, 11);
  check_both(p);
  // Their dout is NaN, as it is downstream of a NaN output: the others' gradients hold.
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i : {5, 64, 69}) {
      for (int64_t c = 0; c < 6; ++c) p.dout[c + 6 * (i + 70 * b)] = NAN;
    }
  }
  const Result want = reference(p);
  const Outputs<double> got = run<double>(p, p.dout);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i : {5, 64, 69}) {
      CHECK(std::isnan(got.out[6 * (i + 70 * b)]));
      CHECK(got.lse[i + 70 * b] == -std::numeric_limits<double>::infinity());
      for (int64_t c = 0; c < 8; ++c) CHECK(got.dq[c + 8 * (i + 70 * b)] == 0);
    }
  }
  CHECK(worst_error(got.dk, want.dk) <= 1e-12);
  CHECK(worst_error(got.dv, want.dv) <= 1e-12);
  CHECK(worst_error(got.dq, want.dq) <= 1e-12);
}

TEST_CASE("flash attention: the backward is the derivative of Σ w ⊙ out") {
  // Every query sees at least key 0.
  const MaskFn sees = [rng = random_mask(0.6, 12)](int64_t j, int64_t i) {
    return j == 0 || rng(j, i);
  };
  Problem p = make_problem({3, 4, 5, 6, 2}, sees, 13);
  const AttentionDims& n = p.n;
  const Outputs<double> got = run<double>(p, p.dout);  // dout = w
  auto loss = [&] {
    std::vector<double> out(n.dv * n.tq * n.batch), lse(n.tq * n.batch);
    attention_forward(p.q.data(), p.k.data(), p.v.data(), p.mask.get(), out.data(), lse.data(), n);
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i) sum += p.dout[i] * out[i];
    return sum;
  };
  const struct {
    const char* name;
    std::vector<double>& x;
    const std::vector<double>& grad;
  } inputs[] = {{"q", p.q, got.dq}, {"k", p.k, got.dk}, {"v", p.v, got.dv}};
  constexpr double h = 1e-6;
  for (const auto& in : inputs) {
    double mean = 0;
    for (double g : in.grad) mean += std::abs(g) / static_cast<double>(in.grad.size());
    for (size_t i = 0; i < in.x.size(); ++i) {
      const double x = in.x[i];
      in.x[i] = x + h;
      const double up = loss();
      in.x[i] = x - h;
      const double down = loss();
      in.x[i] = x;
      const double fd = (up - down) / (2 * h);
      const std::string input = in.name;
      CAPTURE(input);
      CAPTURE(i);
      CHECK(std::abs(fd - in.grad[i]) <= 1e-6 * (std::abs(in.grad[i]) + mean));
    }
  }
}

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
void check_thread_invariance(const Problem& p) {
  const int saved = num_threads();
  set_num_threads(1);
  const Outputs<T> one = run<T>(p, p.dout);
  set_num_threads(2);
  const Outputs<T> two = run<T>(p, p.dout);
  set_num_threads(saved);
  CHECK(same_bits(one.out, two.out));
  CHECK(same_bits(one.lse, two.lse));
  CHECK(same_bits(one.dq, two.dq));
  CHECK(same_bits(one.dk, two.dk));
  CHECK(same_bits(one.dv, two.dv));
}

}  // namespace

TEST_CASE("flash attention gives the same bits at 1 and 2 threads") {
  const Problem causal_problem = make_problem({64, 32, 200, 256, 5}, causal, 14);
  check_thread_invariance<float>(causal_problem);
  check_thread_invariance<double>(causal_problem);
  check_thread_invariance<float>(make_problem({7, 9, 130, 70, 3}, random_mask(0.3, 15), 16));
}

}  // namespace ytape
