#pragma once
/// The plan printer (`print(plan)`): steps, backends, tensors, and the arena's buffers with their
/// offsets and lifetimes.
#include <algorithm>
#include <cstddef>
#include <string>

#include "partita/core/detail/concat.hpp"
#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/runtime/plan.hpp"

namespace partita {
namespace detail {

/// Where a step reads or writes, as the printer spells it: `in0`, `out1`, `w3`, `arena+2048`,
/// and `arena+2048 (nhwc)` for a value that lies channels-last.
inline std::string location_string(const buffer_ref& r) {
  const std::string at = r.offset ? concat("+", std::to_string(r.offset)) : std::string{};
  switch (r.kind) {
    case storage::input: return concat("in", std::to_string(r.index), at);
    case storage::output: return concat("out", std::to_string(r.index), at);
    case storage::weight: return concat("w", std::to_string(r.index), at);
    case storage::arena:
      return concat("arena+", std::to_string(r.offset), r.layout == tensor_layout::channels_last ? " (nhwc)" : "");
    case storage::none: break;
  }
  return "-";
}

/// One line per declared tensor: `  in0 x f32[1, 784]`, plus the weight's offset.
inline void print_slots(std::string& out, const char* prefix, const tensor_slot* slots, std::size_t n, bool offsets) {
  for (std::size_t i = 0; i < n; ++i) {
    const tensor_slot& s = slots[i];
    out += concat("  ", prefix, std::to_string(i), " ", s.name.empty() ? std::string_view("(unnamed)") : s.name, " ",
                  name_of(s.type), to_string(s.shp));
    if (offsets) out += concat(" at ", std::to_string(s.offset), " (", std::to_string(s.bytes()), " bytes)");
    out += "\n";
  }
}

}  // namespace detail

/// The plan as text, the way a static memory planner shows its arena: the declared tensors, each
/// step with its backend (`host` for the last backend listed), op, shape and the locations it
/// reads and writes (and, where its backend notes one, the kernel it runs and why, in brackets:
/// `[winograd_f2: 3x3 of stride 1 writing NHWC: Winograd F(2x2,3x3)]`), the copies made after
/// the last step, and every arena buffer with its offset,
/// size and the steps during which it is live, drawn as a bar (`#` live, `.` not) over the
/// schedule. `std::cout << print(compiled<net, cpu>::plan)`.
template <detail::plan_sizes S>
std::string print(const plan_value<S>& p) {
  using detail::concat;
  std::string out = concat("plan: ", std::to_string(S.steps), " steps, arena ", std::to_string(p.arena_bytes),
                           " bytes in ", std::to_string(S.buffers), " buffers, weights ", std::to_string(p.weight_bytes),
                           " bytes\n");
  out += "inputs:\n";
  detail::print_slots(out, "in", p.inputs.data(), S.inputs, false);
  out += "outputs:\n";
  detail::print_slots(out, "out", p.outputs.data(), S.outputs, false);
  if (S.weights) {
    out += "weights:\n";
    detail::print_slots(out, "w", p.weights.data(), S.weights, true);
  }

  out += "steps:\n";
  for (std::size_t s = 0; s < S.steps; ++s) {
    const plan_step& st = p.steps[s];
    const graph_node& n = p.nodes[static_cast<std::size_t>(st.node)];
    std::string args;
    for (int k = 0; k < st.num_in; ++k) {
      if (k) args += ", ";
      args += detail::location_string(p.ins[static_cast<std::size_t>(st.first_in + k)]);
    }
    out += concat("  ", std::to_string(s), " ", st.backend.empty() ? std::string_view("host") : st.backend, " ",
                  n.op == op_id::call ? std::string_view("call") : name_of(n.op), "(", args, ") -> ",
                  detail::location_string(st.out), " : ", n.is_tuple ? std::string("tuple") : concat(name_of(n.type), to_string(n.out)));
    if (!st.note.kernel.empty()) out += concat("  [", st.note.kernel, ": ", st.note.reason, "]");
    out += "\n";
  }
  for (std::size_t c = 0; c < S.copies; ++c) {
    const output_copy& cp = p.copies[c];
    out += concat("  copy ", detail::location_string(cp.from), " -> out", std::to_string(cp.output), " (",
                  std::to_string(cp.bytes), " bytes)\n");
  }

  if (S.buffers) out += "arena:\n";
  // One column per step, plus one for the copies after the last step (a buffer an output copy
  // reads is live until then).
  const std::size_t columns = S.steps + 1;
  for (std::size_t b = 0; b < S.buffers; ++b) {
    const buffer_lifetime& l = p.buffers[b];
    std::string bar(columns, '.');
    for (int s = std::max(l.first, 0); s <= l.last && static_cast<std::size_t>(s) < columns; ++s) bar[static_cast<std::size_t>(s)] = '#';
    out += concat("  buffer ", std::to_string(b), " at ", std::to_string(l.offset), " (", std::to_string(l.bytes),
                  " bytes) steps ", std::to_string(l.first), "-", std::to_string(l.last), " |", bar, "|\n");
  }
  return out;
}

}  // namespace partita
