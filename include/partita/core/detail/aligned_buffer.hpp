#pragma once
/// An owning, 64-byte aligned, zero-initialized byte buffer; large ones on 2 MB pages where the
/// system gives them.
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "partita/core/detail/concat.hpp"
#include "partita/core/error.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace partita::detail {

/// Buffers of at least this many bytes start on a 2 MB boundary and ask Linux for transparent
/// huge pages (`madvise(MADV_HUGEPAGE)`, which the default `madvise` mode of
/// /sys/kernel/mm/transparent_hugepage requires): each 2 MB of them is then one TLB entry
/// instead of 512. A model's weights are read once per run, a few MB to tens of MB of them, and
/// on 4 KB pages every new page missed the TLB (the cpu backend keeps its packed weights in few
/// blocks, `packed_store`, for this). Where the system has none to give, or outside Linux, the
/// buffer is an ordinary one.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Frees an `aligned_buffer`'s storage with the alignment it was allocated with.
struct aligned_release {
  std::size_t alignment = 64;
  void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t{alignment}); }
};

/// Asks `aligned_buffer` to leave its bytes as they are: pages never written stay unmapped.
struct uninitialized_t {};
inline constexpr uninitialized_t uninitialized{};

/// Zero-initialised storage aligned to a cache line (64 bytes), allocated once: the arena and
/// weight storage of an executable, a backend's packed weights and scratch. From
/// `huge_page_bytes` up it is aligned to 2 MB and backed by huge pages where Linux has them;
/// the part past its last whole 2 MB keeps ordinary pages. `what` names the bytes' use (the
/// arena, the packed weights, scratch): an allocation that fails throws a `partita::error`
/// saying how many bytes were wanted and for what, not a bare `std::bad_alloc`.
class aligned_buffer {
 public:
  static constexpr std::size_t align = 64;

  aligned_buffer() = default;
  aligned_buffer(std::size_t bytes, const char* what) : data_(allocate(bytes, what)), size_(bytes) {
    if (bytes) std::memset(data_.get(), 0, bytes);  // after the advice: the first touch maps the pages
  }
  /// `bytes` bytes left uninitialized.
  aligned_buffer(std::size_t bytes, const char* what, uninitialized_t) : data_(allocate(bytes, what)), size_(bytes) {}
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
  using storage = std::unique_ptr<std::byte, aligned_release>;

  static storage allocate(std::size_t bytes, const char* what) {
    if (!bytes) return storage(nullptr, aligned_release{align});
    const std::size_t alignment = bytes >= huge_page_bytes ? huge_page_bytes : align;
    // The nothrow form, so that a program built without exceptions reports the failure too.
    void* raw = ::operator new(bytes, std::align_val_t{alignment}, std::nothrow);
    if (!raw) {
      constexpr std::size_t gib = std::size_t{1} << 30;
      detail::raise(error(concat("partita: the executable wanted ", std::to_string(bytes), " bytes",
                                          bytes >= gib ? concat(" (", std::to_string(bytes / gib), " GiB)") : std::string(),
                                          " for ", what, ", and they could not be allocated")));
    }
    storage p(static_cast<std::byte*>(raw), aligned_release{alignment});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice only: a kernel without transparent huge pages refuses it, and the pages stay small.
    if (alignment == huge_page_bytes) (void)::madvise(p.get(), bytes, MADV_HUGEPAGE);
#endif
    return p;
  }

  storage data_{nullptr, aligned_release{align}};
  std::size_t size_ = 0;
};

}  // namespace partita::detail
