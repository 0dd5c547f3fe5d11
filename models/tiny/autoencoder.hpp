#pragma once
// Anomaly detection: the fully connected autoencoder of MLPerf Tiny (DCASE 2020 task 2 baseline),
// on 5 frames of a 128-band log-mel spectrogram (640 values): four layers of 128, a bottleneck
// of 8, four layers of 128, and the 640 values reconstructed.
#include <models/tiny/layers.hpp>

namespace models::tiny {

/// The network over layer set L (layers.hpp).
template <class L>
struct autoencoder_layers {
  using x = in<L, input<"frames", f32, 1, 640>>;
  using e1 = fc_relu<L, x, "enc1", 128, 640>;
  using e2 = fc_relu<L, e1, "enc2", 128, 128>;
  using e3 = fc_relu<L, e2, "enc3", 128, 128>;
  using e4 = fc_relu<L, e3, "enc4", 128, 128>;
  using code = fc_relu<L, e4, "bottleneck", 8, 128>;
  using d1 = fc_relu<L, code, "dec1", 128, 8>;
  using d2 = fc_relu<L, d1, "dec2", 128, 128>;
  using d3 = fc_relu<L, d2, "dec3", 128, 128>;
  using d4 = fc_relu<L, d3, "dec4", 128, 128>;
  using out = fc<L, d4, "reconstruction", 640, 128>;
};

/// Input "frames" f32[1, 640]; output the reconstruction f32[1, 640].
using autoencoder = model<autoencoder_layers<f32_layers>::out>;
/// The same network in int8 (QDQ): the frames quantized inside, the reconstruction dequantized.
using autoencoder_int8 = model<int8_layers::dq<autoencoder_layers<int8_layers>::out>>;

}  // namespace models::tiny
