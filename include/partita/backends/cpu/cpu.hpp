#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "partita/backend/cost.hpp"
#include "partita/backend/step.hpp"
#include "partita/backends/cpu/detail/conv.hpp"
#include "partita/backends/cpu/detail/conv_small.hpp"
#include "partita/backends/cpu/detail/dense.hpp"
#include "partita/backends/cpu/detail/eltwise.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/thread_pool.hpp"
#include "partita/backends/cpu/patterns.hpp"
#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/reference.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/detail/aligned_buffer.hpp"
#include "partita/ir/view.hpp"

#if defined(PARTITA_CPU_OPENMP)
#include <omp.h>
#endif

namespace partita {
namespace detail::cpu {

/// Work below this many flops per extra thread runs on one thread: waking a core costs more.
inline constexpr double min_flops_per_task = 4.0e5;

inline int tasks_for(double flops, int threads, int units) {
  int t = static_cast<int>(flops / min_flops_per_task);
  t = std::min({t, threads, units});
  return t < 1 ? 1 : t;
}

}  // namespace detail::cpu

/// The host backend for x86 and ARM CPUs: xsimd-vectorized kernels for every op, GEMM-based
/// dense and conv2d with weights packed at `bind`, and composites (`cpu_patterns`) fused into
/// one kernel: conv2d or dense, then bias and/or batch norm (folded into the weights at bind),
/// a residual add and an activation. Builds for the instruction set of the compiler flags
/// (`-march=native`). Threads: a persistent pool of `threads()` workers (by default one per
/// core in the process's CPU affinity mask), started with the executable, each step split
/// statically so that a core sees the same slice every call; small steps run on one core. A
/// worker that is late (its core busy with other work) does not hold a step up: the caller runs
/// its slice instead.
struct cpu {
  static constexpr fixed_string name = "cpu";
  static constexpr bool host = true;
  static constexpr bool supports(const op_view&) { return true; }
  using patterns = cpu_patterns;
  static constexpr bool fuses(std::string_view composite) { return composite.starts_with("cpu."); }
  /// For cost-based partitioning: one AVX-512 core's GEMM rate as measured in
  /// `benchmarks/runtime` (in a network, with cold weights), memory traffic from L3, and the
  /// fixed cost of a step. `tune` replaces these estimates with measurements.
  static constexpr throughput speed = {.gflops = 90, .gbytes_per_s = 40, .call_ns = 300};

  /// Packed weights, scratch memory and the thread pool of one executable.
  class state {
   public:
    /// Starts the pool's workers (one thread per core this process may use, see
    /// `detail::available_cores`): they sleep until the first parallel step.
    state() : threads_(default_threads()) { start_pool(); }

    /// Number of threads used by `run` (0: every core the process may use). Takes effect at
    /// once; call it outside `run`.
    void set_threads(int n) {
      threads_ = n > 0 ? n : default_threads();
      pool_.reset();
      start_pool();
      grow_scratch(per_thread_floats_);
    }
    int threads() const { return threads_; }

    /// A state with this one's threads (the same pool) and nothing prepared: `bind` prepares
    /// into it and keeps it only if every step accepts its weights.
    state fork() const {
      state s(threads_, pool_);
      return s;
    }

    /// Bytes this state holds: packed weights and scratch.
    std::size_t resident_bytes() const {
      std::size_t n = shared_.size();
      for (const auto& p : packed_) n += p.size();
      for (const auto& p : scratch_) n += p.size();
      return n;
    }

    /// Called by the executable before another backend's step: the pool's workers stop
    /// spinning, leaving the cores to it (oneDNN's OpenMP threads, a device driver).
    void rest() {
      if (pool_) pool_->rest();
    }

