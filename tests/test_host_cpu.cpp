// cpu: the host's vendor and cache sizes from CPUID (host_cpu.hpp), and the dense blocking that
// follows them: measured choices per vendor, the L1d rule for any other core.
#include <cstddef>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita::detail::cpu;

namespace {

// The registers of one CPUID cache sub-leaf: `ways`-way, `sets` sets of 64-byte lines.
struct leaf_regs {
  unsigned eax, ebx, ecx;
};
constexpr leaf_regs cache_regs(int level, int type, unsigned ways, unsigned sets) {
  return {static_cast<unsigned>(type) | static_cast<unsigned>(level) << 5, (ways - 1) << 22 | 63u, sets - 1};
}

constexpr host_cpu_info machine(cpu_vendor v, std::size_t l1d, std::size_t l2) {
  host_cpu_info h;
  h.vendor = v;
  h.l1d_bytes = l1d;
  h.l2_bytes = l2;
  h.caches_from_cpuid = true;
  return h;
}

// Linux's own reading of cpu0's caches (sysfs derives it from the same leaves), or 0.
std::size_t sysfs_cache_bytes(int level, const std::string& type) {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size");
    int l = 0;
    std::string t, s;
    if (!(lv >> l) || !(ty >> t) || !(sz >> s)) return 0;
    if (l != level || (t != type && t != "Unified")) continue;
    std::size_t kb = std::stoul(s);
    return s.back() == 'M' ? kb * 1024 * 1024 : kb * 1024;
  }
  return 0;
}

}  // namespace

TEST_CASE("CPUID cache sub-leaves decode to level, type and bytes") {
  constexpr leaf_regs l1d = cache_regs(1, 1, 12, 64), l1i = cache_regs(1, 2, 16, 64), l2 = cache_regs(2, 3, 16, 2048),
                      l3 = cache_regs(3, 3, 15, 57344);
  constexpr cache_leaf d = decode_cache_leaf(l1d.eax, l1d.ebx, l1d.ecx);
  static_assert(d.level == 1 && d.type == 1 && d.bytes == 48 * 1024);
  static_assert(decode_cache_leaf(l2.eax, l2.ebx, l2.ecx).bytes == 2048 * 1024);
  // Instruction caches and L3 leave the data sizes alone.
  host_cpu_info h;
  for (const leaf_regs& r : {l1i, l3}) note_cache(h, decode_cache_leaf(r.eax, r.ebx, r.ecx));
  CHECK_FALSE(h.caches_from_cpuid);
  CHECK(h.l1d_bytes == 32 * 1024);
  for (const leaf_regs& r : {l1d, l1i, l2, l3}) note_cache(h, decode_cache_leaf(r.eax, r.ebx, r.ecx));
  CHECK(h.caches_from_cpuid);
  CHECK(h.l1d_bytes == 48 * 1024);
  CHECK(h.l2_bytes == 2048 * 1024);
  // A leaf that reports no size (the end of the list) changes nothing.
  note_cache(h, {1, 1, 0});
  CHECK(h.l1d_bytes == 48 * 1024);
}

TEST_CASE("the host's caches agree with the operating system's") {
  const host_cpu_info& h = host_cpu();
  CHECK(h.l1d_bytes >= 8 * 1024);
  CHECK(h.l2_bytes >= h.l1d_bytes);
#if PARTITA_CPU_HAS_CPUID && defined(__linux__)
  const std::size_t l1 = sysfs_cache_bytes(1, "Data"), l2 = sysfs_cache_bytes(2, "Data");
  if (l1 == 0 || l2 == 0) return;  // no sysfs: a container may hide it
  CHECK(h.caches_from_cpuid);
  CHECK(h.l1d_bytes == l1);
  CHECK(h.l2_bytes == l2);
#endif
}

TEST_CASE("dense depth passes: measured per vendor, from L1d elsewhere") {
  using rows = dense_blocking<64, 512>;  // W2's hidden layers: several row tiles share a panel
  using gemv = dense_blocking<1, 512>;
  const host_cpu_info intel = machine(cpu_vendor::intel, 48 * 1024, 2048 * 1024);
  const host_cpu_info amd = machine(cpu_vendor::amd, 48 * 1024, 1024 * 1024);
  if (W >= 16) {
    CHECK(rows::kc_for(784, intel) == 196);  // even passes of at most 256
    CHECK(rows::kc_for(256, intel) == 256);
  } else {
    CHECK(rows::kc_for(784, intel) == 784);
  }
  CHECK(rows::kc_for(784, amd) == 784);   // one pass up to 1024
  CHECK(rows::kc_for(1536, amd) == 512);  // else even passes of at most 512
  CHECK(rows::kc_for(1100, amd) == 367);
  // One or two rows stream the whole depth everywhere.
  CHECK(gemv::kc_for(4096, intel) == 4096);
  // Another vendor: slices of the panel that fill half of L1d, multiples of 16, within [64, 512].
  constexpr int row_bytes = rows::nr * static_cast<int>(sizeof(float));
  const host_cpu_info other = machine(cpu_vendor::other, 64 * 1024, 1024 * 1024);
  const int half_l1 = 32 * 1024 / row_bytes / 16 * 16;
  const int slice = half_l1 < 64 ? 64 : half_l1 > 512 ? 512 : half_l1;
  CHECK(rows::passes_on(other).whole == slice);
  CHECK(rows::kc_for(slice, other) == slice);
  CHECK(rows::kc_for(slice + 1, other) <= slice);
  CHECK(rows::passes_on(machine(cpu_vendor::other, 4 * 1024, 64 * 1024)).whole == 64);
  CHECK(rows::passes_on(machine(cpu_vendor::other, 1024 * 1024, 4096 * 1024)).whole == 512);
  // Whatever the host, a pass covers the depth in even parts.
  for (const host_cpu_info& h : {intel, amd, other, host_cpu()})
    for (int k : {1, 16, 200, 784, 1025, 4000}) {
      const int kc = rows::kc_for(k, h);
      const int passes = (k + kc - 1) / kc;
      CHECK(kc >= 1);
      CHECK(passes * kc - k < passes);
    }
}
