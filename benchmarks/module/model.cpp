// One imported model (or two: a quantized one and its float original) as a shared module that a
// benchmark script loads with ctypes (benchmarks/harness.py), so that Python calls Partita and
// the peers (ONNX Runtime, OpenVINO, PyTorch) in turn in one process. Built once per model by
// the benchmarks' CMake files: PARTITA_BENCH_NET names the imported model's namespace and
// PARTITA_BENCH_NET_HEADER its header; PARTITA_BENCH_NET2 (optional) a second model with the same
// input and output sizes, absent in profiling builds (PARTITA_PROFILE); PARTITA_BENCH_WEIGHTS is
// the importer's output directory.
//
// A model has one input (f32, or i64 token ids) and one f32 output. Variant 0 is the first
// model, 1 the second. Errors are caught at the boundary: functions return null or -1 and
// pbi_error() says why.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <partita/partita.hpp>

#include "../int8/madd_peak.hpp"

#define PBI_STR2(x) #x
#define PBI_STR(x) PBI_STR2(x)
#include PARTITA_BENCH_NET_HEADER
#ifdef PARTITA_BENCH_NET2
#include PARTITA_BENCH_NET2_HEADER
#endif

#define PBI_API extern "C" __attribute__((visibility("default")))

namespace {

std::string last_error;

using first_exe = partita::compiled<PARTITA_BENCH_NET::net, partita::cpu>;

// An executable behind one interface, for the C functions below.
struct runner {
  virtual ~runner() = default;
  virtual void set_threads(int n) = 0;
  virtual void run(const void* in, float* out) = 0;
  virtual std::string profile() const = 0;
  virtual void reset_profile() = 0;
};

// Multiply-adds of step `s` of `Exe` where it is a convolution or dense layer with a weight (0
// otherwise), from its output shape and the weight's shape: [O, C / groups, KH, KW] for a
// convolution (any composite whose name has "conv2d"), [O, K] for a dense layer ("dense").
template <class Exe>
double step_macs(std::size_t s) {
  const partita::plan_step& step = Exe::plan.steps[s];
  const std::string_view what = Exe::step_name(s);
  const bool conv = what.find("conv2d") != std::string_view::npos;
  const bool dense = what.find("dense") != std::string_view::npos;
  if (!conv && !dense) return 0;
  const double out = static_cast<double>(Exe::plan.nodes[static_cast<std::size_t>(step.node)].out.elements());
  for (int k = 0; k < step.num_in; ++k) {
    const partita::buffer_ref& in = Exe::plan.ins[static_cast<std::size_t>(step.first_in + k)];
    if (in.kind != partita::storage::weight) continue;
    const partita::tensor_slot& w = Exe::weight(static_cast<std::size_t>(in.index));
    if (conv && w.shp.rank == 4) return out * static_cast<double>(w.shp[1] * w.shp[2] * w.shp[3]);
    if (dense && w.shp.rank == 2) return out * static_cast<double>(w.shp[1]);
  }
  return 0;
}

template <class Net>
struct model_runner final : runner {
  using exe_t = partita::compiled<Net, partita::cpu>;
  std::unique_ptr<exe_t> exe = std::make_unique<exe_t>();