    // Used by the kernels.
    float* reserve(int step, std::size_t n) {
      if (packed_.size() <= static_cast<std::size_t>(step)) packed_.resize(static_cast<std::size_t>(step) + 1);
      auto& p = packed_[static_cast<std::size_t>(step)];
      if (p.size() < n * sizeof(float)) p = detail::aligned_buffer(n * sizeof(float));
      return p.floats();
    }
    float* packed(int step) const { return packed_[static_cast<std::size_t>(step)].floats(); }
    void need_scratch(std::size_t shared, std::size_t per_thread) {
      if (shared_.size() < shared * sizeof(float)) shared_ = detail::aligned_buffer(shared * sizeof(float));
      per_thread_floats_ = std::max(per_thread_floats_, per_thread);
      grow_scratch(per_thread_floats_);
    }
    float* shared_scratch() const { return shared_.floats(); }
    float* thread_scratch(int t) const { return scratch_[static_cast<std::size_t>(t)].floats(); }
    template <class F>
    void parallel(int tasks, F&& f) {
#if defined(PARTITA_CPU_OPENMP)
      // The alternative to the pool, kept for comparison (benchmarks/runtime: bench_runtime_openmp).
      if (threads_ > 1 && tasks > 1) {
        const int n = std::min(tasks, threads_);
#pragma omp parallel num_threads(n)
        f(omp_get_thread_num());
        return;
      }
#endif
      if (pool_ && tasks > 1) {
        pool_->run(std::min(tasks, pool_->size()), f);
      } else {
        f(0);
      }
    }
    int workers() const {
#if defined(PARTITA_CPU_OPENMP)
      return threads_;
#else
      return pool_ ? pool_->size() : 1;
#endif
    }

   private:
#if defined(PARTITA_CPU_OPENMP)
    static constexpr bool use_pool = false;
#else
    static constexpr bool use_pool = true;
#endif
    state(int threads, std::shared_ptr<detail::thread_pool> pool) : threads_(threads), pool_(std::move(pool)) {}
    static int default_threads() { return detail::available_cores(); }
    void start_pool() {
      if (use_pool && threads_ > 1) pool_ = std::make_shared<detail::thread_pool>(threads_);
    }
    void grow_scratch(std::size_t n) {
      const std::size_t want = static_cast<std::size_t>(std::max(threads_, 1));
      if (scratch_.size() < want) scratch_.resize(want);
      for (auto& s : scratch_)
        if (s.size() < n * sizeof(float)) s = detail::aligned_buffer(n * sizeof(float));
    }
    int threads_;
    std::vector<detail::aligned_buffer> packed_;
    detail::aligned_buffer shared_;
    std::vector<detail::aligned_buffer> scratch_;
    std::size_t per_thread_floats_ = 0;
    // Shared with the states `fork` makes for a bind; used by one of them at a time.
    std::shared_ptr<detail::thread_pool> pool_;
  };

  template <class Step>
  struct kernel;
};

namespace detail::cpu {

template <class Step>
constexpr gemm_step analyse() {
  if constexpr (Step::op == op_id::call) {
    return analyse_fused<Step>();
  } else {
    gemm_step g;
    g.main = Step::op;
    return g;
  }
}

/// dense and conv2d steps, alone or fused.
template <class Step>
struct gemm_kernel {
  static constexpr gemm_step info = analyse<Step>();
  static_assert(info.ok, "partita: cpu: this composite (Step) is not one the cpu backend fuses");
  static constexpr bool fused = Step::op == op_id::call;
  static constexpr const graph_node& main = fused ? Step::body(info.main_node) : Step::node;
  static constexpr shape x_shape = fused ? Step::body(Step::body_arg(info.main_node, 0)).out : Step::arg(0).out;
  static constexpr shape w_shape = fused ? Step::body(Step::body_arg(info.main_node, 1)).out : Step::arg(1).out;
  static constexpr shape y_shape = Step::node.out;
  static constexpr bool conv = info.main == op_id::conv2d;
  // Weights are packed at bind when they are bound weights, at every run otherwise.
  static constexpr bool constant_weight = fused || Step::arg(1).op == op_id::weight;
  static constexpr bool has_bias = info.bias >= 0 || info.gamma >= 0;
  /// After `prepare`, `run` reads no weight argument (all are packed), so the executable keeps
  /// no raw copy of them; unless the activations or the residual are weights themselves.
  static constexpr bool packs_weights = constant_weight && Step::arg(info.x).op != op_id::weight &&
                                        (info.residual < 0 || Step::arg(info.residual).op != op_id::weight);
  static constexpr int channels = static_cast<int>(w_shape[0]);  // output channels or units

