#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace partita {

/// Alignment of every arena buffer and every weight, in bytes (a cache line; enough for AVX-512).
inline constexpr std::size_t alignment = 64;

/// One arena buffer: its size and the steps during which it is live (`first` writes it, `last`
/// is the last step that reads it; both inclusive).
struct buffer_lifetime {
  std::size_t bytes = 0;
  int first = 0;
  int last = 0;
  std::size_t offset = 0;
};

namespace detail {

constexpr std::size_t align_up(std::size_t n, std::size_t a = alignment) { return (n + a - 1) / a * a; }

constexpr bool live_together(const buffer_lifetime& a, const buffer_lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

/// Greedy-by-size offset assignment (as in TFLite Micro's greedy planner): buffers are placed
/// largest first, each at the lowest aligned offset that does not collide with an already placed
/// buffer whose lifetime overlaps. Returns the arena size.
constexpr std::size_t assign_offsets(std::vector<buffer_lifetime>& buffers) {
  const std::size_t n = buffers.size();
  std::vector<int> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  buffer_lifetime* b = buffers.data();
  std::sort(order.begin(), order.end(), [b](int x, int y) {
    return b[x].bytes != b[y].bytes ? b[x].bytes > b[y].bytes : x < y;
  });
  std::vector<int> placed;
  std::vector<int> clashing;
  std::size_t arena = 0;
  for (int i : order) {
    clashing.clear();
    for (int p : placed)
      if (live_together(b[i], b[p])) clashing.push_back(p);
    std::sort(clashing.begin(), clashing.end(), [b](int x, int y) { return b[x].offset < b[y].offset; });
    std::size_t offset = 0;
    for (int c : clashing) {
      if (b[c].offset >= offset + b[i].bytes) break;  // the gap before c is large enough
      offset = std::max(offset, align_up(b[c].offset + b[c].bytes));
    }
    b[i].offset = offset;
    arena = std::max(arena, align_up(offset + b[i].bytes));
    placed.push_back(i);
  }
  return arena;
}

/// Independent check of a memory plan: every buffer lies inside the arena, is aligned, and no
/// two buffers that are live at the same step share a byte. Sorting by offset and sweeping
/// keeps it near-linear for typical plans.
template <class Buffers>
constexpr bool arena_is_valid(const Buffers& buffers, std::size_t arena_bytes) {
  std::vector<int> by_offset;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const buffer_lifetime& x = buffers[i];
    if (x.offset % alignment != 0 || x.offset + x.bytes > arena_bytes || x.first > x.last) return false;
    by_offset.push_back(static_cast<int>(i));
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [&](int a, int b) { return buffers[static_cast<std::size_t>(a)].offset < buffers[static_cast<std::size_t>(b)].offset; });
  for (std::size_t i = 0; i < by_offset.size(); ++i) {
    const buffer_lifetime& x = buffers[static_cast<std::size_t>(by_offset[i])];
    for (std::size_t j = i + 1; j < by_offset.size(); ++j) {
      const buffer_lifetime& y = buffers[static_cast<std::size_t>(by_offset[j])];
      if (y.offset >= x.offset + x.bytes) break;  // later buffers start even further on
      if (live_together(x, y)) return false;
    }
  }
  return true;
}

}  // namespace detail
}  // namespace partita
