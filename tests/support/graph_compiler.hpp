#pragma once
// A graph-compiler-style backend: it takes small f32 elementwise ops, receives each of its
// partitions whole at bind (TVM's DNNL/TensorRT granularity), "compiles" it into a plan of
// scratch buffers, and runs it as one step. Partitions with a multiply fall back to the host
// at compile time; `state.reject` makes bind refuse every partition.
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

namespace test_backends {
using namespace partita;

struct graph_npu {
  static constexpr fixed_string name = "gnpu";
  static constexpr bool compiles_partitions = true;

  struct state {
    bool reject = false;
    std::vector<std::string_view> compiled;  // partitions prepared at bind, in plan order
    std::vector<std::string_view> runs;      // partitions run
    std::vector<std::vector<float>> scratch;  // per step: one slot per body node
    int rests = 0;                             // times another backend's step followed one of ours
    void rest() { ++rests; }
  };

  static constexpr bool supports(const op_view& v) {
    return (v.is(op_id::add) || v.is(op_id::relu) || v.is(op_id::multiply)) && v.dtype() == f32;
  }
  /// The device has no multiplier: such partitions run on the host instead.
  static constexpr bool accepts(const partition_view& p) {
    for (int i = 0; i < p.size(); ++i)
      if (p.node(i).is(op_id::multiply)) return false;
    return true;
  }
  using post_partition = pass_list<passes::host_fallback<graph_npu>>;

  template <class Step>
  struct kernel {
    static_assert(Step::partition, "graph_npu only runs whole partitions");
    static constexpr int n = Step::body_size();

    // Offsets of each body node's value in the step's scratch.
    static constexpr std::array<std::size_t, static_cast<std::size_t>(n) + 1> slots = [] {
      std::array<std::size_t, static_cast<std::size_t>(n) + 1> s{};
      for (int i = 0; i < n; ++i) {
        const graph_node& g = Step::body(i);
        const bool op = g.op == op_id::add || g.op == op_id::relu || g.op == op_id::multiply;
        s[static_cast<std::size_t>(i) + 1] = s[static_cast<std::size_t>(i)] + (op ? static_cast<std::size_t>(g.out.elements()) : 0);
      }
      return s;
    }();

    static void prepare(state& st, const float* const*) {
      if (st.reject) throw std::runtime_error("the device is out of memory");
      st.compiled.push_back(Step::function().name());
      if (st.scratch.size() <= static_cast<std::size_t>(Step::index)) st.scratch.resize(static_cast<std::size_t>(Step::index) + 1);
      st.scratch[static_cast<std::size_t>(Step::index)].assign(slots.back(), 0.f);
    }

    static void run(state& st, const float* const* in, float* out) {
      st.runs.push_back(Step::function().name());
      std::array<const float*, static_cast<std::size_t>(n)> value{};
      float* scratch = st.scratch[static_cast<std::size_t>(Step::index)].data();
      eval(in, scratch, value, std::make_index_sequence<static_cast<std::size_t>(n)>{});
      // Results: one value, or the fields of a tuple back to back.
      constexpr const graph_node& result = Step::module.node(Step::function().result);
      if constexpr (result.op == op_id::tuple) {
        copy_fields(value, out, std::make_index_sequence<static_cast<std::size_t>(result.nargs)>{});
      } else {
        const int r = Step::function().result - Step::function().first_node;
        std::copy(value[static_cast<std::size_t>(r)], value[static_cast<std::size_t>(r)] + result.out.elements(), out);
      }
    }

   private:
    template <std::size_t... I>
    static void eval(const float* const* in, float* scratch, std::array<const float*, sizeof...(I)>& value,
                     std::index_sequence<I...>) {
      (eval_one<static_cast<int>(I)>(in, scratch, value), ...);
    }

    template <int I, std::size_t N>
    static void eval_one(const float* const* in, float* scratch, std::array<const float*, N>& value) {
      constexpr const graph_node& g = Step::body(I);
      float* dst = scratch + slots[static_cast<std::size_t>(I)];
      if constexpr (g.op == op_id::param || g.op == op_id::weight) {
        value[I] = in[Step::input_of(Step::body_node(I))];
      } else if constexpr (g.op == op_id::relu) {
        reference_kernels::unary(op_id::relu, value[static_cast<std::size_t>(Step::body_arg(I, 0))], g.out.elements(), dst, attrs{});
        value[I] = dst;
      } else if constexpr (g.op == op_id::add || g.op == op_id::multiply) {
        constexpr int a = Step::body_arg(I, 0), b = Step::body_arg(I, 1);
        reference_kernels::binary(g.op, value[static_cast<std::size_t>(a)], Step::body(a).out, value[static_cast<std::size_t>(b)],
                                  Step::body(b).out, dst, g.out);
        value[I] = dst;
      }
    }

    template <std::size_t N, std::size_t... K>
    static void copy_fields(const std::array<const float*, N>& value, float* out, std::index_sequence<K...>) {
      (copy_field<static_cast<int>(K)>(value, out), ...);
    }
    template <int K, std::size_t N>
    static void copy_field(const std::array<const float*, N>& value, float* out) {
      constexpr int f = Step::module.arg(Step::function().result, K) - Step::function().first_node;
      constexpr std::int64_t count = Step::body(f).out.elements();
      std::copy(value[static_cast<std::size_t>(f)], value[static_cast<std::size_t>(f)] + count,
                out + Step::output_offset(K) / sizeof(float));
    }
  };
};

}  // namespace test_backends
