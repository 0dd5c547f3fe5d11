#pragma once
/// Partita: a neural-network model, its fusion patterns and its backends as C++ types.
/// Include this one header (or single_include/partita/partita.hpp) to get everything but the
/// optional oneDNN backend (<partita/backends/onednn/onednn.hpp>). Layer by layer, each
/// including only the ones before it: core, ir, pattern, backend, pass, runtime, backends.

// core
#include "partita/core/dtype.hpp"
#include "partita/core/error.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/core/shape.hpp"
#include "partita/core/static_tensor.hpp"
#include "partita/core/tensor_view.hpp"

// ir
#include "partita/ir/attrs.hpp"
#include "partita/ir/diagnostics.hpp"
#include "partita/ir/dot.hpp"
#include "partita/ir/graph.hpp"
#include "partita/ir/layout.hpp"
#include "partita/ir/model.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/module_builder.hpp"
#include "partita/ir/node.hpp"
#include "partita/ir/node_desc.hpp"
#include "partita/ir/on.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/ir/ops/convolution.hpp"
#include "partita/ir/ops/depth_space.hpp"
#include "partita/ir/ops/quantization.hpp"
#include "partita/ir/ops/elementwise.hpp"
#include "partita/ir/ops/indexing.hpp"
#include "partita/ir/ops/logical.hpp"
#include "partita/ir/ops/recurrent.hpp"
#include "partita/ir/ops/leaf.hpp"
#include "partita/ir/ops/linear.hpp"
#include "partita/ir/ops/normalization.hpp"
#include "partita/ir/ops/pooling.hpp"
#include "partita/ir/ops/reduction.hpp"
#include "partita/ir/ops/rules.hpp"
#include "partita/ir/ops/shape_ops.hpp"
#include "partita/ir/ops/slicing.hpp"
#include "partita/ir/ops/tuple.hpp"
#include "partita/ir/printer.hpp"
#include "partita/ir/query.hpp"
#include "partita/ir/uses.hpp"
#include "partita/ir/view.hpp"

// pattern
#include "partita/pattern/match.hpp"
#include "partita/pattern/match_view.hpp"
#include "partita/pattern/pattern.hpp"
#include "partita/pattern/table.hpp"

// backend
#include "partita/backend/backend.hpp"
#include "partita/backend/cost.hpp"
#include "partita/backend/partition_view.hpp"

// pass
#include "partita/pass/annotate_target.hpp"
#include "partita/pass/cost/candidates.hpp"
#include "partita/pass/cost/config.hpp"
#include "partita/pass/cost/cost_partition.hpp"
#include "partita/pass/cost/planner.hpp"
#include "partita/pass/cost/tuning.hpp"
#include "partita/pass/explain.hpp"
#include "partita/pass/explanation.hpp"
#include "partita/pass/merge_composite.hpp"
#include "partita/pass/merge_regions.hpp"
#include "partita/pass/partition_graph.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/pass/prune_partitions.hpp"

// runtime
#include "partita/runtime/aliasing.hpp"
#include "partita/runtime/availability.hpp"
#include "partita/runtime/bind.hpp"
#include "partita/runtime/executable.hpp"
#include "partita/runtime/lowering.hpp"
#include "partita/runtime/memory_plan.hpp"
#include "partita/runtime/named_tensor.hpp"
#include "partita/runtime/plan.hpp"
#include "partita/runtime/plan_printer.hpp"
#include "partita/runtime/plan_records.hpp"
#include "partita/runtime/profile.hpp"
#include "partita/runtime/safetensors.hpp"
#include "partita/runtime/static_executable.hpp"
#include "partita/runtime/stateful.hpp"
#include "partita/runtime/step_ref.hpp"
#include "partita/runtime/tensor_data.hpp"
#include "partita/runtime/weight_set.hpp"

// backends/reference
#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/reference.hpp"
#include "partita/backends/mcu/mcu.hpp"

// backends/cpu
#include "partita/backends/cpu/cpu.hpp"
#include "partita/backends/cpu/patterns.hpp"
