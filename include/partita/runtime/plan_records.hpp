#pragma once
/// The records a plan is made of: steps, value locations, declared tensors, final copies.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/layout.hpp"

namespace partita {

/// Where a value lives at run time.
enum class storage : std::uint8_t { none, input, weight, arena, output };

/// A value's location: the caller's input or output buffer number `index` or weight number
/// `index`, at byte `offset` in it (a view: a contiguous slice), or byte `offset` in the arena;
/// and the order of its elements there (`channels_last` only between the steps of one backend).
struct buffer_ref {
  storage kind = storage::none;
  int index = 0;
  std::size_t offset = 0;
  tensor_layout layout = tensor_layout::planar;
};

/// Which of its kernels a backend runs for a step, and why, as `print(plan)` shows it beside the
/// step: `{"winograd_f2", "3x3 of stride 1 writing NHWC: Winograd F(2x2,3x3)"}`. Empty where
/// the backend says nothing (it has no `note` member, or one kernel for the op).
struct kernel_note {
  std::string_view kernel{};
  std::string_view reason{};
};

/// One kernel call: the op node it computes, the backend that runs it (by name), its argument locations
/// (`first_in`, `num_in` into the plan's `ins`) and the location it writes.
struct plan_step {
  int node = 0;                // in the plan's inlined node table
  int source = 0;              // the same node in the module (a call node for a fused composite)
  std::string_view backend{};  // empty: the host backend
  int first_in = 0;
  int num_in = 0;
  buffer_ref out{};
  kernel_note note{};          // the backend's `note<Step>()`, where it has one
};

/// A declared model input, output or weight.
struct tensor_slot {
  std::string_view name{};
  dtype type = dtype::f32;
  shape shp{};
  int node = 0;
  std::size_t offset = 0;  // weights: byte offset in the weight storage
  const void* literal = nullptr;  // weights: the values of a `literal`, which bind copies from the program
  constexpr std::size_t bytes() const { return static_cast<std::size_t>(shp.elements()) * size_of(type); }
};

/// Copy of a value into an output buffer after the last step, for outputs that are inputs,
/// weights or a value already written to another output.
struct output_copy {
  buffer_ref from{};
  int output = 0;
  std::size_t bytes = 0;
};

}  // namespace partita
