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
// inputs, a few warm-up calls, then the median of `repetitions` timed calls; the whole set is
// swept a few times and each candidate keeps its smallest median. One executable exists at a
// time. A model with many candidates can split the instantiations over translation units:
// `tune_entries<C, Begin, End, Backends...>(results, repetitions)` sweeps candidates
// [Begin, End); `write_costs` writes the header from the results.
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
  // Warm-up: at least 3 calls and 20 ms (first-call work, threads waking, clocks ramping up).
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000 && (i < 3 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)); ++i)
    exe.run_unchecked(in, out);
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

/// One measured candidate.
struct tune_result {
  std::string_view backend;
  std::uint64_t signature = 0;
  double ns = 0;        // the smallest median over the sweeps that measured it
  double estimate = 0;  // the search's built-in estimate
  std::string about;    // its ops and its first result's shape
};

/// Candidate `I` alone: compiled, bound, timed; then destroyed. Records its median in `results`
/// (keeping the smaller one when an earlier sweep measured it already).
template <class C, std::size_t I, class... Backends>
void measure_one(std::vector<tune_result>& results, int repetitions) {
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

  for (tune_result& r : results)
    if (r.backend == C::backend(I) && r.signature == C::signature(I)) {
      r.ns = std::min(r.ns, ns);
      return;
    }
  std::string about;
  for (const partita::graph_node& n : exe_t::module::value.nodes)  // its ops, in table order
    if (!partita::is_leaf(n.op) && n.op != partita::op_id::call && n.op != partita::op_id::tuple && n.op != partita::op_id::get)
      about.append(partita::name_of(n.op)).push_back(' ');
  about.append("-> ").append(partita::to_string(exe_t::output(0).shp));
  results.push_back({C::backend(I), C::signature(I), ns, C::ns(I), std::move(about)});
}

}  // namespace tune_tool

using tune_tool::tune_result;

/// How many entries `tune` writes for `C`: its candidates that run alone, one per backend and
/// signature.
template <class C>
inline constexpr std::size_t tune_count = [] {
  std::size_t n = 0;
  for (std::size_t i = 0; i < C::size; ++i) n += C::runnable(i) && C::first_of_kind(i) ? 1 : 0;
  return n;
}();

/// One sweep over candidates [Begin, End) of `C` that run alone, each backend and signature once
/// (`C::runnable(I) && C::first_of_kind(I)`), on `Backends...`: each is measured and recorded in
/// `results` (the smaller median when a previous sweep measured it).
template <class C, std::size_t Begin, std::size_t End, class... Backends>
void tune_entries(std::vector<tune_result>& results, int repetitions) {
  static_assert(Begin <= End && End <= C::size, "tune_entries: the range is outside the candidates");
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (
        [&] {
          constexpr std::size_t I = Begin + K;
          if constexpr (C::runnable(I) && C::first_of_kind(I)) tune_tool::measure_one<C, I, Backends...>(results, repetitions);
        }(),
        ...);
  }(std::make_index_sequence<End - Begin>{});
}

/// Writes the header: how it was made, `#pragma once`, the include, then
/// `struct <struct_name> { static constexpr partita::measured_cost entries[] = {...}; };`.
inline void write_costs(std::ostream& out, std::string_view struct_name, const std::vector<tune_result>& results,
                        int repetitions, int sweeps) {
  out << "// Measured costs of the candidates of a cost-based search (partita::cost_candidates),\n"
         "// written by Partita's tune tool (examples/tune/tune.hpp). Each entry is one candidate, named\n"
         "// by its backend and structural signature, with its run time in nanoseconds: the candidate\n"
         "// compiled alone, random weights and inputs, warmed up, then the median of "
      << repetitions << " timed runs;\n// the smallest such median of " << sweeps
      << " sweeps over all candidates. The comment after each entry is the\n"
         "// search's built-in estimate, then the candidate's ops and its first result's shape.\n"
         "// These numbers are tied to this model, these backends and the machine that measured them:\n"
         "// run the tune tool again for another model or machine.\n"
         "#pragma once\n"
         "#include <partita/partita.hpp>\n\n"
         "struct "
      << struct_name << " {\n  static constexpr partita::measured_cost entries[] = {\n";
  for (const tune_result& r : results) {
    char line[128];
    std::snprintf(line, sizeof line, "    {\"%.*s\", 0x%016llxull, %.1f},  // estimate %.1f; ", static_cast<int>(r.backend.size()),
                  r.backend.data(), static_cast<unsigned long long>(r.signature), r.ns, r.estimate);
    out << line << r.about << '\n';
  }
  out << "  };\n};\n";
}

/// Measures every candidate of `C` (a `partita::cost_candidates<Config, Model, Backends...>`)
/// that runs alone on `Backends...`, in `sweeps` sweeps (each candidate keeps its smallest
/// median: a burst of other work on the machine skews one sweep, not all), and writes the header
/// `struct <struct_name> { entries[] }`.
template <class C, class... Backends>
void tune(std::ostream& out, std::string_view struct_name, int repetitions, int sweeps = 3) {
  std::vector<tune_result> results;
  for (int s = 0; s < sweeps; ++s) tune_entries<C, 0, C::size, Backends...>(results, repetitions);
  write_costs(out, struct_name, results, repetitions, sweeps);
}
