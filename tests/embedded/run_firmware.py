#!/usr/bin/env python3
"""Builds the tiny models' firmware for Cortex-M4 and M7, runs it under QEMU, checks it against the host.

    run_firmware.py --build DIR --host-reference EXE [--models ds_cnn ...] [--backends reference mcu]
                    [--int8-models ds_cnn_int8 ...] [--record FILE] [--results DIR]

Configures and builds tests/embedded/firmware/ with cmake/toolchains/arm-none-eabi.cmake in DIR,
then runs each program in qemu-system-arm (mps2-an386 for the M4, mps2-an500 for the M7) with
semihosting and `-icount shift=0`. Each must:
  - exit with status 0, having asked nothing of the heap;
  - count 2,000,000 instructions for its calibration loop (so the counts below are instructions);
  - print outputs within float tolerance of the host's reference backend (EXE, built from the same
    models, weights and input); an int8 model, on mcu only, the host's integer results bit for bit
    (the host's mcu and cpu backends, which EXE checks agree).
It prints, per model, backend and core: flash (code, constants), RAM (data, bss with the arena,
stack) and the instructions one inference retired under the emulator. That count is a regression
figure for the code generated, not a time: QEMU does not model a Cortex-M's pipeline or memory.
--record writes them as JSON; --results DIR also writes the record to DIR/embedded-<time>.json
(benchmarks/results/).

Exit status: 0 all passed; 1 a check failed; 77 (CTest's skip) when the ARM toolchain or QEMU is
missing and CI is not "true" (under CI=true a missing tool fails).
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "tests" / "embedded" / "firmware"
TOOLCHAIN = ROOT / "cmake" / "toolchains" / "arm-none-eabi.cmake"
MACHINES = {"m4": ("mps2-an386", "Cortex-M4"), "m7": ("mps2-an500", "Cortex-M7")}
MODELS = ["ds_cnn", "resnet8", "autoencoder", "mobilenet_v1_025"]
INT8_MODELS = [m + "_int8" for m in MODELS]
CALIBRATION = 2_000_000
TICK = 40  # instructions per SysTick tick under -icount shift=0 (main.cpp)
# Absolute and relative tolerance against the host: other compilers contract other products into
# fused multiply-adds, and the mcu backend sums in another order.
ATOL, RTOL = 1e-5, 1e-4

# MLPerf Tiny's published sizes of the same networks, trained and quantized to int8 for TFLite
# Micro (MLPerf Tiny v0.5, 2021), and the tensor arena its TFLite Micro reference submission
# reserves for keyword spotting (kTensorArenaSize = 200 * 1024).
PUBLISHED = {
    "ds_cnn": {"model_kb_int8": 53, "tflm_arena_kb": 200},
    "resnet8": {"model_kb_int8": 96},
    "autoencoder": {"model_kb_int8": 270},
    "mobilenet_v1_025": {"model_kb_int8": 325},
}


def first_line(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0]


def host_cpu() -> str:
    """The build machine's CPU, as /proc/cpuinfo names it (where the host reference ran)."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def tool_missing(names: list[str]) -> list[str]:
    return [n for n in names if shutil.which(n) is None]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run(cmd, **kw)


