#pragma once
/// oneDNN's name for a memory layout ("abcd", "aBcd16b"), for descriptions and benchmark peers.
#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace partita::detail::onednn {

/// oneDNN's spelling of a layout, as in its verbose output: "abcd", "aBcd16b", "ABcd16b16a".
inline std::string layout(const ::dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return "?";
  const auto& b = d.format_desc.blocking;
  std::vector<int> order(static_cast<std::size_t>(d.ndims), 0);
  std::iota(order.begin(), order.end(), 0);
  // Outermost first; equal strides keep dimension order (a tie-break rather than stable_sort,
  // whose libstdc++ 12 buffer Clang reports as deprecated).
  std::sort(order.begin(), order.end(),
            [&](int x, int y) { return b.strides[x] != b.strides[y] ? b.strides[x] > b.strides[y] : x < y; });
  std::array<bool, DNNL_MAX_NDIMS> blocked{};
  for (int k = 0; k < b.inner_nblks; ++k) blocked[static_cast<std::size_t>(b.inner_idxs[k])] = true;
  std::string s;
  for (int i : order) {
    const char c = static_cast<char>('a' + i);
    s += blocked[static_cast<std::size_t>(i)] ? static_cast<char>(std::toupper(c)) : c;
  }
  for (int k = 0; k < b.inner_nblks; ++k) {
    s += std::to_string(b.inner_blks[k]);
    s += static_cast<char>('a' + b.inner_idxs[k]);
  }
  return s;
}

}  // namespace partita::detail::onednn
