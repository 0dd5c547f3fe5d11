#pragma once
/// Which way a cpu matmul step runs its products, and why: the decision `matmul_kernel`
/// dispatches on and the plan printer shows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/backends/cpu/detail/gemm/matmul_pack.hpp"
#include "partita/backends/cpu/detail/kernel_choice.hpp"

namespace partita::detail::cpu {

/// The kernels of `matmul_kernel` (matmul steps, alone or fused with a bias, residual and
/// activation): where B's panels come from, and whether the batch is one product or one per
/// matrix. Every one runs `matmul`'s loops; the micro-tile follows the rows (`matmul_tile_for`).
enum class matmul_kernel_id : std::uint8_t {
  packed_b,           // B a bound weight, packed at bind: one product (a shared B's batch in A's rows)
  packed_b_batched,   // the same, one product per matrix of the batch
  packing_b,          // B computed at run, packed per depth pass: one product
  packing_b_batched,  // the same, one product per matrix of the batch
};

/// The name `print(plan)` shows for kernel `k`.
constexpr std::string_view name_of(matmul_kernel_id k) {
  constexpr std::string_view names[] = {"packed_b", "packed_b_batched", "packing_b", "packing_b_batched"};
  return names[static_cast<std::size_t>(k)];
}

/// A matmul kernel and the reason it was chosen, in a line.
using matmul_choice = choice_of<matmul_kernel_id>;

/// The matmul kernel of a product of geometry `g` (`make_matmul_geometry`, which folds the
/// batch of a B shared by every matrix into A's rows when A is not transposed): B packed at
/// bind when it is a bound weight (`b_weight`), so that a run reads A only, per depth pass
/// otherwise. `batched`: an operand has batch dimensions.
constexpr matmul_choice choose_matmul_kernel(const matmul_geometry& g, bool b_weight, bool batched) {
  using k = matmul_kernel_id;
  const bool folded = batched && g.batch == 1;
  if (b_weight) {
    if (g.batch > 1)
      return {k::packed_b_batched, g.b_matrices == 1 ? "B a bound weight broadcast over the batch: packed once at bind"
                                                     : "B bound weights: every matrix packed at bind, a product each"};
    if (g.ta) return {k::packed_b, "B a bound weight: packed at bind; A transposed into row blocks"};
    if (folded) return {k::packed_b, "B a bound weight shared by the batch: packed at bind, the batch in A's rows"};
    return {k::packed_b, "B a bound weight: packed at bind, A's rows read in place"};
  }
  if (g.batch > 1) return {k::packing_b_batched, "B computed at run: packed per depth pass, a product per matrix"};
  if (g.ta) return {k::packing_b, "B computed at run: packed per depth pass; A transposed into row blocks"};
  if (folded) return {k::packing_b, "B computed at run, shared by the batch: packed per pass, the batch in A's rows"};
  return {k::packing_b, "B computed at run: packed per depth pass, A's rows read in place"};
}

/// Whether kernel `k` reads B packed at bind.
constexpr bool packs_b_at_bind(matmul_kernel_id k) {
  return k == matmul_kernel_id::packed_b || k == matmul_kernel_id::packed_b_batched;
}

}  // namespace partita::detail::cpu
