#pragma once
/// cpu conv2d of one group writing NHWC directly, the wide kernel (more than four input channels;
/// a network's first layer: conv_nhwc_first.hpp): a position's output channels in the vector
/// lanes, every input value broadcast, the input read in place.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_first.hpp"
#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/backends/cpu/detail/pool/pool.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// Most positions per block of the wide direct kernel (`wide_nhwc_row`) on rows `ow` long: with
/// two output channel vectors, 28 accumulators of 32 registers (12 of 16), the weights and the
/// broadcast value. Each step of the depth loads two weight vectors and broadcasts one input per
/// position. With AVX a row of 7 (ResNet-18's last stage) is one block of 14 accumulators, one
/// more register than there are: blocks of 4 and 3 positions had left the FMAs waiting on their
/// latency (the last stage's 3×3 layers gain), while rows of 14 and more, cut into blocks of 7,
/// lost more to the spill than they gained.
constexpr int wide_positions(int ow) { return W >= 16 ? 14 : (ow <= 7 ? ow : 6); }

/// True for the convolutions of one group and more than four input channels, other than an
/// unpadded 1×1 of stride 1 (3×3 and 7×7 of any stride, strided or padded 1×1s), that write NHWC
/// directly with `wide_nhwc_rows`, reading their input in place with no padded copy.
constexpr bool nhwc_direct_wide(const conv_geometry& g) { return g.groups == 1 && g.c > 4 && !nhwc_reads_in_place(g); }

/// True for the grouped convolutions (not depthwise) that the wide kernel runs group by group,
/// writing NHWC: each group's output channels whole vectors, so that no vector holds two
/// groups' channels (ResNeXt's 32 groups from 512 channels on, RegNet's groups of 16 and more
/// with AVX-512). The planar kernels ran them as a GEMM per group on copied planes, far below
/// the FMA rate on 14×14 and 7×7.
constexpr bool nhwc_grouped_wide(const conv_geometry& g) {
  return g.groups > 1 && g.og > 1 && g.og % W == 0 && !(g.kh == 1 && g.kw == 1);
}

/// True for the convolutions (not depthwise) that a cpu kernel can write NHWC: one group read
/// in place as a GEMM over positions (`nhwc_reads_in_place`), a first layer (`nhwc_direct`),
/// the wide direct kernel's (`nhwc_direct_wide`) and the grouped ones it runs group by group.
/// The layouts' roles offer NHWC outputs to these alone, and the kernels check it.
constexpr bool nhwc_writable(const conv_geometry& g) {
  return (g.groups == 1 && (nhwc_reads_in_place(g) || nhwc_direct(g) || nhwc_direct_wide(g))) ||
         nhwc_grouped_wide(g);
}

/// Output channel vectors per group of the wide kernel (all of them with one group).
constexpr int wide_group_vectors(const conv_geometry& g) { return padded_channels(g.og) / W; }

/// Panels of two vectors per group (the last one of an odd count is a single vector).
constexpr int wide_group_panels(const conv_geometry& g) { return (wide_group_vectors(g) + 1) / 2; }

/// Output channels per panel of the wide kernel's packed weights: two vectors.
constexpr int wide_panel() { return 2 * W; }

/// Floats of a convolution's weights packed by `pack_nhwc_hwio`.
constexpr std::size_t wide_taps_floats(const conv_geometry& g) {
  const int panels = g.groups * wide_group_panels(g);
  return static_cast<std::size_t>(panels) * static_cast<std::size_t>(g.k) * wide_panel();
}

/// Packs conv weights [o][c][kh][kw] as panels of two vectors of output channels, each
/// [kh][kw][c][2 · W] (zero past the channels), for `wide_nhwc_row`: the depth loop runs over
/// the channels of one tap, which lie next to each other in an NHWC input, and reads one panel
/// as one stream. Rows of every output channel ([k][o]) put a panel's reads a power of two
/// apart: with 512 channels, 128 bytes of every 2 KB, which fell into 64 of the L2's 1024 sets
/// and missed it (ResNet-18's last layers ran 3.7 times slower than their planar kernel).
/// A grouped convolution's panels are its groups' in turn, each over its group's channels.
inline void pack_nhwc_hwio(const conv_geometry& g, const float* w, float* dst) {
  constexpr int P = wide_panel();
  std::fill(dst, dst + wide_taps_floats(g), 0.f);
  const int cg = g.c / g.groups, og = g.o / g.groups;
  for (int o = 0; o < g.o; ++o) {
    const int group = o / og, local = o % og;
    float* panel = dst + static_cast<std::ptrdiff_t>(group * wide_group_panels(g) + local / P) * g.k * P + local % P;
    for (int ci = 0; ci < cg; ++ci)
      for (int i = 0; i < g.kh; ++i)
        for (int j = 0; j < g.kw; ++j)
          panel[(static_cast<std::ptrdiff_t>(i * g.kw + j) * cg + ci) * P] =
              w[((static_cast<std::ptrdiff_t>(o) * cg + ci) * g.kh + i) * g.kw + j];
  }
}

