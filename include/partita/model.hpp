#pragma once
/// Partita's model layer alone: ops, leaves, `model<>`, shapes and dtypes, their checks, `print`.
/// Everything needed to declare a model and inspect it at compile time, without a backend, the
/// passes or the runtime, so without xsimd, threads or streams: a header that describes a model
/// (one the ONNX importer writes, say) can include this and leave `compiled<>` to the file that
/// runs it, which includes <partita/partita.hpp>. Only the core and ir layers are included here;
/// tools/check_headers.py keeps it so.

// core
#include "partita/core/dtype.hpp"
#include "partita/core/error.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/core/shape.hpp"
#include "partita/core/static_tensor.hpp"

// ir: the ops and leaves a model is written with
#include "partita/ir/attrs.hpp"
#include "partita/ir/diagnostics.hpp"
#include "partita/ir/node.hpp"
#include "partita/ir/on.hpp"
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
#include "partita/ir/ops/shape_ops.hpp"
#include "partita/ir/ops/slicing.hpp"
#include "partita/ir/ops/tuple.hpp"

// ir: the model, its module, and what inspects them
#include "partita/ir/dot.hpp"
#include "partita/ir/model.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/printer.hpp"
#include "partita/ir/query.hpp"
