#pragma once
/// The cpu backend (the host): xsimd kernels for every op and fused GEMM composites.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "partita/backend/cost.hpp"
#include "partita/runtime/step_ref.hpp"
#include "partita/backends/cpu/detail/attention/attention.hpp"
#include "partita/backends/cpu/detail/conv/conv1d.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise_project.hpp"
#include "partita/backends/cpu/detail/conv/conv_expand_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_transpose.hpp"
#include "partita/backends/cpu/detail/gemm/gemm_kernel.hpp"
#include "partita/backends/cpu/detail/int8/qcomposite.hpp"
#include "partita/backends/cpu/detail/layout_roles.hpp"
#include "partita/backends/cpu/detail/recurrent/recurrent.hpp"
#include "partita/backends/cpu/detail/gemm/matmul.hpp"
#include "partita/backends/cpu/detail/simple_kernel.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/cpu/patterns.hpp"
#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/reference.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/core/detail/aligned_buffer.hpp"
#include "partita/ir/view.hpp"

namespace partita {

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
  /// Steps with the same signature run one kernel; packed weights are kept per step.
  static constexpr bool shares_kernels = true;
  /// For cost-based partitioning: one AVX-512 core's GEMM rate as measured in
  /// `benchmarks/runtime` (in a network, with cold weights), memory traffic from L3, and the
  /// fixed cost of a step. `tune` replaces these estimates with measurements.
  static constexpr throughput speed = {.gflops = 90, .gbytes_per_s = 40, .call_ns = 300};

  /// The layouts of its steps (the plan's `layout_role`): MobileNet-style chains of 1×1 and
  /// depthwise convolutions pass channels-last images, split by rows, from one to the next.
  template <class M, class G>
  static constexpr partita::layout_role layouts(const M& module, const G& flat, int node) {
    return detail::cpu::nhwc_role(module, flat, node);
  }

  /// Packed weights, scratch memory and the thread pool of one executable (`set_threads`,
  /// `threads`, `fork`, `resident_bytes`).
  using state = detail::cpu::state;

  template <class Step>
  struct kernel;

  /// The kernel a step runs and why, as `print(plan)` shows it: dense, conv2d and conv1d steps,
  /// alone or fused, name the one `choose_conv_kernel` or `choose_dense_kernel` picked, matmul
  /// steps `choose_matmul_kernel`'s, pooling steps `choose_pool_kernel`'s, conv_transpose2d, the
  /// fused expansion-depthwise and depthwise-projection pairs (conv_choice.hpp) and the softmax
  /// composites (`choose_attention_kernel`) theirs, each the one their kernel dispatches on;
  /// other steps note nothing.
  template <class Step>
  static constexpr kernel_note note();
};

namespace detail::cpu {
/// The kernel of a step: dense, conv2d and the fused composites run GEMM-based kernels (conv1d
/// and its composites conv2d's, on the H = 1 views), conv_transpose2d and matmul (alone or
/// fused) their own GEMMs,
/// the attention and scaled-softmax composites theirs; every other op `simple_kernel`.
template <class Step>
struct kernel_for {
  using type = simple_kernel<Step>;
  static constexpr kernel_note note()
    requires(simple_kernel<Step>::pooling)
  {
    return note_of(simple_kernel<Step>::choice());
  }
};
template <class Step>
  requires(!int8::quantized_composite<Step>()) &&
          (Step::op == op_id::dense || Step::op == op_id::conv2d ||
           (Step::op == op_id::call && main_op<Step>() != op_id::matmul && main_op<Step>() != op_id::conv_transpose2d &&
            !softmax_composite<Step>() && !conv1d_composite<Step>() && !expand_depthwise_composite<Step>() &&
            !depthwise_project_composite<Step>()))
struct kernel_for<Step> {
  using type = gemm_kernel<Step>;
  static constexpr kernel_note note() { return note_of(gemm_operands<Step>::choice); }
};
template <class Step>
  requires(expand_depthwise_composite<Step>())
struct kernel_for<Step> {
  using type = expand_depthwise_kernel<Step>;
  static constexpr kernel_note note() { return note_of(expand_depthwise_choice<Step>()); }
};
template <class Step>
  requires(depthwise_project_composite<Step>())
struct kernel_for<Step> {
  using type = depthwise_project_kernel<Step>;
  static constexpr kernel_note note() { return note_of(depthwise_project_choice<Step>()); }
};
template <class Step>
  requires(Step::op == op_id::conv1d || conv1d_composite<Step>())
struct kernel_for<Step> {
  using type = gemm_kernel<conv1d_step<Step>>;
  static constexpr kernel_note note() { return note_of(gemm_operands<conv1d_step<Step>>::choice); }
};
template <class Step>
  requires(!int8::quantized_composite<Step>()) && (main_op<Step>() == op_id::conv_transpose2d)
struct kernel_for<Step> {
  using type = conv_transpose_kernel<Step>;
  static constexpr kernel_note note() { return note_of(conv_transpose_choice<Step>()); }
};
template <class Step>
  requires(!int8::quantized_composite<Step>()) &&
          (main_op<Step>() == op_id::matmul && !softmax_composite<Step>() && !conv1d_composite<Step>())
struct kernel_for<Step> {
  using type = matmul_kernel<Step>;
  static constexpr kernel_note note() { return note_of(matmul_kernel<Step>::choice); }
};
template <class Step>
  requires(fused_recurrent<Step>())
struct kernel_for<Step> {
  using type = recurrent_kernel<Step>;
  static constexpr kernel_note note() { return recurrent_kernel<Step>::note(); }
};
template <class Step>
  requires(int8::quantized_composite<Step>())
struct kernel_for<Step> {
  using type = int8::quantized_kernel<Step>;
  static constexpr kernel_note note() { return int8::quantized_kernel<Step>::note(); }
};
template <class Step>
  requires(softmax_composite<Step>())
struct kernel_for<Step> {
  static constexpr attention_choice choice = softmax_composite_choice<Step>();
  using type = std::conditional_t<choice.kernel == attention_kernel_id::attention_blocks, attention_kernel<Step>,
                                  softmax_scaled_kernel<Step>>;
  static constexpr kernel_note note() { return note_of(choice); }
};
}  // namespace detail::cpu

template <class Step>
constexpr kernel_note cpu::note() {
  if constexpr (requires { detail::cpu::kernel_for<Step>::note(); }) {
    return detail::cpu::kernel_for<Step>::note();
  } else {
    return {};
  }
}

template <class Step>
struct cpu::kernel : detail::cpu::kernel_for<Step>::type {
  static_assert(Step::node.type == dtype::f32 || Step::op == op_id::quantize || Step::op == op_id::call ||
                    is_dtype_generic(Step::op),
                "partita: the cpu backend computes in f32, in integers through quantize and its quantized "
                "composites, and in other dtypes through comparisons, logical ops, where, cast, tril/triu "
                "and the index ops; this step (Step) has another dtype");
};

}  // namespace partita
