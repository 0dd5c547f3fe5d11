#pragma once
/// `static_tensor`: one entry of a weight table compiled into the program.
#include <array>
#include <string_view>

#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"

namespace partita {

/// One tensor of a weight table compiled into the program: its name, dtype, shape and bytes.
/// `tools/partita_import.py --embed-weights=arrays` writes such tables, `constexpr` arrays that
/// a microcontroller's linker keeps in flash, for `static_executable` to read in place.
struct static_tensor {
  std::string_view name;
  dtype type = dtype::f32;
  shape shp{};
  const void* data = nullptr;
};

/// The weight table of a model without weights (or with literals only).
struct no_static_weights {
  static constexpr std::array<static_tensor, 0> tensors{};
};

}  // namespace partita
