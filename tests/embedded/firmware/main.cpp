// One model on the microcontroller: its executable in static memory, its weights in flash, one
// inference on the test input, then a report the host reads (tests/embedded/run_firmware.py):
//   calibration <instructions counted for a loop of exactly 2,000,000>
//   instructions <retired instructions of the run, from SysTick under -icount>
//   output <i> <the float's bits, hexadecimal>
//   heap <bytes asked of the heap: 0>
// PARTITA_FIRMWARE_HEADER names the model's header and PARTITA_FIRMWARE_MODEL its type
// (models/tiny/); PARTITA_FIRMWARE_BACKENDS the backends, host last.
#include <cstddef>
#include <cstdint>

#include <models/tiny/seeded.hpp>
#include PARTITA_FIRMWARE_HEADER

#include "board.hpp"

namespace board {
extern volatile std::uint32_t heap_requests;
}

namespace {
using net = PARTITA_FIRMWARE_MODEL;
using executable = partita::static_executable<net, models::tiny::seeded_weights<net>, PARTITA_FIRMWARE_BACKENDS>;
constexpr std::size_t inputs = executable::input_span<0>::extent;
constexpr std::size_t outputs = executable::output_span<0>::extent;

// A failed check prints its message and ends the emulation as a failure. Installed before any
// other constructor runs (the executable's, whose backends prepare their steps), by priority.
[[noreturn]] void error_hook(const char* message) noexcept {
  board::write("error: ");
  board::write(message);
  board::write("\n");
  board::exit(false);
}
struct hook_installer {
  hook_installer() { partita::set_error_hook(error_hook); }
};
__attribute__((init_priority(101))) hook_installer install_hook;

executable exe;                                              // .bss: the arena, planned
constexpr auto input = models::tiny::test_input<inputs>();  // .rodata: flash
float output[outputs];

// Under -icount shift=0 an instruction takes 1 ns of virtual time; SysTick runs on the 25 MHz
// system clock, 40 ns a tick.
constexpr std::uint64_t instructions_per_tick = 40;

// A loop of two instructions an iteration, 1,000,000 times: the host checks that the count is
// 2,000,000, so that a board or emulator whose clocks differ cannot report wrong figures.
std::uint64_t calibration() {
  board::start_ticks();
  std::uint32_t n = 1000000;
  asm volatile("1: subs %0, %0, #1\n bne 1b" : "+r"(n) : : "cc");
  return board::ticks() * instructions_per_tick;
}
}  // namespace

int main() {
  board::write("calibration ");
  board::write(calibration());
  board::write("\n");
  board::start_ticks();
  exe.run(input, output);
  const std::uint64_t ticks = board::ticks();
  board::write("instructions ");
  board::write(ticks * instructions_per_tick);
  board::write("\n");
  for (std::size_t i = 0; i < outputs; ++i) {
    board::write("output ");
    board::write(static_cast<std::uint64_t>(i));
    board::write(" ");
    board::write_bits(output[i]);
    board::write("\n");
  }
  board::write("heap ");
  board::write(static_cast<std::uint64_t>(board::heap_requests));
  board::write("\n");
  return board::heap_requests == 0 ? 0 : 1;
}
