#pragma once
/// Which kernel a cpu pooling step runs, and why: the decision `simple_kernel` dispatches on and
/// the plan printer shows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/backends/cpu/detail/kernel_choice.hpp"
#include "partita/backends/cpu/detail/pool/pool.hpp"

namespace partita::detail::cpu {

/// The kernels of max_pool2d, avg_pool2d and global_avg_pool2d steps (pool.hpp, reduce.hpp).
enum class pool_kernel_id : std::uint8_t {
  nhwc_windows,        // pool2d_nhwc: each window tap a run of channel vectors, split by output rows
  max_2x2,             // max_pool_2x2: two input rows per output row, no row buffers
  row_buffers,         // pool2d: window rows reduced into a padded row, then along it
  reference_rows,      // rows too wide for pool2d's buffers: the reference backend's kernel
  channel_means_nhwc,  // nhwc_channel_means: sums of whole rows of channel vectors
  plane_means,         // plane_means: the mean of each plane
};

/// The name `print(plan)` shows for kernel `k`.
constexpr std::string_view name_of(pool_kernel_id k) {
  constexpr std::string_view names[] = {"nhwc_windows",   "max_2x2",           "row_buffers",
                                        "reference_rows", "channel_means_nhwc", "plane_means"};
  return names[static_cast<std::size_t>(k)];
}

/// A pooling kernel and the reason it was chosen, in a line.
using pool_choice = choice_of<pool_kernel_id>;

/// What the pooling decision reads: the geometry (`make_pool_geometry`; none for a global
/// pooling), max or average, global or windowed, and whether the plan chose NHWC for the input.
struct pool_desc {
  pool_geometry geo{};
  bool max = false;
  bool global = false;
  bool nhwc = false;
};

/// The kernel of a pooling step. NHWC inputs (the plan's choice) reduce whole vectors of
/// channels at every tap; planar 2×2 max pools of stride 2 inside the planes skip the row
/// buffers; other planar windows reduce through them where a row fits.
constexpr pool_choice choose_pool_kernel(const pool_desc& d) {
  using k = pool_kernel_id;
  if (d.global)
    return d.nhwc ? pool_choice{k::channel_means_nhwc, "global average, NHWC: sums of rows of channel vectors"}
                  : pool_choice{k::plane_means, "global average, planar: one mean per plane"};
  if (d.nhwc) return {k::nhwc_windows, "NHWC: every window tap a run of channel vectors"};
  if (d.max && max_pool_2x2_fits(d.geo)) return {k::max_2x2, "2x2 max of stride 2 inside the planes: no row buffers"};
  if (!pool_rows_fit(d.geo)) return {k::reference_rows, "rows wider than the row buffers: the reference kernel"};
  return {k::row_buffers, "planar: window rows reduced into a padded row, then along it"};
}

}  // namespace partita::detail::cpu
