#pragma once
/// What the mcu backend's fused kernels do to a sum before storing it: a residual, an activation.
#include <cstdint>

namespace partita::detail::mcu {

/// The activation a fused step ends with.
enum class act : std::uint8_t { none, relu, clip };

/// The end of a fused step, fixed at compile time: whether a residual is added (before the
/// activation, as in `relu(conv + bias + shortcut)`), and the activation with its bounds.
struct epilogue {
  bool residual = false;
  act activation = act::none;
  float lo = 0.f, hi = 0.f;

  /// `v`, the sum with its bias, plus `r` when there is a residual, activated. A NaN stays a
  /// NaN through both activations, as on the reference (`std::max(v, 0.f)`).
  constexpr float operator()(float v, float r) const {
    if (residual) v += r;
    if (activation == act::relu) return v < 0.f ? 0.f : v;
    if (activation == act::clip) return v < lo ? lo : (v > hi ? hi : v);
    return v;
  }
};

}  // namespace partita::detail::mcu
