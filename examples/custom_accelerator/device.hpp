#pragma once
// toy_npu: a pretend vendor SDK for a convolution accelerator, C-like as real ones are. Weights are
// uploaded once, reordered to the device's layout, and named by a handle; each launch is logged.
#include <vector>

namespace toy_npu {

/// The device's limits: stride 1, no dilation, one group, at most 256 channels in and out.
inline constexpr int max_channels = 256;

using handle = int;
struct filter { int out_c = 0, in_c = 0, k_h = 0, k_w = 0; std::vector<float> w, b; };  // w: [out_c][k_h][k_w][in_c]
struct launch { handle weights; int out_c, out_h, out_w; };
struct session { std::vector<filter> memory; std::vector<launch> log; };  // device memory, launch log

/// Copies OIHW weights and a bias to the device (into `h`'s memory if `h` is a handle); -1: too large.
inline handle upload_weights(session& s, handle h, int out_c, int in_c, int k_h, int k_w, const float* w, const float* b) {
  if (out_c > max_channels || in_c > max_channels) return -1;
  if (h < 0) { h = static_cast<handle>(s.memory.size()); s.memory.emplace_back(); }
  filter& f = s.memory[h] = {out_c, in_c, k_h, k_w, std::vector<float>(out_c * in_c * k_h * k_w), std::vector<float>(b, b + out_c)};
  for (int o = 0; o < out_c; ++o)
    for (int i = 0; i < in_c; ++i)
      for (int k = 0; k < k_h * k_w; ++k) f.w[(o * k_h * k_w + k) * in_c + i] = w[(o * in_c + i) * k_h * k_w + k];
  return h;
}

/// out = relu(conv2d(in, `h`, stride 1, zero padding pad_h / pad_w) + bias), NCHW; -1: no such `h`.
inline int conv_bias_relu(session& s, handle h, const float* in, float* out, int batch, int in_h, int in_w, int pad_h, int pad_w) {
  if (h < 0 || h >= static_cast<int>(s.memory.size())) return -1;
  const filter& f = s.memory[h];
  const int out_h = in_h + 2 * pad_h - f.k_h + 1, out_w = in_w + 2 * pad_w - f.k_w + 1;
  for (int n = 0; n < batch; ++n)
    for (int o = 0; o < f.out_c; ++o)
      for (int oy = 0; oy < out_h; ++oy)
        for (int ox = 0; ox < out_w; ++ox, ++out) {
          float acc = f.b[o];
          for (int ky = 0, iy = oy - pad_h; ky < f.k_h; ++ky, ++iy)
            for (int kx = 0, ix = ox - pad_w; kx < f.k_w; ++kx, ++ix)
              if (iy >= 0 && iy < in_h && ix >= 0 && ix < in_w)
                for (int i = 0; i < f.in_c; ++i)
                  acc += f.w[((o * f.k_h + ky) * f.k_w + kx) * f.in_c + i] * in[((n * f.in_c + i) * in_h + iy) * in_w + ix];
          *out = acc > 0.f ? acc : 0.f;
        }
  s.log.push_back({h, f.out_c, out_h, out_w});
  return 0;
}

}  // namespace toy_npu