  // dense
  static constexpr int m_rows = static_cast<int>(conv ? 1 : x_shape.elements() / x_shape.back(0));
  static constexpr int k_depth = static_cast<int>(conv ? 1 : x_shape.back(0));
  using dblk = dense_blocking<(m_rows < 1 ? 1 : m_rows), channels>;
  // conv2d
  static constexpr conv_geometry geo = conv ? make_conv_geometry(x_shape, w_shape, y_shape, *main.at) : conv_geometry{};
  static constexpr auto boff = conv_offsets<static_cast<std::size_t>(geo.k > 0 ? geo.k : 1)>(geo);
  // Small images: vectors of output channels (conv_small.hpp) when that wastes fewer lanes.
  static constexpr int small_nv = geo.og <= W ? 1 : 2;
  static constexpr bool small_image = conv && channels_efficiency(geo, small_nv) > positions_efficiency(geo) + 0.1;
  static constexpr int small_mr = small_conv_rows(geo.oh * geo.ow);
  static constexpr auto positions =
      position_offsets<static_cast<std::size_t>(small_image ? geo.oh * geo.ow : 1)>(small_image ? geo : conv_geometry{});

  static constexpr std::size_t packed_floats =
      !conv        ? packed_dense_floats(channels, k_depth, dblk::nr)
      : small_image ? static_cast<std::size_t>(geo.groups) * packed_dense_floats(geo.og, geo.k, small_nv * W)
                    : packed_conv_floats(geo);
  static constexpr std::size_t bias_floats = has_bias ? static_cast<std::size_t>(channels) + 64 : 0;

  static void pack(float* dst, const float* const* in) {
    if constexpr (info.gamma >= 0) {
      // Fold batch norm: w' = w · s, b' = (b - mean) · s + beta, s = gamma / sqrt(var + eps).
      const std::size_t per = static_cast<std::size_t>(w_shape.elements() / channels);
      std::vector<float> w(in[info.w], in[info.w] + w_shape.elements());
      float* bias = dst + packed_floats;
      for (int o = 0; o < channels; ++o) {
        const double s = static_cast<double>(in[info.gamma][o]) /
                         std::sqrt(static_cast<double>(in[info.var][o]) + static_cast<double>(info.epsilon));
        for (std::size_t i = 0; i < per; ++i) w[o * per + i] = static_cast<float>(w[o * per + i] * s);
        const double b = info.bias >= 0 ? in[info.bias][o] : 0.0;
        bias[o] = static_cast<float>((b - in[info.mean][o]) * s + in[info.beta][o]);
      }
      pack_weights(w.data(), dst);
    } else {
      pack_weights(in[info.w], dst);
      if constexpr (info.bias >= 0) std::copy(in[info.bias], in[info.bias] + channels, dst + packed_floats);
    }
  }

  static void pack_weights(const float* w, float* dst) {
    if constexpr (small_image) {
      const std::size_t per_group = packed_dense_floats(geo.og, geo.k, small_nv * W);
      for (int gr = 0; gr < geo.groups; ++gr)
        pack_dense_weights(w + static_cast<std::size_t>(gr) * geo.og * geo.k, geo.og, geo.k, small_nv * W,
                           dst + gr * per_group);
    } else if constexpr (conv) {
      pack_conv_weights(geo, w, dst);
    } else {
      pack_dense_weights(w, channels, k_depth, dblk::nr, dst);
    }
  }

  static void prepare(partita::cpu::state& st, const float* const* in) {
    float* dst = st.reserve(Step::index, packed_floats + bias_floats);
    if constexpr (small_image) {
      st.need_scratch(geo.buffer_floats, small_conv_scratch(geo.oh * geo.ow, small_mr, small_nv));
    } else if constexpr (conv) {
      st.need_scratch(geo.buffer_floats, 0);
    } else {
      st.need_scratch(0, static_cast<std::size_t>(dblk::mr) * k_depth);
    }
    if constexpr (constant_weight) {
      if (in[info.w]) pack(dst, in);
    }
  }

