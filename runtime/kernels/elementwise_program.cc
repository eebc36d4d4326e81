#include "runtime/kernels/elementwise_program.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernels/common.h"
#include "runtime/layout.h"
#include "runtime/parallel.h"

namespace ytape::kernels {

namespace {

// Elements per block: a slot holds a block of the widest elements (8 bytes) in 4 KiB, so
// that a program's slots stay in L1 from one op to the next.
constexpr int64_t kBlock = 512;
constexpr int kMaxRank = ElementwiseProgram::kMaxGatherRank;
constexpr int kMaxGathered = ElementwiseProgram::kMaxGathered;

// A broadcast argument's elements in the order of the output's positions: an odometer over
// `size` (first dim fastest) whose offset into the argument moves by `stride` elements
// along each dim, 0 where it broadcasts. Dims of one are dropped and neighbours merged, so
// that the first dim's stride is 0 (a value repeated) or 1 (a contiguous run): the dims
// before the first one the output has are ones in the argument too.
struct Broadcast {
  const char* data = nullptr;
  int elem = 0;
  int rank = 0;
  int64_t size[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};

  void push(int64_t n, int64_t s) {
    if (n == 1) return;
    if (rank > 0 && s == stride[rank - 1] * size[rank - 1]) {
      size[rank - 1] *= n;
      return;
    }
    if (rank == kMaxRank)
      internal_error("elementwise group: broadcast over more than {} dims", kMaxRank);
    size[rank] = n, stride[rank] = s, ++rank;
  }
};

// `a` broadcast to the plain output `out` (Julia's rule: each of its dims 1 or the output's).
Broadcast plain_broadcast(const Tensor& a, const Tensor& out) {
  Broadcast b{static_cast<const char*>(a.raw()), dtype_size(a.dtype())};
  int64_t contiguous = 1;
  for (int d = 1; d <= out.rank(); ++d) {
    b.push(out.dim(d), a.dim(d) == 1 ? 0 : contiguous);
    contiguous *= a.dim(d);
  }
  return b;
}

// A per-channel vector over a blocked image (W, H, C, N) whose blocks hold `block` channels:
// position c%B + B*(w + W*(h + H*(c/B + C/B*n))) reads channel c (runtime/layout.h).
Broadcast channel_broadcast(const Tensor& a, const Tensor& out, int64_t block) {
  Broadcast b{static_cast<const char*>(a.raw()), dtype_size(a.dtype())};
  b.push(block, 1);
  b.push(out.dim(1) * out.dim(2), 0);
  b.push(out.dim(3) / block, block);
  b.push(out.dim(4), 0);
  return b;
}

template <typename U>
YTAPE_ROW_TARGETS void fill(char* to, const char* from, int64_t n) {
  U v;
  std::memcpy(&v, from, sizeof v);
  U* o = reinterpret_cast<U*>(to);
  for (int64_t i = 0; i < n; ++i) o[i] = v;
}

void fill_run(char* to, const char* from, int64_t n, int elem) {
  if (elem == 8) return fill<uint64_t>(to, from, n);
  if (elem == 4) return fill<uint32_t>(to, from, n);
  if (elem == 2) return fill<uint16_t>(to, from, n);
  std::memset(to, *from, static_cast<size_t>(n));
}

// The elements of b for the n output positions from `begin`, and their step (0: one
// value for all): read in place where the block is within one run of its first dim (a
// per-row statistic over a row longer than a block), else written to `to`.
const char* gather(const Broadcast& b, int64_t begin, int64_t n, char* to, int64_t* step) {
  int64_t index[kMaxRank];
  int64_t offset = 0;
  for (int d = 0; d < b.rank; ++d) {
    index[d] = begin % b.size[d];
    begin /= b.size[d];
    offset += index[d] * b.stride[d];
  }
  *step = 1;
  if (b.size[0] - index[0] >= n) {
    *step = b.stride[0];
    return b.data + offset * b.elem;
  }
  char* const start = to;
  while (n > 0) {
    const int64_t run = std::min(b.size[0] - index[0], n);
    const char* from = b.data + offset * b.elem;
    if (b.stride[0] != 0) {
      std::memcpy(to, from, static_cast<size_t>(run * b.elem));
    } else {
      fill_run(to, from, run, b.elem);
    }
    to += run * b.elem;
    n -= run;
    index[0] += run;
    offset += run * b.stride[0];
    for (int d = 0; d + 1 < b.rank && index[d] == b.size[d]; ++d) {
      offset += b.stride[d + 1] - index[d] * b.stride[d];
      index[d] = 0;
      ++index[d + 1];
    }
  }
  return start;
}

// Whether every block's elements of b are its first `kBlock` elements' (a prefix of them
// for the last, shorter block): b repeats a vector shorter than a block whose length
// divides kBlock (a bias over rows of 128), and blocks start at multiples of kBlock.
bool same_in_every_block(const Broadcast& b) {
  return b.rank == 2 && b.stride[0] == 1 && b.stride[1] == 0 && b.size[0] < kBlock &&
         kBlock % b.size[0] == 0;
}

// Where the program finds each argument: `bytes` apart per output position from `data`
// (its element size, or 0 for a single element), or gathered into buffer `gathered`.
struct Source {
  const char* data = nullptr;
  int64_t bytes = 0;
  int gathered = -1;
};

struct Sources {
  Source of[ElementwiseProgram::kMaxArgs];
  Broadcast broadcasts[kMaxGathered];
  int gathered = 0;
  /// Per broadcast argument: its elements for a block, where they are the same in every
  /// block (same_in_every_block); else empty.
  std::vector<char> tiles[kMaxGathered];
  char* outs[1 + ElementwiseProgram::kMaxOutputs];
  int out_elem[1 + ElementwiseProgram::kMaxOutputs];
};

Sources sources_of(const KernelCall& call) {
  const Tensor& out = *call.outs[0];
  const Layout layout = call.out_layout(0);
  Sources s;
  if (call.outs.size() > 1 + ElementwiseProgram::kMaxOutputs) {
    internal_error("elementwise group: {} outputs", call.outs.size());
  }
  for (size_t i = 0; i < call.outs.size(); ++i) {
    s.outs[i] = static_cast<char*>(call.outs[i]->raw());
    s.out_elem[i] = dtype_size(call.outs[i]->dtype());
  }
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor& a = *call.args[i];
    if (a.size() == out.size() || a.size() == 1) {
      s.of[i] = {static_cast<const char*>(a.raw()), a.size() == 1 ? 0 : dtype_size(a.dtype())};
      continue;
    }
    if (s.gathered == kMaxGathered) {
      internal_error("elementwise group: more than {} broadcast arguments", kMaxGathered);
    }
    s.of[i].gathered = s.gathered;
    const Broadcast& b = s.broadcasts[s.gathered] =
        is_blocked(layout) ? channel_broadcast(a, out, block_of(layout)) : plain_broadcast(a, out);
    if (same_in_every_block(b)) {
      std::vector<char>& tile = s.tiles[s.gathered];
      tile.resize(static_cast<size_t>(kBlock * b.elem));
      int64_t step;
      gather(b, 0, kBlock, tile.data(), &step);
    }
    ++s.gathered;
  }
  return s;
}

// The program over elements [begin, end) of the outputs, block by block: every op of a
// block reads its elements before the last op writes them, so the first output may take
// an argument's buffer.
void run_program(const KernelCall& call, const Sources& s, int64_t begin, int64_t end) {
  const ElementwiseProgram& p = *call.program;
  alignas(64) char slots[ElementwiseProgram::kMaxSlots][kBlock * 8];
  alignas(64) char gathered[kMaxGathered][kBlock * 8];
  for (int64_t b = begin; b < end; b += kBlock) {
    const int64_t n = std::min(kBlock, end - b);
    // Where a result of this block is: its slot, or its place in an output.
    auto result = [&](int slot) {
      return slot >= 0 ? slots[slot] : s.outs[-1 - slot] + b * s.out_elem[-1 - slot];
    };
    const void* broadcast[kMaxGathered];
    int64_t broadcast_step[kMaxGathered];
    for (int g = 0; g < s.gathered; ++g) {
      broadcast_step[g] = 1;
      broadcast[g] = !s.tiles[g].empty()
                         ? s.tiles[g].data()
                         : gather(s.broadcasts[g], b, n, gathered[g], &broadcast_step[g]);
    }
    for (const ElementwiseProgram::Instruction& ins : p.instructions) {
      const void* in[3];
      int64_t step[3];
      for (int a = 0; a < ins.num_args; ++a) {
        const ElementwiseProgram::Operand& o = ins.args[a];
        if (o.result) {
          in[a] = result(p.instructions[o.index].slot);
          step[a] = 1;
          continue;
        }
        const Source& source = s.of[o.index];
        if (source.gathered >= 0) {
          in[a] = broadcast[source.gathered];
          step[a] = broadcast_step[source.gathered];
        } else {
          in[a] = source.data + source.bytes * b;
          step[a] = source.bytes != 0;
        }
      }
      ins.row(result(ins.slot), in, step, n);
    }
  }
}

}  // namespace

// Split across threads where a single op would be: waking them costs microseconds, which
// the optimizer's programs over a few thousand weights would not win back.
void elementwise_program(const KernelCall& call) {
  const int64_t n = call.outs[0]->size();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  const Sources s = sources_of(call);
  parallel_for(blocks, kGrain / kBlock, [&](int64_t b, int64_t e) {
    run_program(call, s, b * kBlock, std::min(e * kBlock, n));
  });
}

}  // namespace ytape::kernels
