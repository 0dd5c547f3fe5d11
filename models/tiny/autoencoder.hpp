#pragma once
// Anomaly detection: the fully connected autoencoder of MLPerf Tiny (DCASE 2020 task 2 baseline),
// on 5 frames of a 128-band log-mel spectrogram (640 values): four layers of 128, a bottleneck
// of 8, four layers of 128, and the 640 values reconstructed.
#include <models/tiny/layers.hpp>

namespace models::tiny {

struct autoencoder_layers {
  using x = input<"frames", f32, 1, 640>;
  using e1 = relu<fc<x, "enc1", 128, 640>>;
  using e2 = relu<fc<e1, "enc2", 128, 128>>;
  using e3 = relu<fc<e2, "enc3", 128, 128>>;
  using e4 = relu<fc<e3, "enc4", 128, 128>>;
  using code = relu<fc<e4, "bottleneck", 8, 128>>;
  using d1 = relu<fc<code, "dec1", 128, 8>>;
  using d2 = relu<fc<d1, "dec2", 128, 128>>;
  using d3 = relu<fc<d2, "dec3", 128, 128>>;
  using d4 = relu<fc<d3, "dec4", 128, 128>>;
  using out = fc<d4, "reconstruction", 640, 128>;
};

/// Input "frames" f32[1, 640]; output the reconstruction f32[1, 640].
using autoencoder = model<autoencoder_layers::out>;

}  // namespace models::tiny
