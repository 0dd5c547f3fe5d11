#pragma once
// The reference's side of the conformance law (laws/conformance.hpp): for one model, the
// reference executable bound to the law's weights, behind a function pointer, with what the law
// feeds it and what it returns. For the models of the shared list (`all_models`) the oracles are
// compiled once, into the library `partita_law_oracles` (oracles_*.cpp, at -O1), instead of once
// in every backend's test: about a third of a law's compile time (cpu's op models under GCC 12:
// 153 s with the reference compiled in, 104 without). Models a test lists itself compile their
// oracle where they run (`make_oracle`).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <partita/partita.hpp>

#include "conformance_ops.hpp"

namespace laws {

/// The law's weights: batch-norm variances (names ending in "var") in [0.5, 1.5), everything
/// else in [-1, 1) scaled by 1/sqrt(fan-in), so that outputs stay O(1); seeded by `seed`, in the
/// order `slots` lists them. Literals are left out: their values are in the program.
///
/// Quantization parameters and quantized weights follow their names and dtypes:
///   f32 named "<tensor>.scale"  a quantization scale, in [1/256, 3/256): positive and not
///                               tiny, so that an i8 weight of it dequantizes to about ±1
///   any named "<tensor>.zp"     a zero point, within 8 of the middle of its dtype's range
///                               (u8: 128, i8 and i32: 0), so that weights stay about centred;
///                               zero points at the ends of the range are the models' literals
///   other u8 and i8             quantized values, over the dtype's range
///   other i32                   biases, in [-256, 256): a bias of a scale drawn so moves a
///                               result by up to about ±3
///   boolean                     masks: true or false
struct weight_values {
  std::vector<std::vector<float>> data;
  std::vector<std::vector<std::byte>> integers;  // the u8, i8 and i32 weights, little-endian
  partita::weight_set set;
  weight_values(std::span<const partita::tensor_slot> slots, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    data.reserve(slots.size());
    integers.reserve(slots.size());
    for (const partita::tensor_slot& w : slots) {
      if (w.literal) continue;
      const std::span<const std::int64_t> dims(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank));
      if (w.type != partita::dtype::f32) {
        const bool zero_point = std::string_view(w.name).ends_with(".zp");
        integers.push_back(draw_integers(w.type, static_cast<std::size_t>(w.shp.elements()), zero_point, gen));
        set.add(std::string(w.name), w.type, integers.back(), dims);
        continue;
      }
      const std::int64_t fan_in = w.shp.rank >= 2 ? w.shp.elements() / w.shp[0] : 1;
      const float scale = 1.f / std::sqrt(static_cast<float>(fan_in));
      const bool variance = std::string_view(w.name).ends_with("var");
      const bool quantization_scale = std::string_view(w.name).ends_with(".scale");
      data.emplace_back(static_cast<std::size_t>(w.shp.elements()));
      for (float& v : data.back()) {
        if (quantization_scale) v = (2.f + dist(gen)) / 256.f;
        else v = variance ? 0.5f + 0.5f * (dist(gen) + 1.f) : dist(gen) * scale;
      }
      set.add(std::string(w.name), data.back(), dims);
    }
  }

 private:
  // `n` values of integer dtype `type` as bytes, by the rules above.
  static std::vector<std::byte> draw_integers(partita::dtype type, std::size_t n, bool zero_point, std::mt19937& gen) {
    const std::int64_t middle = type == partita::dtype::u8 ? 128 : 0;
    const bool wide = type == partita::dtype::i32;
    std::uniform_int_distribution<std::int64_t> pick(
        zero_point ? middle - 8 : wide ? -256 : partita::lowest_of(type),
        zero_point ? middle + 8 : wide ? 255 : partita::highest_of(type));
    const std::size_t size = partita::size_of(type);
    std::vector<std::byte> bytes(n * size);
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = static_cast<std::int32_t>(pick(gen));
      std::memcpy(bytes.data() + i * size, &v, size);  // the low bytes: little-endian, as weight_set's
    }
    return bytes;
  }
};

/// The law's weights for every weight executable `Exe` declares: `random_weights<exe_t> w(5);
/// exe.bind(w.set);`.
template <class Exe>
struct random_weights : weight_values {
  explicit random_weights(unsigned seed) : weight_values(std::span(Exe::plan.weights.data(), Exe::plan.weights.size()), seed) {}
};

/// One model on the reference, bound: the executable (`run` calls it), the weights it was bound
/// to (every backend's run binds the same), the inputs as the law feeds them and what it
/// returns (`output_spec`). A model whose weights are all literals binds itself (`weights` null).
struct oracle {
  std::shared_ptr<void> exe;
  void (*run)(void* exe, const float* const* in, float* const* out) = nullptr;
  std::shared_ptr<const weight_values> weights;
  std::vector<input_spec> inputs;
  std::vector<output_spec> outputs;
};

namespace detail {
template <class Exe>
void run_thunk(void* exe, const float* const* in, float* const* out) {
  static_cast<Exe*>(exe)->run_unchecked(in, out);
}
}  // namespace detail

/// `Net`'s oracle, its weights seeded by `seed`: compiles `Net` on the reference here.
template <class Net>
oracle make_oracle(unsigned seed) {
  using ref_t = partita::compiled<Net, partita::reference>;
  oracle o;
  auto exe = std::make_shared<ref_t>();
  if constexpr (!ref_t::literals_only) {
    auto w = std::make_shared<const random_weights<ref_t>>(seed);
    exe->bind(w->set);
    o.weights = std::move(w);
  }
  static constexpr auto ins = input_specs<ref_t>();
  o.inputs.assign(ins.begin(), ins.end());
  for (std::size_t i = 0; i < ref_t::num_outputs; ++i)
    o.outputs.push_back({static_cast<std::size_t>(ref_t::output(i).shp.elements()), ref_t::output(i).type});
  o.run = &detail::run_thunk<ref_t>;
  o.exe = std::move(exe);
  return o;
}

/// Whether `Group` is one of the shared list's groups, whose oracles `partita_law_oracles` holds.
template <class Group>
inline constexpr bool shared_group = []<class... Groups>(model_list<Groups...>) {
  return (std::is_same_v<Group, Groups> || ...);
}(all_models{});

/// The oracle of model `index` of `Group` (one of the shared list's groups), its weights seeded
/// by `seed`. Defined in oracle_groups.hpp and compiled into `partita_law_oracles` only.
template <class Group>
oracle group_oracle(int index, unsigned seed);

}  // namespace laws
