// The firmware's start: the vector table, the reset handler (FPU on, .data copied, .bss zeroed,
// constructors run, main called, the emulation ended with main's verdict), the fault and SysTick
// handlers, and the heap's guard: any allocation is recorded and refused.
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

// No heap: newlib's malloc calls _sbrk, which refuses and counts the request.
extern "C" void* _sbrk(std::ptrdiff_t increment) {
  board::heap_requests = board::heap_requests + static_cast<std::uint32_t>(increment);
  return reinterpret_cast<void*>(-1);
}

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
