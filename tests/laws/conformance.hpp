#pragma once
// The conformance law: a backend computes what `reference` computes, within a tolerance, for
// every model of one list (conformance_models.hpp: layers; conformance_ops.hpp: tensor ops, and
// the list), with the same pseudo-random weights and inputs, finite and then with NaN and ±Inf
// planted in them (and, for the groups that ask, scaled to near the float limit); index inputs are drawn in range (negative ones too), then one out of range
// must make `run` throw a `partita::error` naming it. Quantized inputs (u8, i8) are drawn over
// their dtype's range, and integer outputs must be within `integer_tolerance` units of the last
// place of the reference's (float outputs: within `tolerance`). A backend obeys it by naming itself
// in its test,
//
//   PARTITA_CONFORMANCE_LAW(cpu)   // TEST_CASE("cpu obeys the conformance law")
//
// and states what its runs need beyond its name (a host backend, run-time configurations,
// whether NaN and ±Inf belong to its law, the tolerance) by specializing `conformance_traits`.
// The reference's runs of the shared list come from `partita_law_oracles` (oracle.hpp), which
// the test links through partita_test_main; a list a test makes itself compiles its own.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <partita/partita.hpp>

#include "conformance_ops.hpp"
#include "oracle.hpp"

namespace laws {

/// What a backend's run of the law needs beyond its name. Specialize `conformance_traits<B>`,
/// deriving from `conformance_defaults`, in B's test:
///   host            the backend that runs what B leaves (`void`: B runs every op itself)
///   configurations  the number of run-time configurations every model runs in, each set on the
///                   executable by `configure(exe, k)`; the host's configurations multiply B's
///   special_values  whether B propagates NaN and ±Inf as the reference does, and keeps finite
///                   what the reference keeps finite on inputs near the float limit (if not, B's
///                   law stays on ordinary finite inputs: say why where you specialize)
///   tolerance       the worst relative error allowed against the reference (fp32)
///   integer_tolerance  the worst difference allowed on an integer output (u8, i8, i32, i64),
///                   in units of the last place: 1, what integer arithmetic may differ by from
///                   the reference's float evaluation of a QDQ graph (docs/quantization.md)
struct conformance_defaults {
  using host = void;
  static constexpr int configurations = 1;
  template <class Exe>
  static void configure(Exe&, int) {}
  static constexpr bool special_values = true;
  static constexpr double tolerance = 1e-5;
  static constexpr std::int64_t integer_tolerance = 1;
};

template <class B>
struct conformance_traits : conformance_defaults {};

// The library's own backends. cpu is the host of other backends' runs too, so its traits are
// declared here, once, for every translation unit that runs the law.

/// The reference against itself: the same results, bit for bit, run after run.
template <>
struct conformance_traits<partita::reference> : conformance_defaults {
  static constexpr double tolerance = 0;
  static constexpr std::int64_t integer_tolerance = 0;
};

/// cpu with one thread and with two: each split of the work within the tolerance.
template <>
struct conformance_traits<partita::cpu> : conformance_defaults {
  static constexpr int configurations = 2;
  template <class Exe>
  static void configure(Exe& exe, int k) {
    exe.template state<partita::cpu>().set_threads(k + 1);
  }
};

/// How far `got` is from `want`: the worst relative error (absolute below 1) over the finite
/// expected values; a NaN or infinity expected must come out exactly (any NaN for NaN), and an
/// unexpected one counts as 1e30. A zero of the wrong sign counts as the smallest error there
/// is: only an exact bound (`bound::exact`) rejects it.
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    double d = 0;
    if (std::isnan(w)) {
      d = std::isnan(g) ? 0 : 1e30;
    } else if (std::isinf(w)) {
      d = g == w ? 0 : 1e30;
    } else {
      d = std::abs(g - w) / std::max(1.0, std::abs(w));
      if (!std::isfinite(d)) d = 1e30;
      if (d == 0 && std::signbit(g) != std::signbit(w)) d = std::numeric_limits<double>::denorm_min();
    }
    worst = std::max(worst, d);
  }
  return worst;
}

namespace detail {
// Value `i` of an integer buffer of dtype `type` (u8, i8, i32, i64, or boolean as its byte).
inline std::int64_t integer_at(const void* p, std::size_t i, partita::dtype type) {
  const auto read = [&]<class T>(T) {
    T v;
    std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
    return static_cast<std::int64_t>(v);
  };
  switch (type) {
    case partita::dtype::u8: case partita::dtype::boolean: return read(std::uint8_t{});
    case partita::dtype::i8: return read(std::int8_t{});
    case partita::dtype::i32: return read(std::int32_t{});
    default: return read(std::int64_t{});
  }
}
}  // namespace detail

