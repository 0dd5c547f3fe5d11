#pragma once
/// The oneDNN backend. Not part of partita/partita.hpp: include it after it, link oneDNN and
/// OpenMP (CMake: `include(partita_onednn)`, target `partita::onednn`). The backend type is
/// `partita::onednn` (`onednn_backend<>`), so that it never clashes with oneDNN's own `::dnnl`.

#include <span>
#include <type_traits>

#include "partita/backend/cost.hpp"
#include "partita/runtime/step_ref.hpp"
#include "partita/backends/onednn/detail/program.hpp"
#include "partita/backends/onednn/detail/runtime.hpp"
#include "partita/backends/onednn/detail/support.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/ir/view.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/pass/prune_partitions.hpp"
#include "partita/pattern/pattern.hpp"
#include "partita/pattern/table.hpp"

namespace partita {

/// Options of `onednn_backend` (a template argument): `onednn_backend<{.threads = 1}>`.
struct onednn_options {
  /// OpenMP threads oneDNN runs on; 0: every core.
  int threads = 0;
};

namespace detail::onednn {

/// Reports an op of a partition that has no oneDNN translation (an op pinned with
/// `on<onednn, ...>` that `supports` refuses): the compiler names it in this template.
template <op_id Op>
struct no_onednn_translation_for;

template <bool Ok, op_id Op>
struct translation_check : std::true_type {};
template <op_id Op>
struct translation_check<false, Op> : std::bool_constant<sizeof(no_onednn_translation_for<Op>) == 0> {};

}  // namespace detail::onednn

/// The oneDNN backend (oneDNN 2.x, f32, CPU), at graph-compiler granularity: each of its
/// partitions is one step, translated at compile time into oneDNN layers and built at `bind`
/// into primitives. conv2d and dense take their bias, a batch norm (both folded into the weights
/// at bind), a residual add (a `sum` post-op, in place when possible) and activations as
/// post-ops; oneDNN chooses every layout (`format_tag::any`), weights are reordered once at
/// bind, and reorders happen only where layouts differ, at the partition's parameters and
/// results in practice (Partita's buffers are plain NCHW / row-major). `run` builds nothing and
/// allocates no tensor memory (oneDNN's execute makes a few small allocations of its own).
///
/// Partitions without conv2d or dense fall back to the host at compile time (`accepts`); one
/// that oneDNN cannot build makes `bind` throw, naming the backend and the partition.
///
/// ```cpp
/// #include <partita/partita.hpp>
/// #include <partita/backends/onednn/onednn.hpp>
/// partita::compiled<net, partita::onednn, partita::cpu> exe;   // cpu runs what oneDNN does not
/// exe.bind(weights);
/// std::cout << exe.state<partita::onednn>().describe();        // primitives and layouts
/// ```
template <onednn_options O = onednn_options{}>
struct onednn_backend {
  static constexpr fixed_string name = "onednn";
  static constexpr onednn_options options = O;
  /// Each partition runs as one step.
  static constexpr bool compiles_partitions = true;
  /// For cost-based partitioning: an estimate of oneDNN's blocked convolutions' rate on one
  /// AVX-512 core; each partition pays for its primitives' dispatch and the reorders at its
  /// edges. `tune` replaces these estimates with measurements.
  static constexpr throughput speed = {.gflops = 100, .gbytes_per_s = 30, .call_ns = 4000};

  /// Claims conv2d and dense before the host's composites do; everything around them (bias,
  /// batch norm, residual, activations) joins their partition through `supports` and is fused
  /// when the partition is translated, across composite boundaries.
  using patterns = pattern_table<composite<"onednn.conv2d", conv2d_p<any, constant>, detail::onednn::claimable>,
                                 composite<"onednn.dense", dense_p<any, constant>, detail::onednn::claimable>>;

  /// The ops oneDNN runs here (see `detail::onednn::translatable`).
  static constexpr bool supports(const op_view& v) { return detail::onednn::translatable(v); }

  /// Partitions without a conv2d or dense: the host runs elementwise ops and pooling as fast,
  /// without the reorders to and from oneDNN's layouts.
  static constexpr bool accepts(const partition_view& p) { return p.heavy_ops() > 0; }
  using post_partition = pass_list<passes::host_fallback<onednn_backend>>;

  /// The engine, the stream and one network of primitives per partition step.
  struct state : detail::onednn::runtime {
    state() : runtime(O.threads) {}
    /// For a transactional bind: the same settings (they are `O`'s), nothing built yet.
    state fork() const { return state{}; }
  };

  /// Runs one partition (`Step::partition`): translated at compile time, built at bind.
  template <class Step>
  struct kernel {
    static_assert(Step::partition, "partita: onednn runs whole partitions: compile a model (compiled<net, onednn, host>) "
                                   "or a partitioned module");
    static constexpr int function = Step::node.index;
    static constexpr detail::onednn::program_sizes sizes = detail::onednn::sizes_of(Step::module, function);
    static constexpr auto program = detail::onednn::make_program<sizes>(Step::module, function);
    static_assert(program.translatable,
                  "partita: onednn: a partition holds an op with no oneDNN translation (pinned with on<onednn, ...>?); "
                  "the next error names it in no_onednn_translation_for<...>");
    static_assert(detail::onednn::translation_check<program.translatable, program.culprit>::value);

    /// Weights are reordered into oneDNN's own memory at bind; `run` reads only parameters.
    static constexpr bool packs_weights = true;
    /// Builds the partition's primitives from its weights (`in[slot]`; null for parameters).
    static void prepare(state& st, const float* const* in) {
      st.build(Step::index, Step::function().name(), std::span(program.layers), std::span(program.results), in);
    }
    static void run(state& st, const float* const* in, float* out) { st.run(Step::index, in, out); }
  };
};

/// The oneDNN backend with every core (named "onednn" in modules: `onednn_main_0`, `"onednn.conv2d"`).
using onednn = onednn_backend<>;

/// For cost-based partitioning: handing a result from oneDNN to a host backend moves no data,
/// but OpenMP's workers keep spinning after each oneDNN call (for milliseconds, with the default
/// `OMP_WAIT_POLICY`) and take cores from the host's threads that run next (the declared cost
/// is what `examples/cost_partition`, six oneDNN partitions each followed by cpu steps, lost on
/// 2 cores against `OMP_WAIT_POLICY=passive`). None with one thread; with
/// `OMP_WAIT_POLICY=passive`, specialize `transfer<onednn, cpu>` to return 0. `tune` measures the
/// hand-over on the machine; measured costs replace this one.
template <onednn_options O, class To>
  requires(is_host_backend<To>)
struct transfer<onednn_backend<O>, To> {
  static constexpr double ns(double) { return O.threads == 1 ? 0.0 : 900e3; }
};

}  // namespace partita
