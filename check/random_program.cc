#include "check/random_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tape/error.h"

namespace ytape::check {

namespace {

// The helpers every program defines; the body of `f` may call them.
constexpr const char* kHelpers = R"(# helpers
h(a, b) = a * tanh(b) + 0.5 * a
function g(v, n)
  acc = 0.0 .* v
  for i in 1:n
    acc = acc .+ v ./ i
  end
  return acc
end
struct Affine
  w
  b
end
(m::Affine)(v) = m.w .* v .+ m.b
)";

// Writes one program. Expressions are of two sorts, vectors of the example's length and
// numbers, each drawn to a depth; statements bind fresh names, which later draws read.
class ProgramGen {
 public:
  ProgramGen(const Choose& choose, int length) : choose_(choose), n_(length) {
    vecs_.push_back("x");
  }

  std::string make(int statements) {
    std::string body;
    for (int k = 0; k < statements; ++k) body += statement();
    std::string ret = "sum(x)";
    for (const std::string& v : bound_vecs_) ret += fmt::format(" + sum({})", v);
    for (const std::string& s : bound_nums_) ret += " + " + s;
    std::string example;
    for (int i = 0; i < n_; ++i) {
      example +=
          fmt::format("{}{:.2f}", i > 0 ? ", " : "", static_cast<double>(pick(401)) / 100 - 2);
    }
    return fmt::format("{}\nfunction f(x)\n{}  return {}\nend\n\nx = [{}]\n", kHelpers, body, ret,
                       example);
  }

 private:
  uint64_t pick(uint64_t n) { return n <= 1 ? 0 : choose_(n) % n; }
  template <class T>
  T one_of(std::initializer_list<T> items) {
    return items.begin()[pick(items.size())];
  }
  std::string any_vec() { return vecs_[pick(vecs_.size())]; }
  std::string fresh(char sort) { return fmt::format("{}{}", sort, ++names_); }
  std::string bind_vec(std::string name) {
    vecs_.push_back(name);
    bound_vecs_.push_back(name);
    return name;
  }
  std::string bind_num(std::string name) {
    nums_.push_back(name);
    bound_nums_.push_back(name);
    return name;
  }

  std::string vec(int depth) {
    if (depth == 0 || pick(5) == 0) return any_vec();
    auto v = [&] { return vec(depth - 1); };
    auto s = [&] { return num(depth - 1); };
    int h = n_ / 2;
    switch (pick(16)) {
      case 0:
        return fmt::format("{}.({})", one_of({"tanh", "abs", "relu", "sigmoid", "softplus"}), v());
      case 1:  // bounded arguments: sin of a large value is beyond finite differences
        return fmt::format("{}.(tanh.({}))", one_of({"exp", "sin", "cos"}), v());
      case 2:
        return fmt::format("log.({} .^ 2 .+ 1)", v());
      case 3:
        return fmt::format("sqrt.({0} .* {0} .+ 1)", any_vec());
      case 4:
        return fmt::format("({} {} {})", v(), one_of({".+", ".-", ".*", "+", "-"}), v());
      case 5:
        return fmt::format("({} ./ ({} .^ 2 .+ 1))", v(), v());
      case 6:
        return pick(2) ? fmt::format("({} .* {})", s(), v()) : fmt::format("({} .+ {})", v(), s());
      case 7:
        return fmt::format("{}.({}, {})", one_of({"max", "min", "h"}), v(), v());
      case 8:
        return fmt::format("ifelse({0} .> {1}, {0}, {1})", any_vec(), any_vec());
      case 9:
        return pick(2) ? fmt::format("[{}[i] * i for i in 1:{}]", any_vec(), n_)
                       : fmt::format("[{}[{} + 1 - i] for i in 1:{}]", any_vec(), n_, n_);
      case 10:
        return fmt::format("{}[[{}]]", any_vec(), permutation());
      case 11:
        return fmt::format("vcat({}[1:{}], {}[{}:end])", any_vec(), h, any_vec(), h + 1);
      case 12:  // (h x 2) * (2 x 2) is n values again
        return fmt::format("reshape(reshape({}, 2, {})' * reshape({}[1:4], 2, 2), {})", any_vec(),
                           h, any_vec(), n_);
      case 13:
        return pick(2) ? fmt::format("map(t -> t * t - {}, {})", s(), v())
                       : fmt::format("softmax({})", v());
      case 14:
        if (pick(2)) return fmt::format("g({}, {})", v(), 1 + pick(3));
        // names only: @. would broadcast a sum(v) inside a drawn expression too
        return fmt::format("(@. {} * tanh({}) + 0.5 * {})", any_vec(), any_vec(), any_vec());
      default:
        return fmt::format("Affine({}, {})({})", v(), s(), v());
    }
  }