/// How far the `n` integers of dtype `type` in `got` are from those in `want`: the worst
/// difference, in units of the last place. A boolean or an index (i64) is right or wrong: a
/// wrong one counts as 256, past every backend's tolerance.
inline std::int64_t integer_difference(const void* got, const void* want, std::size_t n, partita::dtype type) {
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t d = detail::integer_at(got, i, type) - detail::integer_at(want, i, type);
    if ((type == partita::dtype::boolean || type == partita::dtype::i64) && d != 0) d = 256;
    worst = std::max(worst, d < 0 ? -d : d);
  }
  return worst;
}

/// The special values a backend must propagate as the reference does: rounds with one NaN, one
/// +Inf, one -Inf at a pseudo-random place in every input, then one with about 5 % of the
/// elements replaced by a mix of the three.
inline void plant_specials(std::vector<std::vector<float>>& ins, int round, unsigned seed) {
  constexpr float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
  std::mt19937 gen(seed * 31u + static_cast<unsigned>(round));
  for (auto& v : ins) {
    if (v.empty()) continue;
    if (round < 3) {
      v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(gen)] = specials[round];
    } else {
      for (float& x : v)
        if (gen() % 20 == 0) x = specials[gen() % 3];
    }
  }
}

/// Every f32 input scaled so that its values, drawn in [-2, 2), reach ±3e38: rows whose squares,
/// and sums of a few values, overflow float while the result of a normalization or a mean stays
/// finite (the reference computes them in double).
inline void scale_to_limit(std::vector<std::vector<float>>& ins) {
  for (auto& v : ins)
    for (float& x : v) x *= 1.5e38f;
}

/// The worst relative errors of one model: on finite inputs, one per configuration; then with
/// one NaN, one +Inf, one -Inf, a mix, and values near the float limit (groups with
/// `large_values` only), each the worst over the configurations (0 where the round does not
/// run); the worst difference of an integer output over every round, in units of the last
/// place; and what went wrong with out-of-range indices.
struct result {
  std::vector<double> finite;
  std::array<double, 5> specials{};
  bool integer_outputs = false;
  std::int64_t integer_error = 0;
  std::string index_errors;  // empty when every out-of-range index made `run` throw, naming it
  double worst() const {
    double w = *std::max_element(specials.begin(), specials.end());
    for (double e : finite) w = std::max(w, e);
    return w;
  }
  std::string summary() const {
    const auto number = [](double e) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", e);
      return std::string(text);
    };
    std::string s = "worst relative errors: finite inputs";
    for (double e : finite) s.append(" ").append(number(e));
    const char* rounds[] = {"; one NaN ", ", one +Inf ", ", one -Inf ", ", a mix ", ", near the float limit "};
    for (std::size_t r = 0; r < specials.size(); ++r) s.append(rounds[r]).append(number(specials[r]));
    if (integer_outputs) s.append("; integer outputs: worst difference ").append(std::to_string(integer_error));
    return s;
  }
};

