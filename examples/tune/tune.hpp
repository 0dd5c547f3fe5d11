#pragma once
// Measures the candidates of a cost-based search (`partita::cost_candidates`) and writes them as
// a header of `partita::measured_cost` entries, for `cost_partition_with<cost_config<Costs>, ...>`.
//
//   using C = partita::cost_candidates<partita::cost_config<>, net, onednn, cpu>;
//   std::ofstream out("net_costs.hpp");
//   tune<C, onednn, cpu>(out, "net_costs", 25);
//
// Each candidate that can run alone is measured once per backend and signature: compiled alone
// (`candidate_module<C, I>`), bound to deterministic random weights, run on deterministic random
// inputs, a few warm-up calls, then the median of `repetitions` timed calls. One executable
// exists at a time. A model with many candidates can split the work over translation units:
// `tune_entries<C, Begin, End, Backends...>` writes the entries of candidates [Begin, End), between
// `write_costs_prologue` and `write_costs_epilogue`.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <partita/partita.hpp>

#include "../resnet18/random_weights.hpp"

namespace tune_tool {

/// The median of `repetitions` timed calls of `exe` (after a few warm-up calls), in nanoseconds.
template <class Exe>
double median_ns(Exe& exe, const float* const* in, float* const* out, int repetitions) {
  for (int i = 0; i < 3; ++i) exe.run_unchecked(in, out);
  std::vector<double> ns;
  ns.reserve(static_cast<std::size_t>(std::max(repetitions, 1)));
  for (int i = 0; i < std::max(repetitions, 1); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    exe.run_unchecked(in, out);
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

/// Candidate `I` alone: compiled, bound, timed; then destroyed. Writes its entry line.
template <class C, std::size_t I, class... Backends>
void measure_one(std::ostream& out, int repetitions) {
  using exe_t = partita::compiled<partita::candidate_module<C, I>, Backends...>;
  std::vector<std::vector<float>> storage;
  const partita::weight_set weights = resnet18::random_weights<exe_t>(storage);
  std::vector<std::vector<float>> ins, outs;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  for (std::size_t i = 0; i < exe_t::num_inputs; ++i) {
    const std::size_t n = (exe_t::input(i).bytes() + sizeof(float) - 1) / sizeof(float);
    ins.push_back(resnet18::pseudo_random(n, static_cast<std::uint32_t>(1000 + i), -1.0f, 1.0f));
  }
  for (std::size_t i = 0; i < exe_t::num_outputs; ++i)
    outs.emplace_back((exe_t::output(i).bytes() + sizeof(float) - 1) / sizeof(float));
  for (auto& v : ins) in_ptrs.push_back(v.data());
  for (auto& v : outs) out_ptrs.push_back(v.data());

  double ns = 0;
  {
    auto exe = std::make_unique<exe_t>();  // arena and weights on the heap
    exe->bind(weights);
    ns = median_ns(*exe, in_ptrs.data(), out_ptrs.data(), repetitions);
  }

  char line[96];
  std::snprintf(line, sizeof line, "    {\"%.*s\", 0x%016llxull, %.1f},", static_cast<int>(C::backend(I).size()),
                C::backend(I).data(), static_cast<unsigned long long>(C::signature(I)), ns);
  char estimate[48];
  std::snprintf(estimate, sizeof estimate, "  // estimate %.1f;", C::ns(I));
  out << line << estimate;
  for (std::size_t s = 0; s < exe_t::num_steps; ++s) out << (s ? ", " : " ") << exe_t::step_name(s);
  out << " -> " << partita::to_string(exe_t::output(0).shp) << '\n';
}

}  // namespace tune_tool

/// Writes the opening of the header: how it was made, `#pragma once`, the include, `struct`.
inline void write_costs_prologue(std::ostream& out, std::string_view struct_name, int repetitions) {
  out << "// Measured costs of the candidates of a cost-based search (partita::cost_candidates),\n"
         "// written by Partita's tune tool (examples/tune). Each entry is one candidate, named by its\n"
         "// backend and structural signature, with the median of "
      << repetitions
      << " timed runs in nanoseconds, measured\n"
         "// alone (compiled as a module of its own, random weights and inputs, after warm-up runs);\n"
         "// the comment after it is the search's built-in estimate and the steps that ran.\n"
         "// These numbers are tied to this model, these backends and the machine that measured them:\n"
         "// regenerate them with the tune tool for another model or machine.\n"
         "#pragma once\n"
         "#include <partita/partita.hpp>\n\n"
         "struct "
      << struct_name << " {\n  static constexpr partita::measured_cost entries[] = {\n";
}

/// Writes the end of the header.
inline void write_costs_epilogue(std::ostream& out) { out << "  };\n};\n"; }

/// Measures candidates [Begin, End) of `C` that run alone, each backend and signature once
/// (`C::runnable(I) && C::first_of_kind(I)`), writing one entry line each.
template <class C, std::size_t Begin, std::size_t End, class... Backends>
void tune_entries(std::ostream& out, int repetitions) {
  static_assert(Begin <= End && End <= C::size, "tune_entries: the range is outside the candidates");
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (
        [&] {
          constexpr std::size_t I = Begin + K;
          if constexpr (C::runnable(I) && C::first_of_kind(I)) tune_tool::measure_one<C, I, Backends...>(out, repetitions);
        }(),
        ...);
  }(std::make_index_sequence<End - Begin>{});
}

/// Measures every candidate of `C` (a `partita::cost_candidates<Config, Model, Backends...>`)
/// on `Backends...` and writes the header `struct <struct_name> { entries[] }`.
template <class C, class... Backends>
void tune(std::ostream& out, std::string_view struct_name, int repetitions) {
  write_costs_prologue(out, struct_name, repetitions);
  tune_entries<C, 0, C::size, Backends...>(out, repetitions);
  write_costs_epilogue(out);
}
