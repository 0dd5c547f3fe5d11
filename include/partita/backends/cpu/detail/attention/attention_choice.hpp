#pragma once
/// Which kernel a cpu softmax composite (attention or scaled softmax) runs, and why: the decision
/// the backend dispatches on and the plan printer shows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/backends/cpu/detail/kernel_choice.hpp"

namespace partita::detail::cpu {

/// The kernels of the softmax composites (attention.hpp).
enum class attention_kernel_id : std::uint8_t {
  attention_blocks,  // attention_kernel: both products and the softmax per block of query rows
  softmax_rows,      // softmax_scaled_kernel: scale, mask and softmax in one pass per row
};

/// The name `print(plan)` shows for kernel `k`.
constexpr std::string_view name_of(attention_kernel_id k) {
  constexpr std::string_view names[] = {"attention_blocks", "softmax_rows"};
  return names[static_cast<std::size_t>(k)];
}

/// A softmax composite's kernel and the reason it was chosen, in a line.
using attention_choice = choice_of<attention_kernel_id>;

/// The kernel of a softmax composite: the attention kernel where the softmax reads a product
/// Q·op(K) and its probabilities are multiplied by V (`products`), the scaled softmax's pass
/// otherwise.
constexpr attention_choice choose_attention_kernel(bool products) {
  if (products)
    return {attention_kernel_id::attention_blocks, "Q.K, softmax and .V per block of query rows: scores stay in L2"};
  return {attention_kernel_id::softmax_rows, "softmax of a scaled, masked value: one pass per row"};
}

}  // namespace partita::detail::cpu
