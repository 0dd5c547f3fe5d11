#pragma once
/// Partita: a neural-network model, its fusion patterns and its backends as C++ types.
/// Include this one header (or single_include/partita/partita.hpp) to get everything.

#include "partita/core/dtype.hpp"
#include "partita/core/error.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/ir/diagnostics.hpp"
#include "partita/ir/graph.hpp"
#include "partita/ir/model.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/node.hpp"
#include "partita/ir/node_desc.hpp"
#include "partita/ir/ops/elementwise.hpp"
#include "partita/ir/ops/leaf.hpp"
#include "partita/ir/ops/linear.hpp"
#include "partita/ir/ops/normalization.hpp"
#include "partita/ir/ops/pooling.hpp"
#include "partita/ir/ops/rules.hpp"
#include "partita/ir/ops/shape_ops.hpp"
#include "partita/ir/ops/tuple.hpp"