  std::string num(int depth) {
    if (depth == 0 || pick(4) == 0) {
      if (!nums_.empty() && pick(2)) return nums_[pick(nums_.size())];
      return fmt::format("{}[{}]", any_vec(), 1 + pick(static_cast<uint64_t>(n_)));
    }
    auto v = [&] { return vec(depth - 1); };
    auto s = [&] { return num(depth - 1); };
    switch (pick(14)) {
      case 0:
        return fmt::format("{}({})", one_of({"sum", "maximum", "minimum", "mean"}), v());
      case 1:
        return pick(2) ? fmt::format("{}[end]", any_vec())
                       : fmt::format("({}'{})", any_vec(), any_vec());
      case 2:
        return fmt::format("sum({}[2:3])", any_vec());
      case 3:
        return fmt::format("prod({}[1:2])", any_vec());
      case 4:
        return fmt::format("({} {} {})", s(), one_of({"+", "-", "*"}), s());
      case 5:
        return fmt::format("({} / ({}^2 + 1))", s(), s());
      case 6:
        return pick(2) ? fmt::format("{}({})", one_of({"tanh", "abs", "sigmoid"}), s())
                       : fmt::format("sin(2 * tanh({}))", s());
      case 7:
        return fmt::format("log(1 + {}^2)", s());
      case 8:
        return fmt::format("{}({}, {})", one_of({"max", "min", "h"}), s(), s());
      case 9:
        return fmt::format("sum({}, {})", one_of({"abs2", "t -> tanh(t)", "t -> t * 0.5"}), v());
      case 10:
        return fmt::format("foldl((a, b) -> a * 0.5 + b, ({}, {}, {}))", s(), s(), s());
      case 11:
        return fmt::format("ifelse({0} > {1}, {0}, {1})", s(), s());
      case 12:
        return fmt::format("({} > 2 ? {} : {})", one_of({"length(x)", "ndims(x)", "size(x, 1)"}),
                           s(), s());
      default:
        return fmt::format("(2.5 * {})", s());
    }
  }

  std::string permutation() {
    std::vector<int> p(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i) p[static_cast<size_t>(i)] = i + 1;
    for (size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[pick(i)]);
    return fmt::format("{}", fmt::join(p, ", "));
  }

  // One statement of f's body, ending in a newline.
  std::string statement() {
    const int d = 3;
    switch (pick(10)) {
      case 0: {  // a loop that updates a vector, over a static range
        std::string e = vec(d), name = bind_vec(fresh('v'));
        return fmt::format(
            "  {0} = {1}\n  {4}for i in 1:{2}\n    {0} = {0} .* 0.5 .+ {3} ./ i\n  end\n", name, e,
            1 + pick(3), vec(1), pick(2) ? "@inbounds " : "");
      }
      case 1: {  // a while loop on a static counter
        std::string e = vec(d), name = bind_vec(fresh('v')), k = fresh('k');
        return fmt::format(
            "  {0} = {1}\n  {2} = 0\n  while {2} < {3}\n    {0} = {0} .+ 0.25 .* tanh.({0})\n"
            "    {2} += 1\n  end\n",
            name, e, k, 1 + pick(2));
      }
      case 2: {  // a conditional on a static value
        std::string a = num(d), b = num(d), name = bind_num(fresh('s'));
        return fmt::format("  if length(x) {} {}\n    {} = {}\n  else\n    {} = {}\n  end\n",
                           one_of({">", "<", "=="}), n_ - 1 + static_cast<int>(pick(3)), name, a,
                           name, b);
      }
      case 3: {  // a tuple, destructured
        std::string a = num(d), b = vec(d);
        std::string s = bind_num(fresh('s')), v = bind_vec(fresh('v'));
        return fmt::format("  ({}, {}) = ({}, {})\n", s, v, a, b);
      }
      case 4: {
        std::string e = num(d), name = bind_num(fresh('s'));
        return fmt::format("  {} = let t = {}\n    t * t + t\n  end\n", name, e);
      }
      case 5: {  // a struct and its fields
        std::string a = vec(d), b = num(d), p = fresh('p'), name = bind_num(fresh('s'));
        return fmt::format("  {0} = Affine({1}, {2})\n  {3} = {0}.b * sum({0}.w)\n", p, a, b, name);
      }
      case 6: {  // an update of a bound name
        if (bound_nums_.empty() || pick(2)) {
          if (bound_vecs_.empty()) break;
          return fmt::format("  {} += {}\n", bound_vecs_[pick(bound_vecs_.size())], vec(d));
        }
        return fmt::format("  {} += {}\n", bound_nums_[pick(bound_nums_.size())], num(d));
      }
      case 7: {  // a closure over a number
        std::string c = fresh('c'), e = num(d), over = vec(d), name = bind_vec(fresh('v'));
        return fmt::format("  {0} = t -> t * {1}\n  {2} = map({0}, {3})\n", c, e, name, over);
      }
      case 8: {  // an assertion on a traced value, guarded
        std::string e = num(d);
        return fmt::format("  @assert abs({}) >= 0 \"never fails\"\n", e);
      }
      default:
        break;
    }
    if (pick(2)) {
      std::string e = num(d);
      return fmt::format("  {} = {}\n", bind_num(fresh('s')), e);
    }
    std::string e = vec(d);
    return fmt::format("  {} = {}\n", bind_vec(fresh('v')), e);
  }

  const Choose& choose_;
  int n_;
  int names_ = 0;
  std::vector<std::string> vecs_, nums_;              // names the body may read
  std::vector<std::string> bound_vecs_, bound_nums_;  // names it bound, all summed at the end
};

}  // namespace

std::string random_program(const Choose& choose, const RandomProgramOptions& options) {
  if (options.length < 4 || options.length % 2 != 0) {
    internal_error("random programs take an even length of at least 4");
  }
  return ProgramGen(choose, options.length).make(options.statements);
}

}  // namespace ytape::check
