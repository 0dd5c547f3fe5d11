#pragma once
/// The freestanding profile: models, passes and `static_executable` on the reference and mcu backends.
/// What a microcontroller's firmware includes instead of <partita/partita.hpp>: the model layer,
/// the passes, the plan, `static_executable` (weights read in place, the arena a member) and the
/// backends written in portable C++. Nothing here needs xsimd, threads, a clock, a file system,
/// streams, exceptions or RTTI, or allocates once the executable is constructed
/// (docs/embedded.md); `tools/check_light_header.py --embedded` keeps it so.

#include "partita/model.hpp"

// patterns, backends and passes: what `static_executable` compiles a model with
#include "partita/backend/backend.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/pattern/pattern.hpp"
#include "partita/pattern/table.hpp"

// the runtime without heap: the plan and the executable that holds its arena
#include "partita/runtime/plan.hpp"
#include "partita/runtime/static_executable.hpp"

// backends in portable C++
#include "partita/backends/reference/reference.hpp"
#include "partita/backends/mcu/mcu.hpp"
