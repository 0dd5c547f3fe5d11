#pragma once
// What the firmware needs of the board: console output and exit through semihosting (QEMU's
// -semihosting), and an instruction count from SysTick under QEMU's -icount.
#include <cstdint>

namespace board {

/// A semihosting call: `op` with its argument block `arg`, through the debugger breakpoint.
inline std::uint32_t semihost(std::uint32_t op, const void* arg) {
  register std::uint32_t r0 asm("r0") = op;
  register const void* r1 asm("r1") = arg;
  asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/// Writes a NUL-terminated string to the host's console.
inline void write(const char* s) { semihost(0x04, s); }

/// Writes `v` in decimal.
inline void write(std::uint64_t v) {
  char buf[24];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  write(p);
}

/// Writes the 32 bits of `f` as 8 hexadecimal digits: the host reads back the exact float.
inline void write_bits(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  char buf[9];
  for (int i = 0; i < 8; ++i) buf[i] = "0123456789abcdef"[(u >> (28 - 4 * i)) & 15];
  buf[8] = '\0';
  write(buf);
}

/// Ends the emulation: QEMU exits with status 0 when `ok`, 1 otherwise.
[[noreturn]] inline void exit(bool ok) {
  // ADP_Stopped_ApplicationExit, or ADP_Stopped_RunTimeErrorUnknown.
  semihost(0x18, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(ok ? 0x20026 : 0x20023)));
  for (;;) {
  }
}

/// SysTick wraps every 2^24 ticks; the handler counts the wraps (startup.cpp).
extern volatile std::uint32_t systick_wraps;

/// Starts SysTick from zero on the processor clock, its wrap interrupt on.
inline void start_ticks() {
  auto* const syst = reinterpret_cast<volatile std::uint32_t*>(0xE000E010u);
  syst[0] = 0;            // CSR: off
  syst[1] = 0x00FFFFFFu;  // RVR: the full 24 bits
  syst[2] = 0;            // CVR: any write clears it
  systick_wraps = 0;
  syst[0] = 0x7;  // CSR: processor clock, interrupt, on
}

/// Ticks since `start_ticks()`.
inline std::uint64_t ticks() {
  auto* const syst = reinterpret_cast<volatile std::uint32_t*>(0xE000E010u);
  std::uint32_t wraps, now;
  do {
    wraps = systick_wraps;
    now = syst[2];
  } while (wraps != systick_wraps);
  return (static_cast<std::uint64_t>(wraps) << 24) + (0x00FFFFFFu - now);
}

}  // namespace board