namespace detail {
template <class Net, class B, class Host>
struct executable {
  using type = partita::compiled<Net, B, Host>;
};
template <class Net, class B>
struct executable<Net, B, void> {
  using type = partita::compiled<Net, B>;
};

/// An executable seen through plain function pointers: the law's loop below is compiled once,
/// not once per model and backend.
struct runner {
  void* exe;
  void (*run)(void* exe, const float* const* in, float* const* out);
  void (*configure)(void* exe, int k);
};

/// Why a run with the out-of-range index `bad` did not fail as it must ("" when it threw a
/// `partita::error` whose message names the index: "index <bad>").
inline std::string index_failure(const runner& r, const float* const* in, float* const* out, std::int64_t bad) {
  try {
    r.run(r.exe, in, out);
  } catch (const partita::error& e) {
    const std::string_view what = e.what();
    if (what.find("index " + std::to_string(bad)) != std::string_view::npos) return {};
    return "the error does not name index " + std::to_string(bad) + ": " + std::string(what);
  } catch (const std::exception& e) {
    return "not a partita::error for index " + std::to_string(bad) + ": " + e.what();
  }
  return "no error for index " + std::to_string(bad);
}

/// Marks output buffer `v` (of dtype `type`) as not written, differently in `run` 0 and 1: -1
/// for floats; for 8-bit integers all 0, then all 0x80, which no value is within 1 of in both.
inline void mark_unwritten(std::vector<float>& v, partita::dtype type, int run) {
  if (type == partita::dtype::f32) std::fill(v.begin(), v.end(), -1.f);
  else std::memset(v.data(), run == 0 ? 0 : 0x80, v.size() * sizeof(float));
}

/// The errors of `exe` against `ref` (both bound): inputs as `specs` describes them from `seed`,
/// every configuration, then, with `special_values`, the rounds with NaN and ±Inf planted in the
/// f32 inputs and, with `large_values` too, the round near the float limit; then each index
/// input's last entry set one past each end of its range. Outputs as `outs` describes them.
inline result measure(const runner& ref, const runner& exe, std::span<const input_spec> specs,
                      std::span<const output_spec> outs, int configurations, bool special_values,
                      bool large_values, unsigned seed) {
  std::mt19937 gen(seed + 1), index_gen(seed + 2), quantized_gen(seed + 3);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<std::vector<float>> base, ins, want, got;
  std::vector<std::vector<std::int64_t>> wide;  // i64 inputs
  std::vector<std::vector<std::int32_t>> narrow;  // i32 inputs
  std::vector<std::vector<std::int8_t>> bytes;  // u8, i8 and boolean inputs
  std::vector<const float*> in_ptrs;
  std::vector<float*> want_ptrs, got_ptrs;
  for (const input_spec& s : specs) {
    std::uniform_int_distribution<std::int64_t> pick(-s.extent, std::max<std::int64_t>(s.extent - 1, 0));
    if (s.type == partita::dtype::i64) {
      wide.emplace_back(s.elements);
      for (std::int64_t& v : wide.back()) v = pick(index_gen);
    } else if (s.type == partita::dtype::i32) {
      narrow.emplace_back(s.elements);
      for (std::int32_t& v : narrow.back()) v = static_cast<std::int32_t>(pick(index_gen));
    } else if (s.type == partita::dtype::u8 || s.type == partita::dtype::i8) {
      std::uniform_int_distribution<int> value(static_cast<int>(partita::lowest_of(s.type)),
                                               static_cast<int>(partita::highest_of(s.type)));
      bytes.emplace_back(s.elements);
      for (std::int8_t& v : bytes.back()) v = static_cast<std::int8_t>(value(quantized_gen));  // u8: the same bits
    } else if (s.type == partita::dtype::boolean) {
      std::bernoulli_distribution truth(0.5);  // a bool's byte is 0 or 1, nothing else
      bytes.emplace_back(s.elements);
      for (std::int8_t& v : bytes.back()) v = truth(quantized_gen) ? 1 : 0;
    } else {
      base.emplace_back(s.elements);
      for (float& v : base.back()) v = dist(gen);
    }
  }
  ins = base;
  for (const output_spec& o : outs) {
    const std::size_t floats = (o.elements * partita::size_of(o.type) + sizeof(float) - 1) / sizeof(float);
    want.emplace_back(floats);
    got.emplace_back(floats, -1.f);
  }
  // Every kernel argument travels as a float pointer; index and integer kernels read it as what
  // it is.
  for (std::size_t i = 0, f = 0, w = 0, n = 0, b = 0; i < specs.size(); ++i) {
    const partita::dtype type = specs[i].type;
    if (type == partita::dtype::i64) in_ptrs.push_back(reinterpret_cast<const float*>(wide[w++].data()));
    else if (type == partita::dtype::i32) in_ptrs.push_back(reinterpret_cast<const float*>(narrow[n++].data()));
    else if (type == partita::dtype::u8 || type == partita::dtype::i8 || type == partita::dtype::boolean)
      in_ptrs.push_back(reinterpret_cast<const float*>(bytes[b++].data()));
    else in_ptrs.push_back(ins[f++].data());
  }
  for (auto& v : want) want_ptrs.push_back(v.data());
  for (auto& v : got) got_ptrs.push_back(v.data());

  result r;
  // The worst relative error of the float outputs in configuration k; the integer outputs'
  // worst difference goes to r.integer_error.
  const auto error_in = [&](int k) {
    exe.configure(exe.exe, k);
    // Twice, each checked: nothing may depend on the previous run, and a kernel that alternates
    // its order from run to run (cpu's batch-1 dense) is checked in both.
    double e = 0;
    for (int run = 0; run < 2; ++run) {
      for (std::size_t o = 0; o < got.size(); ++o) mark_unwritten(got[o], outs[o].type, run);
      exe.run(exe.exe, in_ptrs.data(), got_ptrs.data());
      for (std::size_t o = 0; o < got.size(); ++o) {
        if (outs[o].type == partita::dtype::f32) e = std::max(e, relative_error(got[o], want[o]));
        else
          r.integer_error = std::max(r.integer_error, integer_difference(got[o].data(), want[o].data(), outs[o].elements,
                                                                         outs[o].type));
      }
    }
    return e;
  };
  r.integer_outputs = std::ranges::any_of(outs, [](const output_spec& o) { return o.type != partita::dtype::f32; });
  ref.run(ref.exe, in_ptrs.data(), want_ptrs.data());
  for (int k = 0; k < configurations; ++k) r.finite.push_back(error_in(k));
  // The rounds of special values plant them in f32 inputs: a model without any skips them.
  if (special_values && !base.empty()) {
    for (int round = 0; round < (large_values ? 5 : 4); ++round) {
      for (std::size_t i = 0; i < ins.size(); ++i) std::copy(base[i].begin(), base[i].end(), ins[i].begin());
      if (round < 4) plant_specials(ins, round, seed);
      else scale_to_limit(ins);
      ref.run(ref.exe, in_ptrs.data(), want_ptrs.data());
      for (int k = 0; k < configurations; ++k)
        r.specials[static_cast<std::size_t>(round)] = std::max(r.specials[static_cast<std::size_t>(round)], error_in(k));
    }
  }
  for (std::size_t i = 0, w = 0, n = 0; i < specs.size(); ++i) {
    const partita::dtype type = specs[i].type;
    if (type != partita::dtype::i64 && type != partita::dtype::i32) continue;
    std::int64_t* wide_last = type == partita::dtype::i64 ? &wide[w++].back() : nullptr;
    std::int32_t* narrow_last = type == partita::dtype::i32 ? &narrow[n++].back() : nullptr;
    if (specs[i].extent == 0) continue;  // read by no gather
    const std::int64_t kept = wide_last ? *wide_last : *narrow_last;
    for (const std::int64_t bad : {specs[i].extent, -specs[i].extent - 1}) {
      if (wide_last) *wide_last = bad;
      else *narrow_last = static_cast<std::int32_t>(bad);
      std::string why = index_failure(ref, in_ptrs.data(), want_ptrs.data(), bad);
      if (!why.empty()) why.insert(0, "reference: ");
      for (int k = 0; k < configurations && why.empty(); ++k) {
        exe.configure(exe.exe, k);
        why = index_failure(exe, in_ptrs.data(), got_ptrs.data(), bad);
        if (!why.empty()) why.insert(0, "configuration " + std::to_string(k) + ": ");
      }
      if (!why.empty())
        r.index_errors.append(r.index_errors.empty() ? "" : "; ").append("input " + std::to_string(i) + ", " + why);
    }
    if (wide_last) *wide_last = kept;
    else *narrow_last = static_cast<std::int32_t>(kept);
  }
  return r;
}

/// Stops the test unless the oracle `o` takes `inputs` inputs and returns `outputs` results, as
/// the backend's executable does (once, outside the templates every model instantiates).
inline void require_same_signature(const oracle& o, std::size_t inputs, std::size_t outputs) {
  REQUIRE(o.inputs.size() == inputs);
  REQUIRE(o.outputs.size() == outputs);
}

/// Reports one model's result as doctest checks, against the bounds `tolerance` (float outputs)
/// and `integer_tolerance` (integer outputs).
inline void report(std::string_view backend, std::string_view about, int index, const result& r, double tolerance,
                   std::int64_t integer_tolerance) {
  const std::string model =
      std::string("backend '").append(backend).append("', ").append(about).append(": model ").append(std::to_string(index));
  const std::string errors = r.summary();
  INFO(model);
  INFO(errors);
  CHECK(r.worst() <= tolerance);
  CHECK(r.integer_error <= integer_tolerance);
  INFO(r.index_errors);
  CHECK(r.index_errors.empty());
}
}  // namespace detail

