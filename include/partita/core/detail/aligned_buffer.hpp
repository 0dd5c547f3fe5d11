#pragma once
/// An owning, 64-byte aligned, zero-initialized byte buffer.
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

namespace partita::detail {

/// Zero-initialised storage aligned to a cache line (64 bytes), allocated once: the arena and
/// weight storage of an executable, a backend's packed weights and scratch.
class aligned_buffer {
 public:
  static constexpr std::size_t align = 64;

  aligned_buffer() = default;
  explicit aligned_buffer(std::size_t bytes)
      : data_(bytes ? static_cast<std::byte*>(::operator new(bytes, std::align_val_t{align})) : nullptr), size_(bytes) {
    if (bytes) std::memset(data_.get(), 0, bytes);
  }
  aligned_buffer(aligned_buffer&& o) noexcept : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)) {}
  aligned_buffer& operator=(aligned_buffer&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  std::byte* get() const { return data_.get(); }
  /// Its bytes.
  std::size_t size() const { return size_; }
  /// The storage as floats.
  float* floats() const { return reinterpret_cast<float*>(data_.get()); }

 private:
  struct release {
    void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t{align}); }
  };
  std::unique_ptr<std::byte, release> data_;
  std::size_t size_ = 0;
};

}  // namespace partita::detail
