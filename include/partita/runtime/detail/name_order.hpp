#pragma once
/// Names in sorted order: tensors found by name and duplicates found, with no `std::map`.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "partita/runtime/tensor_data.hpp"

// Plain functions over positions: a std::map, or a comparator given to std::sort, would be
// compiled anew in every file that includes the runtime, which only few of them use.
namespace partita::detail {

/// The positions 0..n-1 of `names`, in ascending name order and equal names in position order
/// (a stable bottom-up merge sort).
inline std::vector<std::size_t> sorted_positions(std::span<const std::string_view> names) {
  const std::size_t n = names.size();
  std::vector<std::size_t> order(n), merged(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = lo + width < n ? lo + width : n;
      const std::size_t hi = mid + width < n ? mid + width : n;
      std::size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) merged[k++] = names[order[j]] < names[order[i]] ? order[j++] : order[i++];
      while (i < mid) merged[k++] = order[i++];
      while (j < hi) merged[k++] = order[j++];
    }
    order.swap(merged);
  }
  return order;
}

/// For each of `names`, the position of the first name equal to it: its own unless an earlier
/// name is the same (a duplicate, which readers and writers report where they meet it).
inline std::vector<std::size_t> first_positions(std::span<const std::string_view> names) {
  const std::vector<std::size_t> order = sorted_positions(names);
  std::vector<std::size_t> first(names.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    first[order[k]] = k > 0 && names[order[k - 1]] == names[order[k]] ? first[order[k - 1]] : order[k];
  return first;
}

/// The first place in `order` (positions of `tensors`, sorted by name) whose tensor's name is not
/// less than `name`: where a tensor of that name is, or would go.
inline std::size_t name_lower_bound(std::span<const tensor_data> tensors, std::span<const std::size_t> order,
                                    std::string_view name) {
  std::size_t lo = 0, hi = order.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (std::string_view(tensors[order[mid]].name) < name) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// The tensor of `tensors` called `name`, or nullptr; `order` holds their positions sorted by name.
inline const tensor_data* find_by_name(std::span<const tensor_data> tensors, std::span<const std::size_t> order,
                                       std::string_view name) {
  const std::size_t k = name_lower_bound(tensors, order, name);
  return k < order.size() && std::string_view(tensors[order[k]].name) == name ? &tensors[order[k]] : nullptr;
}

/// The positions of `tensors` sorted by name.
inline std::vector<std::size_t> sorted_by_name(std::span<const tensor_data> tensors) {
  std::vector<std::string_view> names;
  names.reserve(tensors.size());
  for (const tensor_data& t : tensors) names.push_back(std::string_view(t.name));
  return sorted_positions(names);
}

}  // namespace partita::detail