/// Stores a block of the wide kernel: `tile` holds `ql` positions × `vb` vectors of sums (a
/// row of two vectors per position), written as act(sum + bias + residual) to the NHWC output
/// `y` (the block's first position and vector; positions `o` floats apart); `bias` and
/// `residual` at the same places, or null; the last vector has `n_last` channels. One loop for
/// every geometry: unrolled into each block (one per geometry and block of the row), the
/// epilogue's branches had doubled ResNet-18's code to compile.
template <activation A>
inline void wide_store(const float* tile, int ql, int vb, const float* bias, const float* residual, float lo, float hi,
                       float* y, std::ptrdiff_t o, int n_last) {
  for (int u = 0; u < ql; ++u)
    for (int v = 0; v < vb; ++v) {
      vec acc = simd::load(tile + u * 2 * W + v * W);
      if (bias) acc = acc + simd::load(bias + v * W);
      const std::ptrdiff_t at = u * o + v * W;
      store_nhwc<A>(acc, residual ? residual + at : nullptr, y + at, v + 1 < vb ? W : n_last, lo, hi);
    }
}

/// One input channel of a block of the wide kernel: positions [Lo, Hi) of `acc` (VB vectors
/// each) += the channel's value at each (`x`, positions `Step` floats apart) × its VB weight
/// vectors at `w`. Forced inline, like the blocks that call it (see `wide_nhwc_row`).
template <int Lo, int Hi, std::ptrdiff_t Step, std::size_t QL, std::size_t VB>
__attribute__((always_inline)) inline void wide_channel(vec (&acc)[QL][VB], const float* x, const float* w) {
  vec wk[VB];
#pragma GCC unroll 4
  for (std::size_t v = 0; v < VB; ++v) wk[v] = simd::load(w + v * W);
#pragma GCC unroll 16
  for (int u = Lo; u < Hi; ++u) {
    const vec xv = simd::splat(x[(u - Lo) * Step]);
#pragma GCC unroll 4
    for (std::size_t v = 0; v < VB; ++v) acc[u][v] = simd::fma(xv, wk[v], acc[u][v]);
  }
}