  explicit model_runner(const std::string& weights) { exe->bind(partita::load_safetensors(weights)); }
  void set_threads(int n) override { exe->template state<partita::cpu>().set_threads(n); }
  void run(const void* in, float* out) override {
    const auto n_in = static_cast<std::size_t>(exe_t::input(0).shp.elements());
    const std::span<float> y(out, static_cast<std::size_t>(exe_t::output(0).shp.elements()));
    if constexpr (exe_t::input(0).type == partita::dtype::i64) {
      exe->run(std::span<const std::int64_t>(static_cast<const std::int64_t*>(in), n_in), y);
    } else {
      exe->run(std::span<const float>(static_cast<const float*>(in), n_in), y);
    }
  }
  // One JSON object per line: step, what it runs, output shape, mean µs per run, multiply-adds.
  std::string profile() const override {
    std::string out;
    if constexpr (partita::profiling) {
      const auto& p = exe->profile();
      char line[512];
      for (std::size_t s = 0; s < exe_t::num_steps; ++s) {
        const std::string_view what = exe_t::step_name(s);
        const std::string shape = to_string(exe_t::plan.nodes[static_cast<std::size_t>(exe_t::plan.steps[s].node)].out);
        std::snprintf(line, sizeof line, "{\"step\": %zu, \"what\": \"%.*s\", \"shape\": \"%s\", \"us\": %.3f, \"macs\": %.0f}\n",
                      s, static_cast<int>(what.size()), what.data(), shape.c_str(), p.mean_us(s), step_macs<exe_t>(s));
        out += line;
      }
    }
    return out;
  }
  void reset_profile() override {
    if constexpr (partita::profiling) exe->reset_profile();
  }
};

std::string weights_of(const char* name) { return std::string(PARTITA_BENCH_WEIGHTS) + "/" + name + ".safetensors"; }

template <class F>
auto guarded(F f, decltype(f()) failed) noexcept {
  try {
    return f();
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown exception";
  }
  return failed;
}

}  // namespace

/// The last error's message.
PBI_API const char* pbi_error() { return last_error.c_str(); }

/// 1 where the module was built with PARTITA_PROFILE (pbi_profile then has figures).
PBI_API int pbi_profiling() { return partita::profiling ? 1 : 0; }

/// An executable of variant 0 or 1, bound to its weights; null on failure.
PBI_API void* pbi_create(int variant) {
  return guarded(
      [&]() -> void* {
        if (variant == 0) return new model_runner<PARTITA_BENCH_NET::net>(weights_of(PBI_STR(PARTITA_BENCH_NET)));
#ifdef PARTITA_BENCH_NET2
        if (variant == 1) return new model_runner<PARTITA_BENCH_NET2::net>(weights_of(PBI_STR(PARTITA_BENCH_NET2)));
#endif
        throw partita::error("no variant " + std::to_string(variant) + " in this module");
      },
      nullptr);
}

PBI_API void pbi_destroy(void* r) { delete static_cast<runner*>(r); }

/// Elements of the model's input and output (the same for both variants).
PBI_API long pbi_input_elements() { return static_cast<long>(first_exe::input(0).shp.elements()); }
PBI_API long pbi_output_elements() { return static_cast<long>(first_exe::output(0).shp.elements()); }

/// The input's element type: 0 f32, 1 i64.
PBI_API int pbi_input_type() { return first_exe::input(0).type == partita::dtype::i64 ? 1 : 0; }

PBI_API int pbi_set_threads(void* r, int n) {
  return guarded([&] { static_cast<runner*>(r)->set_threads(n); return 0; }, -1);
}

/// One run: `in` holds pbi_input_elements() values of pbi_input_type(), `out`
/// pbi_output_elements() floats.
PBI_API int pbi_run(void* r, const void* in, float* out) {
  return guarded([&] { static_cast<runner*>(r)->run(in, out); return 0; }, -1);
}

/// The profile since the last reset as JSON lines into buf (at most size bytes with the final
/// zero); returns the length the whole text needs, -1 on failure.
PBI_API long pbi_profile(void* r, char* buf, long size) {
  return guarded(
      [&] {
        const std::string text = static_cast<runner*>(r)->profile();
        if (size > 0) std::snprintf(buf, static_cast<std::size_t>(size), "%s", text.c_str());
        return static_cast<long>(text.size());
      },
      -1L);
}

PBI_API void pbi_reset_profile(void* r) { static_cast<runner*>(r)->reset_profile(); }

/// One core's measured `vpmaddwd` rate in G multiply-adds per second (madd_peak.hpp); 0 without AVX2.
PBI_API double pbi_madd_peak_gmacs() { return bench::madd_peak_gmacs(); }
