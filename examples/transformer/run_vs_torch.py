#!/usr/bin/env python3
"""CTest driver of transformer_vs_torch: export.py into OUTPUT_DIR, then `transformer --check`.

    run_vs_torch.py TRANSFORMER_EXECUTABLE OUTPUT_DIR

Without PyTorch it exits 77 (CTest: skipped), unless CI=true, where a missing PyTorch fails.
"""
import os
import subprocess
import sys

SKIPPED = 77


def main():
    if len(sys.argv) != 3:
        print("usage: run_vs_torch.py TRANSFORMER_EXECUTABLE OUTPUT_DIR", file=sys.stderr)
        return 2
    exe, out = sys.argv[1], sys.argv[2]
    export = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export.py")
    rc = subprocess.call([sys.executable, export, out])
    if rc == SKIPPED:  # export.py found no PyTorch
        if os.environ.get("CI") == "true":
            print(f"transformer_vs_torch: PyTorch is required under CI=true (Debian package python3-torch) "
                  f"for {sys.executable}", file=sys.stderr)
            return 1
        print(f"transformer_vs_torch: skipped: no PyTorch for {sys.executable} "
              f"(install python3-torch, or configure with -DPARTITA_MODEL_PYTHON=/path/to/python3)")
        return SKIPPED
    if rc != 0:
        print(f"transformer_vs_torch: export.py failed ({rc})", file=sys.stderr)
        return 1
    return subprocess.call([exe, os.path.join(out, "weights.safetensors"), os.path.join(out, "ids.safetensors"),
                            "--check", os.path.join(out, "logits.safetensors")])


if __name__ == "__main__":
    sys.exit(main())
