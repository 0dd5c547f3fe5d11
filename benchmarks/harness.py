"""What the Python benchmarks that call Partita and its peers in one process share.

    import harness
    m = harness.Module("build/benchmarks/peers/bench_peer_w4_lenet.so")
    h = m.create(0)
    call = m.runner(h, x, threads=1)        # call() runs once; call.out is the output
    times = harness.alternated({"partita": call, "ort": other}, rounds=21, gap=0.02, warm=0.05)

`Module` loads a model module built from benchmarks/module/model.cpp; `alternated` calls
implementations in turn; `read_safetensors` reads the inputs and outputs the benchmarks keep;
`lscpu` names the CPU and its vector flags. Needs numpy.
"""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import time

import numpy as np

FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8",
         "amx_bf16", "asimd", "sve")
DTYPES = {"F32": np.float32, "I64": np.int64}


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """The F32 and I64 tensors of a safetensors file, by name."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in head.items():
        if name == "__metadata__" or t["dtype"] not in DTYPES:
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
    return out


def lscpu() -> tuple[str | None, list[str]]:
    """lscpu's model name and the vector flags (FLAGS) the CPU has."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return None, []
    name, flags = None, []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            name = value.strip()
        elif key.strip() == "Flags":
            have = set(value.split())
            flags = [f for f in FLAGS if f in have]
    return name, flags


class Module:
    """A model module (benchmarks/module/model.cpp): Partita's executables of one or two models."""

    def __init__(self, path: str, who: str = "harness"):
        self.who = who
        self.lib = ctypes.CDLL(path)
        lib = self.lib
        lib.pbi_error.restype = ctypes.c_char_p
        lib.pbi_create.restype = ctypes.c_void_p
        lib.pbi_create.argtypes = [ctypes.c_int]
        lib.pbi_destroy.argtypes = [ctypes.c_void_p]
        lib.pbi_input_elements.restype = lib.pbi_output_elements.restype = ctypes.c_long
        lib.pbi_set_threads.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.pbi_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.pbi_profile.restype = ctypes.c_long
        lib.pbi_profile.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_long]
        lib.pbi_reset_profile.argtypes = [ctypes.c_void_p]
        lib.pbi_madd_peak_gmacs.restype = ctypes.c_double
        self.out_elements = lib.pbi_output_elements()
        self.in_elements = lib.pbi_input_elements()
        self.in_type = np.int64 if lib.pbi_input_type() == 1 else np.float32

    def fail(self, what: str):
        raise SystemExit(f"{self.who}: {what}: {self.lib.pbi_error().decode()}")

    def create(self, variant: int) -> int:
        h = self.lib.pbi_create(variant)
        if not h:
            self.fail(f"variant {variant}")
        return h

    def destroy(self, handle: int):
        self.lib.pbi_destroy(handle)

    def runner(self, handle: int, x: np.ndarray, threads: int):
        """A call that runs the executable once on x; the output array is the call's .out."""
        if self.lib.pbi_set_threads(handle, threads) != 0:
            self.fail("set_threads")
        x = np.ascontiguousarray(x, dtype=self.in_type).reshape(-1)
        if x.size != self.in_elements:
            raise SystemExit(f"{self.who}: the input has {x.size} elements, the model {self.in_elements}")
        out = np.zeros(self.out_elements, dtype=np.float32)
        run, xp, op = self.lib.pbi_run, x.ctypes.data, out.ctypes.data

        def call():
            if run(handle, xp, op) != 0:
                self.fail("run")
        call.out = out
        call.keep = x  # the input array lives as long as the call
        return call

    def profile(self, handle: int) -> list[dict]:
        """The profiling build's steps since the last reset: step, what, shape, us, macs."""
        need = self.lib.pbi_profile(handle, None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        self.lib.pbi_profile(handle, buf, need + 1)
        return [json.loads(line) for line in buf.value.decode().splitlines() if line]


def alternated(calls: dict, rounds: int, gap: float, warm: float = 0.0) -> dict[str, list[float]]:
    """Microseconds of each call per round, the calls in turn, each round starting one further on
    and every other round in reverse order. A pause of `gap` seconds before each turn lets the
    previous implementation's threads go idle; then, where `warm` > 0, the implementation runs
    untimed for at least `warm` seconds (one call at least) before its timed call. A core that
    was idle comes back slowly (on a virtual machine it can take milliseconds of work before a
    halted virtual CPU runs at full speed again), so without that warm-up a short model's timed
    call measures the wake-up, not the steady latency that a user serving requests sees."""
    names = list(calls)
    times = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if r % 2:
            order.reverse()
        for n in order:
            time.sleep(gap)
            if warm > 0:
                until = time.perf_counter() + warm
                calls[n]()
                while time.perf_counter() < until:
                    calls[n]()
            start = time.perf_counter_ns()
            calls[n]()
            times[n].append((time.perf_counter_ns() - start) / 1e3)
    return times


def write_safetensors(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Writes `arrays` (f32 or i64) as a safetensors file, little-endian, in the order given."""
    names = {np.dtype(t): n for n, t in DTYPES.items()}
    table, parts, at = {}, [], 0
    for name, value in arrays.items():
        raw = np.ascontiguousarray(value).astype(np.dtype(value.dtype).newbyteorder("<"), copy=False).tobytes()
        table[name] = {"dtype": names[np.dtype(value.dtype)], "shape": list(value.shape), "data_offsets": [at, at + len(raw)]}
        parts.append(raw)
        at += len(raw)
    head = json.dumps(table, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for raw in parts:
            f.write(raw)


def finish_record(r: dict, rows: list[dict], load_before: tuple, notes: str | None, out: str, who: str) -> str:
    """Adds the CPU (lscpu's name and vector flags), the load average before and after the run
    (other programs on the machine slow some calls: it says whether there were any), the rows
    and the notes to record `r` (benchmarks/record.py's header), writes it under `out`, checks
    that it reads back and says where it went; returns the path."""
    import record  # benchmarks/record.py, beside this file
    model_name, flags = lscpu()
    r["machine"]["lscpu_model_name"] = model_name
    r["machine"]["flags"] = flags
    r["machine"]["load_average"] = {"before": [round(v, 2) for v in load_before],
                                    "after": [round(v, 2) for v in os.getloadavg()]}
    r["figures"] = rows
    if notes:
        r["notes"] = notes
    path = record.write(r, out)
    with open(path, encoding="utf-8") as f:
        json.load(f)
    print(f"{who}: wrote {path}")
    return path


def add_run_arguments(ap, runs: int, warmup: int, where: str, gap_ms: float = 20) -> None:
    """The options every script benchmark takes: --threads, --runs, --warmup, --gap-ms, --warm-ms, --dir
    (`where`: the build directory's benchmarks/... that holds the modules), --out and --notes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--threads", default="1,2", type=lambda s: [int(t) for t in s.split(",")])
    ap.add_argument("--runs", type=int, default=runs, help="timed rounds (each calls every implementation once)")
    ap.add_argument("--warmup", type=int, default=warmup, help="untimed rounds first")
    ap.add_argument("--gap-ms", type=float, default=gap_ms, help="pause before each turn")
    ap.add_argument("--warm-ms", type=float, default=50,
                    help="untimed calls for at least this long before each timed call (0: none)")
    ap.add_argument("--dir", default=os.path.join(root, "build", "benchmarks", where),
                    help=f"the build directory's benchmarks/{where}")
    ap.add_argument("--out", default=os.path.join(root, "benchmarks", "results"))
    ap.add_argument("--notes", help="anything worth knowing about the run (another load on the machine...)")
