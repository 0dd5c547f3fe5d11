// The host's answers for the firmware tests: each tiny model (models/tiny/) on the reference
// backend, from the same seeded weights and test input as the firmware, printed as
//   <model> output <i> <the float's bits, hexadecimal>
// for tests/embedded/run_firmware.py. Each model also runs as `compiled<>` with its weights bound
// from the same table, and must agree bit for bit with the static executable.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include <partita/partita.hpp>

#include <models/tiny/autoencoder.hpp>
#include <models/tiny/ds_cnn.hpp>
#include <models/tiny/mobilenet_v1_025.hpp>
#include <models/tiny/resnet8.hpp>
#include <models/tiny/seeded.hpp>

namespace {

template <class Net>
bool report(const char* name) {
  using table = models::tiny::seeded_weights<Net>;
  using executable = partita::static_executable<Net, table, partita::reference>;
  constexpr std::size_t inputs = executable::template input_span<0>::extent;
  constexpr std::size_t outputs = executable::template output_span<0>::extent;
  static constexpr auto input = models::tiny::test_input<inputs>();

  static executable exe;  // static: the arena of the larger models is large for a stack
  std::array<float, outputs> out{};
  exe.run(input, out);

  partita::compiled<Net, partita::reference> bound;
  bound.bind(partita::weight_set::of(table::tensors));
  std::vector<float> again(outputs);
  bound.run(std::span<const float>(input), again);

  bool same = true;
  for (std::size_t i = 0; i < outputs; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &out[i], sizeof bits);
    std::printf("%s output %zu %08x\n", name, i, static_cast<unsigned>(bits));
    same = same && out[i] == again[i];
  }
  if (!same) std::fprintf(stderr, "%s: static_executable and compiled<> disagree\n", name);
  return same;
}

}  // namespace

int main() {
  const bool ok = report<models::tiny::ds_cnn>("ds_cnn") & report<models::tiny::resnet8>("resnet8") &
                  report<models::tiny::autoencoder>("autoencoder") &
                  report<models::tiny::mobilenet_v1_025>("mobilenet_v1_025");
  return ok ? 0 : 1;
}