def build(build_dir: pathlib.Path, models: list[str], backends: list[str], int8_models: list[str]) -> None:
    configure = ["cmake", "-S", str(FIRMWARE), "-B", str(build_dir), f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}",
                 "-DCMAKE_BUILD_TYPE=Release", f"-DPARTITA_FIRMWARE_MODELS={';'.join(models)}",
                 f"-DPARTITA_FIRMWARE_BACKENDS={';'.join(backends)}",
                 f"-DPARTITA_FIRMWARE_INT8_MODELS={';'.join(int8_models)}"]
    if not (build_dir / "CMakeCache.txt").exists() and shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    if shutil.which("ccache"):
        configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    run(configure, check=True)
    run(["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 2)], check=True)


def host_outputs(exe: str) -> dict[str, list[int]]:
    out = run([exe], check=True, capture_output=True, text=True).stdout
    answers: dict[str, list[int]] = {}
    for line in out.splitlines():
        model, _, index, bits = line.split()
        answers.setdefault(model, []).append(int(bits, 16))
        assert len(answers[model]) == int(index) + 1
    return answers


def as_float(bits: int) -> float:
    import struct
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def sections(elf: pathlib.Path) -> dict[str, int]:
    text = run(["arm-none-eabi-size", "-A", str(elf)], check=True, capture_output=True, text=True).stdout
    sizes = {}
    for line in text.splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+\d+", line)
        if m:
            sizes[m.group(1)] = int(m.group(2))
    return sizes


def footprint(elf: pathlib.Path) -> dict[str, int]:
    s = sections(elf)
    code = s.get(".text", 0) + s.get(".ARM.extab", 0) + s.get(".ARM.exidx", 0)
    constants = s.get(".rodata", 0) + sum(s.get(k, 0) for k in (".init_array", ".fini_array", ".preinit_array"))
    return {"flash_code": code, "flash_constants": constants, "flash": code + constants + s.get(".data", 0),
            "ram_data": s.get(".data", 0), "ram_bss": s.get(".bss", 0), "ram_stack": s.get(".stack", 0),
            "ram": s.get(".data", 0) + s.get(".bss", 0) + s.get(".stack", 0)}


def run_firmware(elf: pathlib.Path, machine: str, timeout: float) -> tuple[int, str]:
    cmd = ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none", "-serial", "none",
           "-semihosting-config", "enable=on,target=native", "-icount", "shift=0", "-kernel", str(elf)]
    try:
        p = run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, f"(no answer within {timeout:.0f} s)"
    return p.returncode, p.stdout + p.stderr


def check(name: str, status: int, text: str, want: list[int], exact: bool) -> tuple[list[str], dict]:
    problems = []
    values: dict[str, int] = {}
    outputs: dict[int, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("calibration", "instructions", "heap") and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
        elif len(parts) == 3 and parts[0] == "output":
            outputs[int(parts[1])] = int(parts[2], 16)
    if status != 0:
        problems.append(f"{name}: exit status {status}; it printed:\n{text.strip()}")
    if abs(values.get("calibration", 0) - CALIBRATION) > TICK:
        problems.append(f"{name}: the calibration loop counted {values.get('calibration')} instructions, "
                        f"expected {CALIBRATION}: the instruction counts cannot be trusted")
    if values.get("heap", 1) != 0:
        problems.append(f"{name}: asked the heap for {values.get('heap')} bytes, expected none")
    if len(outputs) != len(want):
        problems.append(f"{name}: printed {len(outputs)} outputs, expected {len(want)}")
    worst = 0.0
    for i, bits in enumerate(want):
        if i not in outputs:
            continue
        got, ref = as_float(outputs[i]), as_float(bits)
        err = abs(got - ref)
        worst = max(worst, err)
        if exact and outputs[i] != bits:
            problems.append(f"{name}: output {i} is {got!r}, the host's integer kernels give {ref!r}")
            break
        if not err <= ATOL + RTOL * abs(ref):
            problems.append(f"{name}: output {i} is {got!r}, the host's reference {ref!r}")
            break
    return problems, {"instructions": values.get("instructions"), "max_abs_error": worst}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True, type=pathlib.Path, help="the firmware's build directory")
    p.add_argument("--host-reference", required=True, help="the host program printing the expected outputs")
    p.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    p.add_argument("--backends", nargs="+", default=["reference", "mcu"], choices=["reference", "mcu"])
    p.add_argument("--int8-models", nargs="*", default=INT8_MODELS, choices=INT8_MODELS, help="on mcu only")
    p.add_argument("--cores", nargs="+", default=list(MACHINES), choices=list(MACHINES))
    p.add_argument("--timeout", type=float, default=600.0, help="seconds one program may run under QEMU")
    p.add_argument("--record", type=pathlib.Path, help="write the figures here (JSON)")
    p.add_argument("--results", type=pathlib.Path, help="also write the record into this folder")
    args = p.parse_args()

    missing = tool_missing(["arm-none-eabi-g++", "arm-none-eabi-size", "qemu-system-arm", "cmake"])
    if missing:
        message = f"run_firmware: missing {', '.join(missing)} (Debian: apt install gcc-arm-none-eabi " \
                  "libstdc++-arm-none-eabi-newlib qemu-system-arm)"
        if os.environ.get("CI") == "true":
            print(message + "; CI=true, so this fails", file=sys.stderr)
            return 1
        print(message + "; skipped", file=sys.stderr)
        return 77

    build(args.build, args.models, args.backends, args.int8_models)
    want = host_outputs(args.host_reference)
    problems: list[str] = []
    rows = []
    programs = [(m, b) for m in args.models for b in args.backends] + [(m, "mcu") for m in args.int8_models]
    for model, backend in programs:
        for core in args.cores:
            name = f"{model}_{backend}_{core}"
            elf = args.build / f"{name}.elf"
            status, text = run_firmware(elf, MACHINES[core][0], args.timeout)
            found, figures = check(name, status, text, want[model], exact=model.endswith("_int8"))
            problems += found
            rows.append({"model": model, "backend": backend, "core": MACHINES[core][1],
                         "machine": MACHINES[core][0], **footprint(elf), **figures,
                         "passed": not found})

    kb = lambda b: f"{b / 1024:.1f}"  # noqa: E731
    print(f"\n{'model':<23}{'backend':<11}{'core':<11}{'flash KB (code+const)':>24}{'RAM KB (bss)':>14}"
          f"{'instructions':>16}{'max error':>11}")
    for r in rows:
        flash = f"{kb(r['flash'])} ({kb(r['flash_code'])}+{kb(r['flash_constants'])})"
        print(f"{r['model']:<23}{r['backend']:<11}{r['core']:<11}{flash:>24}{kb(r['ram']) + ' (' + kb(r['ram_bss']) + ')':>14}"
              f"{r['instructions'] or 0:>16,}{r['max_abs_error']:>11.1e}")
    now = datetime.datetime.now(datetime.timezone.utc)
    record = {
        "benchmark": "embedded",
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {
            "cpu": host_cpu(),
            "emulator": first_line(["qemu-system-arm", "--version"]),
            "compiler": first_line(["arm-none-eabi-g++", "--version"]),
        },
        "note": "instructions: retired under qemu-system-arm -icount shift=0, a regression figure, not a time; "
                "flash and RAM from arm-none-eabi-size; f32 weights, i8 for the _int8 models (QDQ, "
                "i8 activations per tensor, i8 weights per channel)",
        "published": PUBLISHED,
        "rows": rows,
    }
    if args.record:
        args.record.write_text(json.dumps(record, indent=1) + "\n")
    if args.results:
        out = args.results / f"embedded-{now.strftime('%Y-%m-%dT%H%M%SZ')}.json"
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {out}")
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{len(rows) - sum(not r['passed'] for r in rows)} of {len(rows)} programs passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
