#pragma once
/// The cpu backend's packed weights: every step's in a few large blocks.
// Allocated step by step, a model's packed weights were some fifty buffers of 10 KB to 5 MB on
// 4 KB pages, and a run walks all of them: a TLB miss on every new page. Carved from blocks
// that grow geometrically, they lie in a handful of buffers, and those of 2 MB and more are on
// huge pages where the system gives them (`aligned_buffer`). A block is not written past the
// regions carved from it, so its unused tail is address space only, never memory.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "partita/core/detail/aligned_buffer.hpp"

namespace partita::detail::cpu {

/// Per-step regions of packed weights, carved from blocks it owns. A step's region, once
/// reserved, keeps its place; it starts zeroed and on a cache line.
class packed_store {
 public:
  packed_store() = default;
  /// A moved-from store holds nothing (`std::exchange` leaves it so: the standard names no state
  /// for a vector moved from by assignment).
  packed_store(packed_store&& o) noexcept
      : blocks_(std::exchange(o.blocks_, {})),
        regions_(std::exchange(o.regions_, {})),
        reserved_(std::exchange(o.reserved_, 0)),
        bytes_(std::exchange(o.bytes_, 0)),
        used_(std::exchange(o.used_, 0)) {}
  packed_store& operator=(packed_store&& o) noexcept {
    if (this != &o) {
      blocks_ = std::exchange(o.blocks_, {});
      regions_ = std::exchange(o.regions_, {});
      reserved_ = std::exchange(o.reserved_, 0);
      bytes_ = std::exchange(o.bytes_, 0);
      used_ = std::exchange(o.used_, 0);
    }
    return *this;
  }

  /// Step `step`'s region of at least `floats` floats: the one it has if large enough, else a
  /// new one.
  float* reserve(int step, std::size_t floats) {
    const auto s = static_cast<std::size_t>(step);
    if (regions_.size() <= s) regions_.resize(s + 1);
    region& r = regions_[s];
    if (r.floats >= floats) return r.at;
    const std::size_t bytes = (floats * sizeof(float) + aligned_buffer::align - 1) / aligned_buffer::align *
                              aligned_buffer::align;
    if (blocks_.empty() || used_ + bytes > blocks_.back().size()) {
      // Each block as large as all before it (from 256 KB, to 64 MB): few blocks, and at most
      // about half of the last one unused (and never touched).
      const std::size_t block = std::max(bytes, std::clamp(reserved_, std::size_t{256} << 10, std::size_t{64} << 20));
      blocks_.emplace_back(block, "the cpu backend's packed weights", uninitialized);
      reserved_ += block;
      used_ = 0;
    }
    r = {reinterpret_cast<float*>(blocks_.back().get() + used_), floats};
    std::memset(r.at, 0, bytes);
    used_ += bytes;
    bytes_ += bytes;
    return r.at;
  }
  /// Step `step`'s region (reserved before).
  float* at(int step) const { return regions_[static_cast<std::size_t>(step)].at; }
  /// Bytes of its regions: what it holds in memory (the blocks' unused tails are never touched).
  std::size_t bytes() const { return bytes_; }

 private:
  struct region {
    float* at = nullptr;
    std::size_t floats = 0;
  };
  std::vector<aligned_buffer> blocks_;
  std::vector<region> regions_;
  std::size_t reserved_ = 0;  // bytes of every block
  std::size_t bytes_ = 0;     // of every region
  std::size_t used_ = 0;      // of the last block
};

}  // namespace partita::detail::cpu