  static void run(partita::cpu::state& st, const float* const* in, float* out) {
    float* packed = st.packed(Step::index);
    if constexpr (!constant_weight) pack(packed, in);
    epilogue e;
    e.bias = has_bias ? packed + packed_floats : nullptr;
    e.bias_per_row = conv;
    e.act = info.act;
    e.lo = info.lo;
    e.hi = info.hi;
    const float* residual = info.residual >= 0 ? in[info.residual] : nullptr;
    const float* x = in[info.x];
    if constexpr (conv) {
      run_conv(st, x, packed, residual, e, out);
    } else {
      e.residual = residual;
      e.ld_residual = channels;
      constexpr int panels = (channels + dblk::nr - 1) / dblk::nr;
      // A few rows stream their weights: count each weight byte as a few flops of work, so that a
      // 1 MB weight matrix is split across cores even at batch 1.
      constexpr double flops = std::max(2.0 * m_rows * channels * k_depth, 4.0 * sizeof(float) * channels * k_depth);
      const int tasks = tasks_for(flops, st.workers(), panels);
      st.parallel(tasks, [&](int t) {
        const int p0 = panels * t / tasks, p1 = panels * (t + 1) / tasks;
        dense_panels<m_rows, channels>(x, k_depth, packed, channels, out, e, p0, p1, st.thread_scratch(t));
      });
    }
  }

  // conv2d, image by image: copy the image into the padded phase planes (split by channels),
  // then compute its tiles, split statically by positions or by output-channel panels.
  static void run_conv(partita::cpu::state& st, const float* x, const float* packed, const float* residual, epilogue e,
                       float* out) {
    constexpr int n = geo.oh * geo.ow;
    constexpr int tile = small_image ? small_mr : conv_block::nr;       // positions per tile
    constexpr int panel = small_image ? small_nv * W : conv_block::mr;  // output channels per panel
    constexpr int tiles = ((small_image ? n : geo.npos) + tile - 1) / tile;
    constexpr int panels = (geo.og + panel - 1) / panel;
    constexpr double flops = 2.0 * geo.o * geo.k * n;
    const int tasks = tasks_for(flops, st.workers(), tiles * panels);
    // Small images split their output channels (each core keeps its slice of the weights) when
    // there are enough; large ones split their positions when there are plenty.
    const bool by_tiles = small_image ? panels < tasks : tiles >= 8 * tasks || panels < tasks;
    float* buf = st.shared_scratch();
    const std::size_t in_image = static_cast<std::size_t>(geo.c) * geo.h * geo.w;
    const std::size_t out_image = static_cast<std::size_t>(geo.o) * n;
    for (int b = 0; b < geo.batch; ++b) {
      const float* xb = x + b * in_image;
      const int copy_tasks = std::min(tasks, geo.c);
      st.parallel(copy_tasks, [&](int t) {
        conv_copy_input(geo, xb, buf, geo.c * t / copy_tasks, geo.c * (t + 1) / copy_tasks);
      });
      epilogue eb = e;
      eb.residual = residual ? residual + b * out_image : nullptr;
      float* yb = out + b * out_image;
      st.parallel(tasks, [&](int t) {
        const int p0 = by_tiles ? 0 : panels * t / tasks, p1 = by_tiles ? panels : panels * (t + 1) / tasks;
        const int t0 = by_tiles ? tiles * t / tasks : 0, t1 = by_tiles ? tiles * (t + 1) / tasks : tiles;
        for (int gr = 0; gr < geo.groups; ++gr) {
          if constexpr (small_image) {
            small_conv_tiles<small_mr, small_nv>(geo, boff.data(), positions.data(), packed, buf, yb, eb, gr, p0, p1,
                                                 t0, t1, st.thread_scratch(t));
          } else {
            conv_tiles(geo, boff.data(), packed, buf, yb, eb, gr, p0, p1, t0, t1);
          }
        }
      });
    }
  }
};

/// Every other op.
template <class Step>
struct simple_kernel {
  static constexpr const graph_node& n = Step::node;
  static constexpr op_id op = Step::op;
  static constexpr int axis(int a, int rank) { return a < 0 ? a + rank : a; }

