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
// time. Between every two backends it also times a hand-over: a pair of candidates run together
// minus each alone (`tune_handovers`). A model with many candidates can split the instantiations
// over translation units: `tune_entries<C, Begin, End, Backends...>(results, repetitions)`
// sweeps candidates [Begin, End); `write_costs` writes the header from the results.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <partita/partita.hpp>

#include <models/random_weights.hpp>

namespace tune_tool {

/// The median of `repetitions` timed calls of `exe` (after a few warm-up calls), in nanoseconds;
/// with `idle`, each call after that long without work (no thread of a backend still spinning).
template <class Exe>
double median_ns(Exe& exe, const float* const* in, float* const* out, int repetitions,
                 std::chrono::milliseconds idle = std::chrono::milliseconds(0)) {
  // Warm-up: at least 3 calls and 20 ms (first-call work, threads waking, clocks ramping up).
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000 && (i < 3 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)); ++i)
    exe.run_unchecked(in, out);
  std::vector<double> ns;
  ns.reserve(static_cast<std::size_t>(std::max(repetitions, 1)));
  for (int i = 0; i < std::max(repetitions, 1); ++i) {
    if (idle.count() > 0) std::this_thread::sleep_for(idle);
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

/// `Module` compiled for `Backends...`, bound to deterministic weights, run on deterministic
/// inputs: the median of `repetitions` timed calls, in nanoseconds; then destroyed.
template <class Module, class... Backends>
double time_module(int repetitions, std::chrono::milliseconds idle = std::chrono::milliseconds(0)) {
  using exe_t = partita::compiled<Module, Backends...>;
  std::vector<std::vector<float>> storage;
  const partita::weight_set weights = models::random_weights<exe_t>(storage);
  std::vector<std::vector<float>> ins, outs;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  for (std::size_t i = 0; i < exe_t::num_inputs; ++i) {
    const std::size_t n = (exe_t::input(i).bytes() + sizeof(float) - 1) / sizeof(float);
    ins.push_back(models::pseudo_random(n, static_cast<std::uint32_t>(1000 + i), -1.0f, 1.0f));
  }
  for (std::size_t i = 0; i < exe_t::num_outputs; ++i)
    outs.emplace_back((exe_t::output(i).bytes() + sizeof(float) - 1) / sizeof(float));
  for (auto& v : ins) in_ptrs.push_back(v.data());
  for (auto& v : outs) out_ptrs.push_back(v.data());
  auto exe = std::make_unique<exe_t>();  // arena and weights on the heap
  exe->bind(weights);
  return median_ns(*exe, in_ptrs.data(), out_ptrs.data(), repetitions, idle);
}

/// Candidate `I` alone: compiled, bound, timed; then destroyed. Records its median in `results`
/// (keeping the smaller one when an earlier sweep measured it already).
template <class C, std::size_t I, class... Backends>
void measure_one(std::vector<tune_result>& results, int repetitions) {
  using module = partita::candidate_module<C, I>;
  const double ns = time_module<module, Backends...>(repetitions);
  for (tune_result& r : results)
    if (r.backend == C::backend(I) && r.signature == C::signature(I)) {
      r.ns = std::min(r.ns, ns);
      return;
    }
  using exe_t = partita::compiled<module, Backends...>;
  std::string about;
  for (const partita::graph_node& n : module::value.nodes)  // its ops, in table order
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

/// One measured hand-over between two backends.
struct handover_result {
  std::string_view from, to;
  double ns = 0;
};

/// The hand-over from backend `From` to backend `To` (indices in `Backends...`), if the model
/// has a pair of candidates to time it with (`C::handover`): the pair run together minus each
/// run alone, the smallest over `sweeps` sweeps, never below zero. Every call starts after 20 ms
/// idle: run back to back, a pair would also pay the hand-over from its second backend to its
/// first, across calls. Appended to `out`.
template <class C, int From, int To, class... Backends>
void measure_handover(std::vector<handover_result>& out, int repetitions, int sweeps) {
  constexpr typename C::pair p = C::handover(From, To);
  if constexpr (p.found) {
    double best = -1;
    for (int s = 0; s < sweeps; ++s) {
      constexpr std::chrono::milliseconds idle(20);
      const double pair = tune_tool::time_module<partita::handover_module<C, p.i, p.j>, Backends...>(repetitions, idle);
      const double first = tune_tool::time_module<partita::candidate_module<C, p.i>, Backends...>(repetitions, idle);
      const double second = tune_tool::time_module<partita::candidate_module<C, p.j>, Backends...>(repetitions, idle);
      const double d = std::max(0.0, pair - first - second);
      best = best < 0 ? d : std::min(best, d);
    }
    out.push_back({C::backend(p.i), C::backend(p.j), best});
  }
}

/// Every hand-over between two different backends of `Backends...` that `C` has a pair for.
template <class C, class... Backends>
std::vector<handover_result> tune_handovers(int repetitions, int sweeps) {
  std::vector<handover_result> out;
  constexpr int n = static_cast<int>(sizeof...(Backends));
  [&]<int... K>(std::integer_sequence<int, K...>) {
    ([&] {
      if constexpr (K / n != K % n) measure_handover<C, K / n, K % n, Backends...>(out, repetitions, sweeps);
    }(),
     ...);
  }(std::make_integer_sequence<int, n * n>{});
  return out;
}

/// Writes the header: how it was made, `#pragma once`, the include, then
/// `struct <struct_name> { static constexpr partita::measured_cost entries[] = {...}; ...};`,
/// with `transfers[]` when hand-overs were measured.
inline void write_costs(std::ostream& out, std::string_view struct_name, const std::vector<tune_result>& results,
                        int repetitions, int sweeps, const std::vector<handover_result>& handovers = {}) {
  out << "// Measured costs of the candidates of a cost-based search (partita::cost_candidates),\n"
         "// written by Partita's tune tool (tools/tune/tune.hpp). Each entry is one candidate, named\n"
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
  out << "  };\n";
  if (!handovers.empty()) {
    out << "  // Handing a result from one backend to another: a pair of candidates run together, minus each\n"
           "  // run alone.\n  static constexpr partita::measured_transfer transfers[] = {\n";
    for (const handover_result& h : handovers) {
      char line[128];
      std::snprintf(line, sizeof line, "    {\"%.*s\", \"%.*s\", %.1f},\n", static_cast<int>(h.from.size()), h.from.data(),
                    static_cast<int>(h.to.size()), h.to.data(), h.ns);
      out << line;
    }
    out << "  };\n";
  }
  out << "};\n";
}

/// Measures every candidate of `C` (a `partita::cost_candidates<Config, Model, Backends...>`)
/// that runs alone on `Backends...`, in `sweeps` sweeps (each candidate keeps its smallest
/// median: a burst of other work on the machine skews one sweep, not all), and writes the header
/// `struct <struct_name> { entries[] }`.
template <class C, class... Backends>
void tune(std::ostream& out, std::string_view struct_name, int repetitions, int sweeps = 3) {
  std::vector<tune_result> results;
  for (int s = 0; s < sweeps; ++s) tune_entries<C, 0, C::size, Backends...>(results, repetitions);
  write_costs(out, struct_name, results, repetitions, sweeps, tune_handovers<C, Backends...>(repetitions, sweeps));
}
