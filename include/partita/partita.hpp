#pragma once
/// Partita: a neural-network model, its fusion patterns and its backends as C++ types.
/// Include this one header (or single_include/partita/partita.hpp) to get everything.

#include "partita/core/dtype.hpp"
#include "partita/core/error.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"