  static void run(partita::cpu::state& st, const float* const* in, float* out) {
    if constexpr (is_unary_elementwise(op)) {
      unary(activation_of(op), n.at->lo, n.at->hi, in[0], out, n.out.elements());
    } else if constexpr (is_binary_elementwise(op)) {
      if constexpr (Step::arg(0).out == n.out && Step::arg(1).out == n.out) {
        binary_same_shape(op, in[0], in[1], out, n.out.elements());
      } else {
        on_reference(in, out);  // broadcasting
      }
    } else if constexpr (op == op_id::bias_add) {
      constexpr int a = axis(n.at->axis, n.out.rank);
      channel_affine(in[0], out, product(0, a), n.out[a], product(a + 1, n.out.rank), nullptr, in[1]);
    } else if constexpr (op == op_id::batch_norm) {
      const std::int64_t outer = n.out[0], channels = n.out[1], inner = product(2, n.out.rank);
      for (std::int64_t c = 0; c < channels; ++c) {
        const double s = static_cast<double>(in[1][c]) / std::sqrt(static_cast<double>(in[4][c]) + n.at->epsilon);
        const float scale = static_cast<float>(s);
        const float shift = static_cast<float>(in[2][c] - in[3][c] * s);
        for (std::int64_t o = 0; o < outer; ++o)
          channel_affine(in[0] + (o * channels + c) * inner, out + (o * channels + c) * inner, 1, 1, inner, &scale, &shift);
      }
    } else if constexpr (op == op_id::max_pool2d || op == op_id::avg_pool2d) {
      constexpr pool_geometry g = pool();
      // Planes split across threads when the pooling is large enough to pay for it.
      constexpr double work = 1.0 * g.planes * g.oh * g.ow * g.kh * g.kw;
      const int tasks = tasks_for(work, st.workers(), g.planes);
      bool done = true;
      st.parallel(tasks, [&](int t) {
        pool_geometry part = g;
        const int p0 = g.planes * t / tasks, p1 = g.planes * (t + 1) / tasks;
        part.planes = p1 - p0;
        const bool ok = pool2d<op == op_id::max_pool2d>(part, in[0] + static_cast<std::size_t>(p0) * g.h * g.w,
                                                         out + static_cast<std::size_t>(p0) * g.oh * g.ow);
        if (!ok && t == 0) done = false;
      });
      if (!done) on_reference(in, out);
    } else if constexpr (op == op_id::global_avg_pool2d) {
      const shape& xs = Step::arg(0).out;
      plane_means(in[0], out, xs[0] * xs[1], xs[2] * xs[3]);
    } else if constexpr (op == op_id::softmax) {
      constexpr int a = axis(n.at->axis, n.out.rank);
      if constexpr (a == n.out.rank - 1) {
        softmax_rows(in[0], out, n.out.elements() / n.out[a], n.out[a]);
      } else {
        on_reference(in, out);
      }
    } else if constexpr (op == op_id::concatenate) {
      on_reference(in, out);
    } else {
      static_assert(op == op_id::relu, "partita: the cpu backend has no kernel for this op (Step)");
    }
  }

 private:
  static constexpr std::int64_t product(int from, int to) {
    std::int64_t p = 1;
    for (int i = from; i < to; ++i) p *= n.out[i];
    return p;
  }
  static constexpr pool_geometry pool() {
    const shape& xs = Step::arg(0).out;
    pool_geometry g;
    g.planes = static_cast<int>(xs[0] * xs[1]);
    g.h = static_cast<int>(xs[2]);
    g.w = static_cast<int>(xs[3]);
    g.oh = static_cast<int>(n.out[2]);
    g.ow = static_cast<int>(n.out[3]);
    g.kh = n.at->window[0];
    g.kw = n.at->window[1];
    g.sh = reference_kernels::detail::pool_stride(*n.at, 0);
    g.sw = reference_kernels::detail::pool_stride(*n.at, 1);
    g.ph = n.at->padding[0];
    g.pw = n.at->padding[1];
    g.count_include_pad = n.at->count_include_pad;
    return g;
  }
  // The cases the cpu kernels leave to the reference backend's.
  static void on_reference(const float* const* in, float* out) {
    reference::state none;
    reference::kernel<Step>::run(none, in, out);
  }
};

}  // namespace detail::cpu

template <class Step>
struct cpu::kernel : std::conditional_t<Step::op == op_id::dense || Step::op == op_id::conv2d || Step::op == op_id::call,
                                        detail::cpu::gemm_kernel<Step>, detail::cpu::simple_kernel<Step>> {
  static_assert(Step::node.type == dtype::f32,
                "partita: the cpu backend has f32 kernels only; this step (Step) has another dtype");
};

}  // namespace partita
