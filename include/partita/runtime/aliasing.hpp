#pragma once
/// Which caller buffers `run` lets overlap, decided at compile time and checked at run time.
// Which caller buffers `run` lets overlap: decided from the plan at compile time, checked on
// pointer ranges at run time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "partita/core/error.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/runtime/bind.hpp"
#include "partita/runtime/plan.hpp"

namespace partita {

/// Whether model input `i` may share memory with model output `o` in one `run`.
enum class alias_rule : std::uint8_t {
  never,        ///< the model reads the input after it writes the output
  same_buffer,  ///< only as the very same buffer: one elementwise step reads it and writes the output in place
  any,          ///< every read of the input comes before the first write of the output
};

namespace detail {

/// `alias_rules<Plan>[i * outputs + o]`: the rule for input `i` and output `o`. Steps run in
/// plan order and the final output copies after them, one by one; an input may share the
/// caller's output buffer when nothing reads it once the output is being written.
template <const auto& Plan>
inline constexpr auto alias_rules = [] {
  constexpr std::size_t ni = Plan.inputs.size(), no = Plan.outputs.size(), ns = Plan.steps.size();
  std::array<alias_rule, (ni * no > 0 ? ni * no : 1)> rules{};
  std::array<int, (ni > 0 ? ni : 1)> last_read{};
  std::array<int, (no > 0 ? no : 1)> first_write{};
  for (int& r : last_read) r = -1;
  for (int& w : first_write) w = std::numeric_limits<int>::max();
  for (std::size_t s = 0; s < ns; ++s) {
    const plan_step& st = Plan.steps[s];
    for (int k = 0; k < st.num_in; ++k) {
      const buffer_ref& r = Plan.ins[static_cast<std::size_t>(st.first_in + k)];
      if (r.kind == storage::input) last_read[static_cast<std::size_t>(r.index)] = static_cast<int>(s);
    }
    if (st.out.kind == storage::output) {
      int& w = first_write[static_cast<std::size_t>(st.out.index)];
      if (w > static_cast<int>(s)) w = static_cast<int>(s);
    }
  }
  for (std::size_t c = 0; c < Plan.copies.size(); ++c) {
    const output_copy& cp = Plan.copies[c];
    const int t = static_cast<int>(ns + c);
    if (cp.from.kind == storage::input) last_read[static_cast<std::size_t>(cp.from.index)] = t;
    int& w = first_write[static_cast<std::size_t>(cp.output)];
    if (w > t) w = t;
  }
  for (std::size_t i = 0; i < ni; ++i) {
    for (std::size_t o = 0; o < no; ++o) {
      const int read = last_read[i], write = first_write[o];
      alias_rule r = alias_rule::never;
      if (write > read) {
        r = alias_rule::any;
      } else if (write == read && Plan.inputs[i].bytes() == Plan.outputs[o].bytes()) {
        if (write < static_cast<int>(ns)) {
          // An elementwise step reads each element before it writes the same one, provided
          // every operand it takes from this input has the output's shape (no broadcast).
          const plan_step& st = Plan.steps[static_cast<std::size_t>(write)];
          const graph_node& g = Plan.nodes[static_cast<std::size_t>(st.node)];
          bool ok = writes_elementwise(g.op);
          for (int k = 0; ok && k < st.num_in; ++k) {
            const buffer_ref& ref = Plan.ins[static_cast<std::size_t>(st.first_in + k)];
            const graph_node& a = Plan.nodes[static_cast<std::size_t>(Plan.args[static_cast<std::size_t>(g.first_arg + k)])];
            if (ref.kind == storage::input && ref.index == static_cast<int>(i) && !(a.out == g.out)) ok = false;
          }
          if (ok) r = alias_rule::same_buffer;
        } else {
          // The output is a copy of this very input: the same buffer needs no copy.
          const output_copy& cp = Plan.copies[static_cast<std::size_t>(write) - ns];
          if (cp.from.kind == storage::input && cp.from.index == static_cast<int>(i) && cp.output == static_cast<int>(o))
            r = alias_rule::same_buffer;
        }
      }
      rules[i * no + o] = r;
    }
  }
  return rules;
}();

inline bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

/// Throws a `partita::error` naming both arguments when two outputs overlap, or an output
/// overlaps an input in a way `alias_rules` does not allow.
template <const auto& Plan>
void check_aliasing(const float* const* in, float* const* out) {
  constexpr std::size_t ni = Plan.inputs.size(), no = Plan.outputs.size();
  for (std::size_t o = 0; o < no; ++o) {
    const std::size_t ob = Plan.outputs[o].bytes();
    for (std::size_t p = 0; p < o; ++p)
      if (overlaps(out[o], ob, out[p], Plan.outputs[p].bytes()))
        detail::raise(error(concat("partita: run: ", describe_slot(Plan.outputs[p], "output", p), " and ",
                           describe_slot(Plan.outputs[o], "output", o), " overlap: each output needs a buffer of its own")));
    for (std::size_t i = 0; i < ni; ++i) {
      const std::size_t ib = Plan.inputs[i].bytes();
      if (!overlaps(in[i], ib, out[o], ob)) continue;
      const alias_rule r = alias_rules<Plan>[i * no + o];
      if (r == alias_rule::any) continue;
      if (r == alias_rule::same_buffer && static_cast<const void*>(in[i]) == static_cast<const void*>(out[o]) && ib == ob)
        continue;
      const std::string input = describe_slot(Plan.inputs[i], "input", i), output = describe_slot(Plan.outputs[o], "output", o);
      detail::raise(error(concat("partita: run: ", output, " overlaps ", input,
                         r == alias_rule::same_buffer
                             ? ": they may share memory only as the very same buffer (the step that writes the output reads the input in place)"
                             : ": the model reads the input after it starts writing the output; pass separate buffers")));
    }
  }
}

}  // namespace detail
}  // namespace partita
