// The firmware's start: the vector table, the reset handler (FPU on, .data copied, .bss zeroed,
// constructors run, main called, the emulation ended with main's verdict), the fault and SysTick
// handlers, the heap's guard (every allocation is counted) and _exit.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "board.hpp"

extern "C" {
extern std::uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[], __stack_top[];
void __libc_init_array();
int main();
void reset_handler();
void fault_handler();
void systick_handler();
}

namespace board {
volatile std::uint32_t systick_wraps = 0;
/// Bytes the program asked of the heap (`_sbrk`); the firmware checks it stays 0.
volatile std::uint32_t heap_requests = 0;
}  // namespace board

extern "C" void reset_handler() {
  // CPACR: full access to the coprocessors CP10 and CP11, the single-precision FPU.
  *reinterpret_cast<volatile std::uint32_t*>(0xE000ED88u) |= 0xFu << 20;
  asm volatile("dsb\n isb" ::: "memory");
  std::memcpy(__data_start, __data_load, static_cast<std::size_t>(__data_end - __data_start) * 4);
  std::memset(__bss_start, 0, static_cast<std::size_t>(__bss_end - __bss_start) * 4);
  __libc_init_array();
  board::exit(main() == 0);
}

extern "C" void fault_handler() {
  board::write("fault: the processor took a fault exception\n");
  board::exit(false);
}

extern "C" void systick_handler() { board::systick_wraps = board::systick_wraps + 1; }

// __libc_init_array calls _init before the constructors; crti.o, left out with the C runtime's
// start files, would define it: nothing to do here.
extern "C" void _init() {}
extern "C" void _fini() {}

// No heap on the way to a result: newlib's malloc calls _sbrk, which counts every byte asked
// for, so that main can check that none was. It does hand out a small pool, because a check that
// fails builds its message (a std::string) before calling the error hook: the message is then
// printed instead of ending in std::terminate.
namespace {
alignas(8) unsigned char error_pool[8192];
std::size_t error_pool_used = 0;
}  // namespace
extern "C" void* _sbrk(std::ptrdiff_t increment) {
  board::heap_requests = board::heap_requests + static_cast<std::uint32_t>(increment);
  if (increment < 0 || error_pool_used + static_cast<std::size_t>(increment) > sizeof error_pool)
    return reinterpret_cast<void*>(-1);
  void* p = error_pool + error_pool_used;
  error_pool_used += static_cast<std::size_t>(increment);
  return p;
}

// abort() and exit() end in _exit: the emulation ends at once, as a failure unless status is 0.
extern "C" [[noreturn]] void _exit(int status) { board::exit(status == 0); }

// The vector table: initial stack, reset, NMI, HardFault, MemManage, BusFault, UsageFault, four
// reserved, SVCall, DebugMonitor, reserved, PendSV, SysTick. In assembly, so that it is data in
// flash whatever the compiler makes of address casts (the linker sets the Thumb bit).
asm(R"(.section .vectors, "a", %progbits
  .word __stack_top
  .word reset_handler
  .word fault_handler, fault_handler, fault_handler, fault_handler, fault_handler
  .word 0, 0, 0, 0
  .word fault_handler, fault_handler, 0, fault_handler
  .word systick_handler
  .text)");