/// The law for backend `B`, with `Host` running what B leaves (by default its traits' host):
/// `conformance<B>::check()` runs every model of the list, `check<op_models>()` one part of it,
/// `run<Net>()` one model.
template <class B, class Host = typename conformance_traits<B>::host>
struct conformance {
  using traits = conformance_traits<B>;
  using host = Host;
  using host_traits = conformance_traits<host>;  // the defaults for `void`
  static constexpr int configurations = traits::configurations * host_traits::configurations;
  static constexpr bool special_values = traits::special_values && host_traits::special_values;
  static constexpr double tolerance = traits::tolerance;

  /// `Net` compiled for B (and its host).
  template <class Net>
  using executable = typename detail::executable<Net, B, host>::type;

  /// `Net` on the reference and on B with the same weights (seeded by `seed`) and inputs. A model
  /// whose weights are all literals is not bound: its executables bind themselves.
  template <class Net>
  static result run(unsigned seed = 7) {
    static_assert(partita::compiled<Net, partita::reference>::num_inputs == executable<Net>::num_inputs &&
                  partita::compiled<Net, partita::reference>::num_outputs == executable<Net>::num_outputs);
    return against<Net>(make_oracle<Net>(seed), seed);
  }

  /// `Net` on B against its oracle `o` (whose weights were seeded by `seed`); with
  /// `large_values`, the round near the float limit too.
  template <class Net>
  static result against(const oracle& o, unsigned seed, bool large_values = false) {
    using exe_t = executable<Net>;
    detail::require_same_signature(o, exe_t::num_inputs, exe_t::num_outputs);
    auto exe = std::make_unique<exe_t>();
    if (o.weights) exe->bind(o.weights->set);
    return against(o, detail::runner{exe.get(), &detail::run_thunk<exe_t>, &configure<exe_t>}, seed, large_values);
  }

