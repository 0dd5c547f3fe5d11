#pragma once
/// cpu: the host processor's vendor and per-core cache sizes, read once from CPUID.
// Blocking that depends on the machine is chosen at run time from these: a choice measured on a
// vendor's cores is keyed on the vendor; a processor of another vendor (or one whose CPUID says
// nothing of its caches) gets the rule derived from its cache sizes, or conservative sizes.
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define PARTITA_CPU_HAS_CPUID 1
#else
#define PARTITA_CPU_HAS_CPUID 0
#endif

namespace partita::detail::cpu {

/// Vendors whose cores blocking choices were measured on; `other` gets the cache-size defaults.
enum class cpu_vendor { intel, amd, other };

/// What the blocking needs to know of the host: its vendor and one core's data caches.
struct host_cpu_info {
  cpu_vendor vendor = cpu_vendor::other;
  std::size_t l1d_bytes = 32 * 1024;  // conservative: every x86-64 core and most Arm cores have at least these
  std::size_t l2_bytes = 512 * 1024;
  bool caches_from_cpuid = false;  // false: the sizes above are the defaults
};

/// One cache described by CPUID's deterministic cache parameters (leaf 4 on Intel, 0x8000001D on
/// AMD, the same layout): its level, its type (1 data, 2 instruction, 3 unified, 0 no more
/// caches) and its size in bytes.
struct cache_leaf {
  int level = 0;
  int type = 0;
  std::size_t bytes = 0;
};

/// Decodes one sub-leaf's registers: ways × partitions × line size × sets.
constexpr cache_leaf decode_cache_leaf(std::uint32_t eax, std::uint32_t ebx, std::uint32_t ecx) {
  cache_leaf c;
  c.type = static_cast<int>(eax & 0x1fu);
  c.level = static_cast<int>((eax >> 5) & 0x7u);
  const std::size_t line = (ebx & 0xfffu) + 1u, partitions = ((ebx >> 12) & 0x3ffu) + 1u, ways = ((ebx >> 22) & 0x3ffu) + 1u;
  c.bytes = ways * partitions * line * (static_cast<std::size_t>(ecx) + 1u);
  return c;
}

/// Folds one cache into `info`: a level-1 data cache sets L1d, a level-2 data or unified one
/// sets L2; instruction caches and other levels are left out.
constexpr void note_cache(host_cpu_info& info, const cache_leaf& c) {
  if (c.bytes == 0) return;
  if (c.level == 1 && c.type == 1) info.l1d_bytes = c.bytes;
  else if (c.level == 2 && (c.type == 1 || c.type == 3)) info.l2_bytes = c.bytes;
  else return;
  info.caches_from_cpuid = true;
}

/// Reads the host: on x86-64 from CPUID (the vendor string; leaf 4 on Intel; on AMD and Hygon
/// leaf 0x8000001D where the topology extensions are there, else the legacy leaves 0x80000005
/// and 0x80000006); elsewhere the defaults of `host_cpu_info`.
inline host_cpu_info read_host_cpu() {
  host_cpu_info info;
#if PARTITA_CPU_HAS_CPUID
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return info;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  const bool amd_like = std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
  if (std::strcmp(vendor, "GenuineIntel") == 0) info.vendor = cpu_vendor::intel;
  else if (amd_like) info.vendor = cpu_vendor::amd;
  // Intel's leaf; other vendors' cores (Zhaoxin) may implement it too.
  if (!amd_like && max_leaf >= 4) {
    for (unsigned sub = 0; sub < 16; ++sub) {
      __cpuid_count(4, sub, a, b, c, d);
      const cache_leaf leaf = decode_cache_leaf(a, b, c);
      if (leaf.type == 0) break;
      note_cache(info, leaf);
    }
  }
  if (amd_like) {
    const unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
    bool topology = false;
    if (max_ext >= 0x80000001u) {
      __cpuid(0x80000001u, a, b, c, d);
      topology = (c >> 22) & 1u;
    }
    if (topology && max_ext >= 0x8000001du) {
      for (unsigned sub = 0; sub < 16; ++sub) {
        __cpuid_count(0x8000001du, sub, a, b, c, d);
        const cache_leaf leaf = decode_cache_leaf(a, b, c);
        if (leaf.type == 0) break;
        note_cache(info, leaf);
      }
    } else if (max_ext >= 0x80000006u) {
      __cpuid(0x80000005u, a, b, c, d);
      note_cache(info, {1, 1, static_cast<std::size_t>((c >> 24) & 0xffu) * 1024u});
      __cpuid(0x80000006u, a, b, c, d);
      note_cache(info, {2, 3, static_cast<std::size_t>((c >> 16) & 0xffffu) * 1024u});
    }
  }
#endif
  return info;
}

/// The host, read on first use (the executable may run from a static initializer) and kept.
inline const host_cpu_info& host_cpu() {
  static const host_cpu_info info = read_host_cpu();
  return info;
}

}  // namespace partita::detail::cpu