/// Output row `r` of one image of a wide direct convolution (`nhwc_direct_wide`), output
/// channel vectors [v0, v0 + VB) (v0 even): `x` is the input image (NHWC where NhwcIn, else
/// planar), `w` packed by `pack_nhwc_hwio`, `e` with a padded column bias, the residual's row
/// r (NHWC) or none, and activation A; `y` is the output row, NHWC. The row is cut into as few
/// blocks of at most `wide_positions(G.ow)` as it takes, each its own code: the geometry and the
/// block's first position are template arguments, so the offsets of its positions are constants in the
/// instructions (see `depthwise_nhwc_row`) and the taps of a position that fall into the padding
/// are left out at compile time. The weights are read once per block, each tap's channels
/// innermost. Grouped (`nhwc_grouped_wide`): the VB vectors lie in one group, whose input
/// channels alone the depth loop runs.
template <conv_geometry G, bool NhwcIn, int VB, activation A>
inline void wide_nhwc_row(const float* x, const float* w, const epilogue& e, float* y, int r, int v0) {
  constexpr std::ptrdiff_t cs = NhwcIn ? 1 : static_cast<std::ptrdiff_t>(G.h) * G.w;
  constexpr int vpg = wide_group_vectors(G);
  const int group = v0 / vpg, lv0 = v0 % vpg;  // the group, and v0 inside it
  x += static_cast<std::ptrdiff_t>(group) * G.cg * cs;
  constexpr std::ptrdiff_t hs = NhwcIn ? static_cast<std::ptrdiff_t>(G.w) * G.c : G.w, ws = NhwcIn ? G.c : 1;
  constexpr int pitch = wide_panel();
  constexpr int blocks = (G.ow + wide_positions(G.ow) - 1) / wide_positions(G.ow);
  constexpr int QN = (G.ow + blocks - 1) / blocks;  // positions per block; the last may have fewer
  const int n_last = G.og - (lv0 + VB - 1) * W;     // lanes of the last vector that are channels
  int i0 = 0, i1 = G.kh;                             // kernel rows inside the image
  while (i0 < i1 && r * G.sh - G.ph + i0 * G.dh < 0) ++i0;
  while (i1 > i0 && r * G.sh - G.ph + (i1 - 1) * G.dh >= G.h) --i1;
  const float* wv0 = w + static_cast<std::ptrdiff_t>(group * wide_group_panels(G) + lv0 / 2) * G.k * pitch;  // the panel
  // Positions [Q0, Q0 + QL). The block's lambdas are forced inline: clang otherwise left the
  // taps' index-sequence lambda a call, the accumulators in memory behind it, and stored each
  // one after every FMA (LeNet-5 built with clang++-19 ran far slower; GCC inlined them
  // already).
  const auto block = [&]<int Q0, int QL>() __attribute__((always_inline)) {
    vec acc[std::size_t{QL}][std::size_t{VB}];
    for (int u = 0; u < QL; ++u)
      for (int v = 0; v < VB; ++v) acc[u][v] = simd::splat(0.f);
    // Tap column J: positions [lo, hi) of the block read inside the image.
    const auto tap = [&]<int J>(const float* xi, const float* wi) __attribute__((always_inline)) {
      constexpr int col0 = Q0 * G.sw - G.pw + J * G.dw;
      constexpr int lo = std::min(QL, std::max(0, (-col0 + G.sw - 1) / G.sw));
      constexpr int hi = std::max(lo, std::min(QL, (G.w - col0 + G.sw - 1) / G.sw));
      if constexpr (lo < hi) {
        const float* xj = xi + (col0 + lo * G.sw) * ws;
        const float* wj = wi + static_cast<std::ptrdiff_t>(J) * G.cg * pitch;
        // Not unrolled: a few channels (LeNet's 6) were, and GCC then kept the broadcasts that
        // the block's taps share live across them and spilled the accumulators (LeNet-5 was
        // the slower for it).
#pragma GCC unroll 1
        for (int ci = 0; ci < G.cg; ++ci, xj += cs, wj += pitch) wide_channel<lo, hi, G.sw * ws>(acc, xj, wj);
      }
    };
    for (int i = i0; i < i1; ++i) {
      const float* xi = x + static_cast<std::ptrdiff_t>(r * G.sh - G.ph + i * G.dh) * hs;
      const float* wi = wv0 + static_cast<std::ptrdiff_t>(i * G.kw) * G.cg * pitch;
      [&]<int... J>(std::integer_sequence<int, J...>) __attribute__((always_inline)) {
        (tap.template operator()<J>(xi, wi), ...);
      }(std::make_integer_sequence<int, G.kw>{});
    }
    alignas(64) float tile[std::size_t{QL} * 2 * W];
#pragma GCC unroll 16
    for (int u = 0; u < QL; ++u)
#pragma GCC unroll 4
      for (int v = 0; v < VB; ++v) simd::store(tile + u * 2 * W + v * W, acc[u][v]);
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(Q0) * G.o + v0 * W;
    wide_store<A>(tile, QL, VB, e.bias ? e.bias + v0 * W : nullptr, e.residual ? e.residual + at : nullptr, e.lo, e.hi,
                  y + at, G.o, n_last);
  };
  [&]<int... B>(std::integer_sequence<int, B...>) {
    (block.template operator()<B * QN, std::min(QN, G.ow - B * QN)>(), ...);
  }(std::make_integer_sequence<int, blocks>{});
}

