#pragma once
/// The arena: buffer lifetimes and their offsets (greedy by size).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "partita/ir/layout.hpp"

namespace partita {

/// One arena buffer: its size and the steps during which it is live (`first` writes it, `last`
/// is the last step that reads it; both inclusive).
struct buffer_lifetime {
  std::size_t bytes = 0;
  int first = 0;
  int last = 0;
  std::size_t offset = 0;
};

namespace detail {

constexpr bool live_together(const buffer_lifetime& a, const buffer_lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

constexpr int num_steps_of(const std::vector<buffer_lifetime>& buffers) {
  int n = 0;
  for (const buffer_lifetime& b : buffers) n = std::max(n, b.last + 1);
  return n;
}

// `assign_offsets` is a template of nothing: compiled where a model is lowered, not in every file.
/// Greedy-by-size offset assignment (as in TFLite Micro's greedy planner): buffers are placed
/// largest first, each at the lowest aligned offset that does not collide with an already placed
/// buffer whose lifetime overlaps. Placed buffers are listed per step, so a buffer is compared
/// only with those live during its own lifetime. Returns the arena size.
template <class = void>
constexpr std::size_t assign_offsets(std::vector<buffer_lifetime>& buffers) {
  const std::size_t n = buffers.size();
  std::vector<int> order(n, 0);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  buffer_lifetime* b = buffers.data();
  std::sort(order.begin(), order.end(), [b](int x, int y) {
    return b[x].bytes != b[y].bytes ? b[x].bytes > b[y].bytes : x < y;
  });
  std::vector<std::vector<int>> placed_at(static_cast<std::size_t>(num_steps_of(buffers)));
  std::vector<int> seen(n, -1);
  std::vector<int> clashing;
  std::size_t arena = 0;
  for (int i : order) {
    clashing.clear();
    for (int s = b[i].first; s <= b[i].last; ++s)
      for (int p : placed_at[static_cast<std::size_t>(s)])
        if (seen[static_cast<std::size_t>(p)] != i) {
          seen[static_cast<std::size_t>(p)] = i;
          clashing.push_back(p);
        }
    std::sort(clashing.begin(), clashing.end(), [b](int x, int y) { return b[x].offset < b[y].offset; });
    std::size_t offset = 0;
    for (int c : clashing) {
      if (b[c].offset >= offset + b[i].bytes) break;  // the gap before c is large enough
      offset = std::max(offset, align_up(b[c].offset + b[c].bytes));
    }
    b[i].offset = offset;
    arena = std::max(arena, align_up(offset + b[i].bytes));
    for (int s = b[i].first; s <= b[i].last; ++s) placed_at[static_cast<std::size_t>(s)].push_back(i);
  }
  return arena;
}

/// Independent check of a memory plan: every buffer lies inside the arena and is aligned, and at
/// every step the buffers live then occupy disjoint byte ranges (sorted by offset, each must end
/// before the next begins).
template <class Buffers>
constexpr bool arena_is_valid(const Buffers& buffers, std::size_t arena_bytes) {
  int steps = 0;
  for (const buffer_lifetime& x : buffers) {
    if (x.offset % alignment != 0 || x.offset + x.bytes > arena_bytes || x.first > x.last) return false;
    steps = std::max(steps, x.last + 1);
  }
  std::vector<std::vector<int>> live(static_cast<std::size_t>(steps));
  for (std::size_t i = 0; i < buffers.size(); ++i)
    for (int s = buffers[i].first; s <= buffers[i].last; ++s) live[static_cast<std::size_t>(s)].push_back(static_cast<int>(i));
  for (std::vector<int>& at : live) {
    std::sort(at.begin(), at.end(), [&](int a, int b) {
      return buffers[static_cast<std::size_t>(a)].offset < buffers[static_cast<std::size_t>(b)].offset;
    });
    for (std::size_t k = 1; k < at.size(); ++k) {
      const buffer_lifetime& prev = buffers[static_cast<std::size_t>(at[k - 1])];
      if (prev.offset + prev.bytes > buffers[static_cast<std::size_t>(at[k])].offset) return false;
    }
  }
  return true;
}

}  // namespace detail
}  // namespace partita
