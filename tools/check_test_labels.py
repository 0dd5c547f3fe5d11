#!/usr/bin/env python3
"""Fails when a test of a CTest build directory has no label.

Labels pick the tiers: `ctest -L fast` is the quick tier of tools/test.sh --quick, and the other
labels name each test's area (tests/CMakeLists.txt lists them). A test without one would run in
no tier but the whole suite, unnoticed.

    check_test_labels.py --ctest ctest --build-dir build
"""
import argparse
import json
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctest", default="ctest", help="the ctest executable")
    parser.add_argument("--build-dir", required=True, help="the CTest build directory")
    args = parser.parse_args()
    listing = subprocess.run([args.ctest, "--test-dir", args.build_dir, "--show-only=json-v1"],
                             check=True, capture_output=True, text=True).stdout
    unlabelled = []
    for test in json.loads(listing)["tests"]:
        labels = [p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"]
        if not labels or not labels[0]:
            unlabelled.append(test["name"])
    if unlabelled:
        print(f"{len(unlabelled)} tests without a label (set_tests_properties(... LABELS ...)): "
              + ", ".join(unlabelled))
        return 1
    print("every test has a label")
    return 0


if __name__ == "__main__":
    sys.exit(main())
