#pragma once
/// The graph of a model type: deduplicated nodes collected at compile time.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "partita/ir/module.hpp"
#include "partita/ir/node_desc.hpp"

namespace partita::detail {

/// The flattened graph while it is being built: plain vectors, used inside constexpr evaluation.
struct flat_graph {
  std::vector<graph_node> nodes;
  std::vector<int> args;
  std::vector<int> outputs;
};

/// Open-addressing table from a 64-bit key to a node index, growing as needed. Lookups compare
/// with a caller-supplied predicate, so the same table serves "same descriptor" and "same node".
class index_table {
 public:
  constexpr index_table() : keys_(64, 0), slots_(64, -1) {}

  template <class Eq>
  constexpr int find(std::uint64_t key, Eq eq) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = key & mask;; i = (i + 1) & mask) {
      const int s = slots_.data()[i];
      if (s < 0) return -1;
      if (keys_.data()[i] == key && eq(s)) return s;
    }
  }

  constexpr void insert(std::uint64_t key, int value) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    place(key, value);
    ++count_;
  }

 private:
  constexpr void place(std::uint64_t key, int value) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = key & mask;
    while (slots_.data()[i] >= 0) i = (i + 1) & mask;
    keys_.data()[i] = key;
    slots_.data()[i] = value;
  }
  constexpr void grow() {
    std::vector<std::uint64_t> keys = std::move(keys_);
    std::vector<int> slots = std::move(slots_);
    keys_.assign(keys.size() * 2, 0);
    slots_.assign(slots.size() * 2, -1);
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i] >= 0) place(keys[i], slots[i]);
  }

  std::vector<std::uint64_t> keys_;
  std::vector<int> slots_;
  std::size_t count_ = 0;
};

constexpr std::uint64_t node_key(const graph_node& n, const int* args) {
  std::uint64_t h = hash_mix(0x84222325cbf29ce4ull, static_cast<std::uint64_t>(n.op));
  for (char c : n.name) h = hash_mix(h, static_cast<unsigned char>(c));
  for (int i = 0; i < n.out.rank; ++i) h = hash_mix(h, static_cast<std::uint64_t>(n.out[i]));
  for (int i = 0; i < n.nargs; ++i) h = hash_mix(h, static_cast<std::uint64_t>(args[i]));
  h = hash_mix(h, static_cast<std::uint64_t>(n.index));
  return h;
}

/// Whether two descriptors describe the same node: equal fields and arguments with equal
/// structural hashes. Compared by content, not by address: compilers may refuse to compare the
/// addresses of two inline variables in a constant expression (GCC does under
/// -fsanitize=undefined), and a named node type and its alias are equal anyway.
constexpr bool same_desc(const node_desc& a, const node_desc& b) {
  if (a.op != b.op || a.type != b.type || a.nargs != b.nargs || a.is_tuple != b.is_tuple || !(a.out == b.out) ||
      !(a.at == b.at) || a.name != b.name || a.pinned != b.pinned)
    return false;
  for (int i = 0; i < a.nargs; ++i)
    if (a.args[i]->hash != b.args[i]->hash) return false;
  return true;
}

/// The node `d` stands for in the graph: a field of a tuple built in the model (`get<T, I>` of a
/// `tuple`, such as a field of `split`) is that field itself. Its consumers then read it with no
/// projection between, so a pattern reaching a field of a split sees a slice used only by them,
/// and the tuple is a node only where something uses it whole (a model output).
constexpr const node_desc* projected(const node_desc* d) {
  while (d->op == op_id::get && d->nargs == 1) {
    const node_desc* t = projected(d->args[0]);
    if (t->op != op_id::tuple || d->at.axis < 0 || d->at.axis >= t->nargs) return d;
    d = t->args[d->at.axis];
  }
  return d;
}