  /// Checks every model of `List` (by default the whole list), naming each one that fails.
  template <class List = all_models>
  static void check() {
    check_list(List{});
  }

  /// The bound for the models of `Group`: B's tolerance, or the group's where it is tighter.
  template <class Group>
  static constexpr double bound_for() {
    if constexpr (requires { Group::tolerance; }) return std::min(tolerance, static_cast<double>(Group::tolerance));
    return tolerance;
  }

  /// Whether the models of `Group` run the round near the float limit (`large_values`).
  template <class Group>
  static constexpr bool large_values_for() {
    if constexpr (requires { Group::large_values; }) return Group::large_values;
    return false;
  }

 private:
  template <class... Groups>
  static void check_list(model_list<Groups...>) {
    (check_group<Groups>(static_cast<const Groups*>(nullptr)), ...);
  }
  template <class Group, partita::fixed_string About, class... Nets>
  static void check_group(const model_group<About, Nets...>*) {
    int index = 0;
    (check_model<Group, Nets>(index++), ...);
  }
  // Model `index` of `Group`, against the shared oracle where the group is the shared list's.
  template <class Group, class Net>
  static void check_model(int index) {
    constexpr unsigned seed = 7;
    const oracle o = [&] {
      if constexpr (shared_group<Group>) return group_oracle<Group>(index, seed);
      else return make_oracle<Net>(seed);
    }();
    if constexpr (std::is_same_v<B, partita::reference> && std::is_void_v<host> && shared_group<Group>) {
      // The reference against itself: a second executable of the same compiled code, from the
      // same library, run after run bit for bit.
      const oracle again = group_oracle<Group>(index, seed);
      detail::report(B::name, Group::about, index,
                     against(o, detail::runner{again.exe.get(), again.run, &no_configuration}, seed, large_values_for<Group>()),
                     bound_for<Group>(), traits::integer_tolerance);
    } else {
      detail::report(B::name, Group::about, index, against<Net>(o, seed, large_values_for<Group>()), bound_for<Group>(),
                     traits::integer_tolerance);
    }
  }
  static void no_configuration(void*, int) {}
  // The subject `subject` against the oracle `o` (whose weights were seeded by `seed`).
  static result against(const oracle& o, const detail::runner& subject, unsigned seed, bool large_values) {
    return detail::measure(detail::runner{o.exe.get(), o.run, nullptr}, subject, o.inputs, o.outputs, configurations,
                           special_values, large_values, seed);
  }
  // Configuration k: B's (k modulo its count), then its host's.
  template <class Exe>
  static void configure(void* exe, int k) {
    traits::configure(*static_cast<Exe*>(exe), k % traits::configurations);
    if constexpr (!std::is_void_v<host>) host_traits::configure(*static_cast<Exe*>(exe), k / traits::configurations);
  }
};

}  // namespace laws

/// The whole law for backend `B`, as one test case: `PARTITA_CONFORMANCE_LAW(cpu)`.
#define PARTITA_CONFORMANCE_LAW(...) \
  TEST_CASE(#__VA_ARGS__ " obeys the conformance law") { ::laws::conformance<__VA_ARGS__>::check(); }

/// One part of the law (`op_models`, `conv_models`, `network_models`) for backend `B`, as one test
/// case: a backend whose whole run is heavy to compile splits it over translation units.
#define PARTITA_CONFORMANCE_LAW_PART(B, Part) \
  TEST_CASE(#B " obeys the conformance law: " #Part) { ::laws::conformance<B>::check<::laws::Part>(); }