/// True where a wide convolution's packed weights outgrow a quarter of a 1 MiB L2: each panel
/// then runs over all the rows before the next, so that its weights stay in L2 (ResNet-18's 256
/// channels on 14×14 have 2.3 MB of weights).
template <conv_geometry G>
constexpr bool wide_pairs_outer() {
  return wide_taps_floats(G) * sizeof(float) > (256u << 10);
}
/// The vectors of the pass of the wide kernel that starts at vector `v`: two, or one where
/// `v` is the last vector of a group with an odd count of them.
template <conv_geometry G>
constexpr int wide_pass_width(int v) {
  constexpr int vpg = wide_group_vectors(G);
  return vpg % 2 == 0 || v % vpg + 2 <= vpg ? 2 : 1;
}
/// The vector that panel `p` (of all groups' panels in turn) starts at.
template <conv_geometry G>
constexpr int wide_panel_vector(int p) {
  return p / wide_group_panels(G) * wide_group_vectors(G) + 2 * (p % wide_group_panels(G));
}
/// Output row `r`, channel vectors [v, v + wide_pass_width(v)) of one image (`wide_nhwc_row`),
/// `y` and `e.residual` at that row.
template <conv_geometry G, bool NhwcIn, activation A>
inline void wide_nhwc_pass(const float* x, const float* w, const epilogue& e, float* y, int r, int v) {
  // A single vector only where a group's vectors are odd: each width is its own code.
  if (wide_pass_width<G>(v) == 2) wide_nhwc_row<G, NhwcIn, 2, A>(x, w, e, y, r, v);
  else if constexpr (wide_group_vectors(G) % 2 == 1) wide_nhwc_row<G, NhwcIn, 1, A>(x, w, e, y, r, v);
}
/// Output rows [r0, r1) of one image of a wide direct convolution (`wide_nhwc_row`), output
/// channel vectors [v0, v1) (v0 even), two vectors at a time, panel by panel where
/// `wide_pairs_outer`; `y` and `e.residual` are whole NHWC images.
template <conv_geometry G, bool NhwcIn, activation A>
inline void wide_nhwc_rows(const float* x, const float* w, const epilogue& e, float* y, int r0, int r1, int v0,
                           int v1) {
  constexpr bool pairs_outer = wide_pairs_outer<G>();
  constexpr std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(G.ow) * G.o;
  const auto pass = [&](int r, int v) {
    epilogue er = e;
    if (e.residual) er.residual = e.residual + r * y_row;
    wide_nhwc_pass<G, NhwcIn, A>(x, w, er, y + r * y_row, r, v);
  };
  if constexpr (pairs_outer) {
    for (int v = v0; v < v1; v += wide_pass_width<G>(v))
      for (int r = r0; r < r1; ++r) pass(r, v);
  } else {
    for (int r = r0; r < r1; ++r)
      for (int v = v0; v < v1; v += wide_pass_width<G>(v)) pass(r, v);
  }
}

/// One thread's share of a wide direct convolution: output rows [r0, r1), channel vectors
/// [v0, v1). An image of few rows (ResNet's 14×14 and 7×7 layers) splits its panels of output
/// channels instead of its rows: 7 rows on two cores are 4 against 3, and each core then keeps
/// only its panels' weights.
struct wide_share {
  int r0 = 0, r1 = 0, v0 = 0, v1 = 0;
};
template <conv_geometry G>
constexpr int wide_panels() {
  return G.groups * wide_group_panels(G);
}
template <conv_geometry G>
constexpr bool wide_by_panels() {
  return G.oh < 16 && wide_panels<G>() >= 2;
}
template <conv_geometry G>
inline int wide_tasks(const state& st, double flops) {
  return tasks_for(flops, st.workers(), wide_by_panels<G>() ? wide_panels<G>() : G.oh);
}
template <conv_geometry G>
constexpr wide_share wide_share_of(int t, int tasks) {
  constexpr int vectors = G.groups * wide_group_vectors(G);
  if (wide_by_panels<G>()) {
    const int p0 = wide_panels<G>() * t / tasks, p1 = wide_panels<G>() * (t + 1) / tasks;
    return {0, G.oh, wide_panel_vector<G>(p0), p1 == wide_panels<G>() ? vectors : wide_panel_vector<G>(p1)};
  }
  return {row_share(G.oh, t, tasks), row_share(G.oh, t + 1, tasks), 0, vectors};
}

/// One image of a wide direct convolution into NHWC `y` (`wide_nhwc_rows`), its rows or panels
/// shared out among `tasks` threads (`wide_share_of`).
template <conv_geometry G, bool NhwcIn, activation A>
inline void wide_nhwc_image(state& st, int tasks, const float* x, const float* w, const epilogue& e, float* y) {
  st.parallel(tasks, [&](int t) {
    const wide_share s = wide_share_of<G>(t, tasks);
    wide_nhwc_rows<G, NhwcIn, A>(x, w, e, y, s.r0, s.r1, s.v0, s.v1);
  });
}

/// True where a wide convolution with a planar result transposes each row as it is computed,
/// from a row of scratch that stays in L1: images split by rows whose weights stay in L2. The
/// others (small images split by panels, or weights run panel by panel) go through a whole
/// image of sums.
template <conv_geometry G>
constexpr bool wide_planar_by_rows() {
  return !wide_by_panels<G>() && !wide_pairs_outer<G>();
}
/// Scratch of `wide_conv_planar`: shared (a whole image of sums) and per thread (a row).
template <conv_geometry G>
constexpr std::size_t wide_planar_shared() {
  return wide_planar_by_rows<G>() ? 0 : static_cast<std::size_t>(G.o) * G.oh * G.ow;
}
template <conv_geometry G>
constexpr std::size_t wide_planar_per_thread() {
  return wide_planar_by_rows<G>() ? static_cast<std::size_t>(G.o) * G.ow : 0;
}

