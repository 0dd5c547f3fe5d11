// The host's answers for the firmware tests, from the same seeded weights and test input as the
// firmware, printed as
//   <model> output <i> <the float's bits, hexadecimal>
// for tests/embedded/run_firmware.py: each float tiny model (models/tiny/) on the reference
// backend, which also runs as `compiled<>` with its weights bound from the same table and must
// agree bit for bit with the static executable; and each int8 model on the mcu backend's
// integer kernels, which must agree bit for bit with the cpu backend's (`compiled<>`, the
// weights bound from the table).
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

#include <models/tiny/autoencoder.hpp>
#include <models/tiny/ds_cnn.hpp>
#include <models/tiny/mobilenet_v1_025.hpp>
#include <models/tiny/resnet8.hpp>
#include <models/tiny/seeded.hpp>

namespace {

template <class Net, class Backend = partita::reference, class Check = partita::reference>
bool report(const char* name) {
  using table = models::tiny::seeded_weights<Net>;
  using executable = partita::static_executable<Net, table, Backend>;
  constexpr std::size_t inputs = executable::template input_span<0>::extent;
  constexpr std::size_t outputs = executable::template output_span<0>::extent;
  static constexpr auto input = models::tiny::test_input<inputs>();

  static executable exe;  // static: the arena of the larger models is large for a stack
  std::array<float, outputs> out{};
  exe.run(input, out);

  partita::compiled<Net, Check> bound;
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
  if (!same)
    std::fprintf(stderr, "%s: static_executable on %s and compiled<> on %s disagree\n", name,
                 std::string_view(Backend::name).data(), std::string_view(Check::name).data());
  return same;
}

}  // namespace

int main() {
  const bool ok = report<models::tiny::ds_cnn>("ds_cnn") & report<models::tiny::resnet8>("resnet8") &
                  report<models::tiny::autoencoder>("autoencoder") &
                  report<models::tiny::mobilenet_v1_025>("mobilenet_v1_025") &
                  report<models::tiny::ds_cnn_int8, partita::mcu, partita::cpu>("ds_cnn_int8") &
                  report<models::tiny::resnet8_int8, partita::mcu, partita::cpu>("resnet8_int8") &
                  report<models::tiny::autoencoder_int8, partita::mcu, partita::cpu>("autoencoder_int8") &
                  report<models::tiny::mobilenet_v1_025_int8, partita::mcu, partita::cpu>("mobilenet_v1_025_int8");
  return ok ? 0 : 1;
}