// `flatten` and `main_module_sizes` are templates of nothing: compiled where a model is, not in
// every file that includes the IR.
/// Flattens the DAG reachable from `roots` into a node table in post-order (arguments first,
/// left to right). Each descriptor is visited once (memo keyed by its structural hash), and
/// structurally equal nodes reached through different types (an alias and a named node type)
/// become one node, so the graph is hash-consed. Linear in the number of nodes and edges.
template <class = void>
constexpr flat_graph flatten(const node_desc* const* roots, int num_roots) {
  flat_graph g;
  index_table by_desc;  // descriptor → node index
  index_table by_node;  // structure → node index
  std::vector<const node_desc*> desc_of_slot;  // parallel to by_desc values: which desc owns slot k
  std::vector<int> slot_node;
  struct frame {
    const node_desc* d;
    int next;
  };
  std::vector<frame> stack;
  // The node of each argument walked so far, for every frame on the stack (a frame's arguments
  // are the last `nargs` entries when it completes): each edge is looked up once.
  std::vector<int> done;

  auto visited = [&](const node_desc* d) {
    return by_desc.find(d->hash, [&](int s) { return same_desc(*desc_of_slot.data()[s], *d); });
  };

  for (int r = 0; r < num_roots; ++r) {
    const node_desc* root = projected(roots[r]);
    if (const int s = visited(root); s >= 0) {
      g.outputs.push_back(slot_node.data()[s]);
      continue;
    }
    stack.push_back({root, 0});
    while (!stack.empty()) {
      frame& f = stack.back();
      if (f.next < f.d->nargs) {
        const node_desc* a = projected(f.d->args[f.next++]);
        if (const int s = visited(a); s >= 0) {
          done.push_back(slot_node.data()[s]);
        } else {
          stack.push_back({a, 0});
        }
        continue;
      }
      const node_desc* d = f.d;
      stack.pop_back();
      const int* scratch = done.data() + (done.size() - static_cast<std::size_t>(d->nargs));
      graph_node n{d->op, d->type, d->out, &d->at, d->name, 0, d->nargs, d->is_tuple, d->pinned};
      if (d->op == op_id::get) n.index = d->at.axis;
      const std::uint64_t key = node_key(n, scratch);
      int idx = by_node.find(key, [&](int k) {
        const graph_node& o = g.nodes.data()[k];
        if (o.op != n.op || o.index != n.index || o.nargs != n.nargs || o.name != n.name || !(*o.at == *n.at) || o.type != n.type ||
            !(o.out == n.out) || o.pinned != n.pinned)
          return false;
        for (int i = 0; i < n.nargs; ++i)
          if (g.args.data()[o.first_arg + i] != scratch[i]) return false;
        return true;
      });
      if (idx < 0) {
        idx = static_cast<int>(g.nodes.size());
        n.first_arg = static_cast<int>(g.args.size());
        for (int i = 0; i < n.nargs; ++i) g.args.push_back(scratch[i]);
        g.nodes.push_back(n);
        by_node.insert(key, idx);
      }
      done.resize(done.size() - static_cast<std::size_t>(d->nargs));
      // A descriptor is walked only once: a node type cannot be its own argument, so nothing
      // below it on the stack is it, and it was not visited when its frame was pushed.
      by_desc.insert(d->hash, static_cast<int>(desc_of_slot.size()));
      desc_of_slot.push_back(d);
      slot_node.push_back(idx);
      if (stack.empty()) {
        g.outputs.push_back(idx);
      } else {
        done.push_back(idx);
      }
    }
  }
  return g;
}

/// Sizes of the main module built from `roots`: one extra tuple node (and its arguments) when
/// the model has several outputs.
struct module_sizes {
  std::size_t nodes = 0;
  std::size_t args = 0;
};

template <class = void>
constexpr module_sizes main_module_sizes(const node_desc* const* roots, int num_roots) {
  const flat_graph g = flatten(roots, num_roots);
  const std::size_t extra = num_roots > 1 ? 1 : 0;
  return {g.nodes.size() + extra, g.args.size() + (extra ? g.outputs.size() : 0)};
}

/// The main module of a model with outputs `roots` called `names` (one per root, in static
/// storage: main's `result_names` points at them).
template <module_sizes S>
constexpr module_value<S.nodes, S.args, 1> main_module(const node_desc* const* roots, int num_roots,
                                                      const std::string_view* names) {
  const flat_graph g = flatten(roots, num_roots);
  module_value<S.nodes, S.args, 1> m{};
  for (std::size_t i = 0; i < g.nodes.size(); ++i) m.nodes[i] = g.nodes[i];
  for (std::size_t i = 0; i < g.args.size(); ++i) m.args[i] = g.args[i];
  function_info& f = m.functions[0];
  f.set_name("main");
  f.num_nodes = static_cast<int>(S.nodes);
  f.result_names = names;
  f.num_result_names = num_roots;
  if (num_roots > 1) {
    graph_node t{op_id::tuple, dtype::f32, shape{}, &no_attrs, {}, static_cast<int>(g.args.size()), num_roots, true};
    for (int r = 0; r < num_roots; ++r) m.args[g.args.size() + static_cast<std::size_t>(r)] = g.outputs[static_cast<std::size_t>(r)];
    m.nodes[S.nodes - 1] = t;
    f.result = static_cast<int>(S.nodes - 1);
  } else {
    f.result = g.outputs[0];
  }
  return m;
}

}  // namespace partita::detail