/// A wide direct convolution writing a planar result from NHWC images (NhwcIn: a chain's last,
/// or one with a planar residual) or planar ones (small images): the sums and bias in scratch,
/// NHWC, then transposed with the residual and activation A (`nhwc_to_planar`). Copying the
/// input into padded planes for the planar kernels had cost ResNet's 56×56 block a fifth of
/// its second convolution (W3); transposing a whole image of sums after the kernel instead of
/// each row as it is computed, a sixth.
template <conv_geometry G, bool NhwcIn, activation A>
inline void wide_conv_planar(state& st, const float* x, const float* packed, const float* residual, const epilogue& e,
                             float* out) {
  constexpr int n = G.oh * G.ow;
  constexpr int vectors = padded_channels(G.o) / W;
  const std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(G.c) * G.h * G.w;
  const std::ptrdiff_t out_image = static_cast<std::ptrdiff_t>(G.o) * n;
  const int tasks = wide_tasks<G>(st, 2.0 * G.o * G.k * n);
  epilogue plain = e;
  plain.residual = nullptr;
  for (int b = 0; b < G.batch; ++b) {
    const float* xb = x + b * in_image;
    const float* rb = residual ? residual + b * out_image : nullptr;
    float* yb = out + b * out_image;
    if constexpr (wide_planar_by_rows<G>()) {
      st.parallel(tasks, [&](int t) {
        float* sums = st.thread_scratch(t);
        for (int r = row_share(G.oh, t, tasks); r < row_share(G.oh, t + 1, tasks); ++r) {
          for (int v = 0; v < vectors; v += 2) wide_nhwc_pass<G, NhwcIn, activation::none>(xb, packed, plain, sums, r, v);
          const std::ptrdiff_t p0 = static_cast<std::ptrdiff_t>(r) * G.ow;
          nhwc_to_planar<A>(sums, G.o, G.ow, n, rb ? rb + p0 : nullptr, e.lo, e.hi, yb + p0);
        }
      });
    } else {
      float* sums = st.shared_scratch();
      const int blocks = (n + W - 1) / W;
      const int copy_tasks = tasks_for(moved_cost * static_cast<double>(out_image), st.workers(), blocks);
      wide_nhwc_image<G, NhwcIn, activation::none>(st, tasks, xb, packed, plain, sums);
      st.parallel(copy_tasks, [&](int t) {
        const std::ptrdiff_t p0 = static_cast<std::ptrdiff_t>(blocks * t / copy_tasks) * W;
        const std::ptrdiff_t p1 = std::min<std::ptrdiff_t>(n, static_cast<std::ptrdiff_t>(blocks * (t + 1) / copy_tasks) * W);
        nhwc_to_planar<A>(sums + p0 * G.o, G.o, p1 - p0, n, rb ? rb + p0 : nullptr, e.lo, e.hi, yb + p0);
      });
    }
  }
}

/// A wide direct convolution followed by a max (Max) or average pooling, with a planar result
/// and no residual (`cpu.conv2d_bias_act_pool` on LeNet's 6 → 16 5×5): the activated sums of an
/// image go NHWC into `sums` (`G.oh · G.ow · G.o` floats), are pooled there, a position's
/// channels a run of whole vectors (`pool2d_nhwc`), into `pooled` (NHWC, `p`'s output), and
/// only the pooled values are transposed into `out`. Transposing the whole image before pooling
/// it had read each sum twice more and gathered four times as many values.
template <conv_geometry G, bool NhwcIn, activation A, bool Max>
inline void wide_conv_pooled(state& st, const float* x, const float* packed, const epilogue& e, pool_geometry p,
                             float* sums, float* pooled, float* out) {
  const std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(G.c) * G.h * G.w;
  const std::ptrdiff_t pooled_image = static_cast<std::ptrdiff_t>(G.o) * p.oh * p.ow;
  const int tasks = wide_tasks<G>(st, 2.0 * G.o * G.k * G.oh * G.ow);
  p.planes = G.o;  // the channels of one NHWC image
  epilogue plain = e;
  plain.residual = nullptr;
  for (int b = 0; b < G.batch; ++b) {
    wide_nhwc_image<G, NhwcIn, A>(st, tasks, x + b * in_image, packed, plain, sums);
    pool2d_nhwc<Max>(p, sums, pooled, 0, p.oh);
    nhwc_to_planar<activation::none>(pooled, G.o, p.oh * p.ow, p.oh * p.ow, nullptr, 0.f, 0.f, out + b * pooled_image);
  }
}

}  // namespace partita::detail::cpu
