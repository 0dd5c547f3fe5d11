#!/usr/bin/env python3
"""Imports an ONNX model as Partita C++ types and a safetensors file of its weights.

    partita_import.py MODEL.onnx --out DIR --namespace NS [--input-shape NAME=1,3,224,224 ...]
                      [--embed-weights[=incbin|arrays]] [--max-memory 4G] [--time-limit 600]

writes DIR/NS.hpp (`NS::net`, a `partita::model<...>`) and DIR/NS.safetensors, which
`exe.bind(partita::load_safetensors("DIR/NS.safetensors"))` reads; with --embed-weights the
header also compiles the file into the program as `NS::weights()`, and with
--embed-weights=arrays it holds the weights as constexpr arrays, `NS::weights::tensors`, for
`partita::static_executable` (docs/embedded.md). Needs Python 3 with onnx and
numpy (Debian: python3-onnx python3-numpy). The model file is untrusted input: it is checked
before anything reads it, external data comes only from inside its folder, and constants are
capped by --max-memory. Exit status: 0 written; 2 the model cannot be imported (every reason
listed) or bad arguments; 3 an internal error. docs/onnx.md lists the ops it maps and what is
checked ("Untrusted models").
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import numpy  # noqa: F401
    import onnx  # noqa: F401
except ImportError as e:
    print(f"partita_import: {e.name} is not installed for {sys.executable} "
          f"(Debian: apt install python3-onnx python3-numpy)", file=sys.stderr)
    sys.exit(2)

from partita_onnx.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
