"""Where a 24-puzzle search spends its time inside the compiled driver: the hottest instructions.

    python bench/profile_kernel.py --config 24-cat-7:zero-aware:fsm16 --ids 40 [--top 12] [--out FILE]

The configuration is ``bench_24.py``'s (``NAME:BLANK[:PRUNING[:HEURISTIC[:ENCODING]]]``).  The search runs in
a child process under ``perf record -e cpu-clock`` (sampling works in virtual machines without hardware
counters); the child compiles the driver first, then dumps from its own memory the code mapping of every
compiled ``ida`` specialization (with the functions it calls).  Numba's code has no symbols for perf, so
the samples are matched to that dump by address and each hot address is shown with the instructions
before it, disassembled by ``objdump``.  A sample lands on the instruction after the one that stalled (the
interrupt's skid): an address right after a load from a table is time spent waiting for that load.

Needs ``perf`` and ``objdump`` (binutils).  Writes the shares (of all samples, and of the samples in the
compiled code) and the disassembly of the top addresses to ``--out`` (default
``bench/results/history/profile_kernel.json``), with the machine, load and command of the run.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _results  # noqa: E402

HERE = Path(__file__).resolve()


def _mapping(address: int) -> tuple[int, int]:
    """The memory mapping of this process that holds ``address``: (start, end)."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= address < hi:
            return lo, hi
    raise SystemExit(f"address {address:#x} is not mapped")


def child(args) -> None:
    """Run the searches (inside ``perf record``) and dump the driver's code: ``--dump-dir``/ADDR.bin."""
    import bench_24

    from pdbtool.search import driver

    opts = argparse.Namespace(cache_dir=args.cache_dir, threads=1, pruning=None, copy_tables=False)
    solver = bench_24.make_solver(args.config, opts)
    instances = bench_24.load_korf24_50()
    solver.solve(instances[args.ids[0]]["tiles"], node_limit=1000)  # compiled before the profile matters
    # the whole code mapping of each compiled driver: the functions it calls that LLVM did not inline lie
    # beside it
    for cres in driver.ida.overloads.values():
        lo, hi = _mapping(cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
        Path(args.dump_dir, f"{lo:x}.bin").write_bytes(ctypes.string_at(lo, min(hi - lo, 1 << 24)))
    nodes = 0
    cpu = time.process_time()
    for ident in args.ids:
        result = solver.solve(instances[ident]["tiles"])
        nodes += result.nodes_generated
    print(json.dumps({"nodes_generated": nodes, "cpu_seconds": time.process_time() - cpu, "label": solver.label}))


def _samples(perf_data: Path) -> dict[str, float]:
    """Percent of all samples per shared object, and per address in the compiled code (key ``0x...``)."""
    out: dict[str, float] = {}
    patterns = {"dso": r"^\s*([\d.]+)%\s+(.+?)\s*$", "sym": r"^\s*([\d.]+)%\s+\[\.\]\s+(0x[0-9a-f]+)\s*$"}
    for sort, pattern in patterns.items():
        text = subprocess.run(["perf", "report", "-i", str(perf_data), "--sort", sort, "--stdio"],
                              capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            m = re.match(pattern, line)
            if m and not line.startswith("#"):
                key = m.group(2) if sort == "sym" else "dso:" + m.group(2)
                out[key] = out.get(key, 0.0) + float(m.group(1))
    return out


def _disassembly(dump: Path, base: int) -> list[tuple[int, str]]:
    text = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", f"--adjust-vma={base:#x}", str(dump)],
                          capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)$", line)
        if m and m.group(2):
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="24-cat-7:zero-aware:fsm16")
    ap.add_argument("--ids", type=lambda s: [int(x) for x in s.split(",")], default=[40])
    ap.add_argument("--top", type=int, default=12, help="hot addresses shown")
    ap.add_argument("--context", type=int, default=4, help="instructions shown before each hot address")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", type=Path, default=_results.RESULTS / "history" / "profile_kernel.json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dump-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args)
        return 0
    missing = [tool for tool in ("perf", "objdump") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(f"profile_kernel.py needs {' and '.join(missing)} on the PATH")
    started, load_before = time.time(), _results.load_average()
    with tempfile.TemporaryDirectory() as tmp:
        perf_data = Path(tmp) / "perf.data"
        command = [sys.executable, str(HERE), "--child", "--dump-dir", tmp, "--config", args.config,
                   "--ids", ",".join(map(str, args.ids))] + (["--cache-dir", args.cache_dir] if args.cache_dir else [])
        run = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", str(perf_data), "--", *command],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"the profiled search failed:\n{run.stderr[-2000:]}")
        search = json.loads(run.stdout.strip().splitlines()[-1])
        shares = _samples(perf_data)
        dumps = {int(p.stem, 16): p for p in Path(tmp).glob("*.bin")}
        code = {}
        for base, path in dumps.items():
            code.update({addr: (base, ins) for addr, ins in _disassembly(path, base)})
    hot = sorted(((float(v), int(k, 16)) for k, v in shares.items() if k.startswith("0x")), reverse=True)
    jit = sum(v for v, _ in hot)
    in_driver = sum(v for v, a in hot if a in code)
    addresses = sorted(code)
    rows = []
    for share, address in hot[:args.top]:
        if address not in code:
            rows.append({"percent_of_samples": share, "address": hex(address), "where": "outside the driver"})
            continue
        i = addresses.index(address)
        before = [f"{addresses[j] - code[address][0]:#x}: {code[addresses[j]][1]}"
                  for j in range(max(0, i - args.context), i + 1)]
        rows.append({"percent_of_samples": share, "percent_of_driver": round(100 * share / in_driver, 2),
                     "offset_in_mapping": hex(address - code[address][0]), "instructions_up_to_it": before})
    report = {"config": args.config, "ids": args.ids, "search": search,
              "percent_by_object": {k[4:]: v for k, v in shares.items() if k.startswith("dso:")},
              "percent_in_compiled_code": round(jit, 2), "percent_in_driver": round(in_driver, 2), "hot": rows}
    for row in rows:
        lines = row.get("instructions_up_to_it", [row.get("where", "")])
        print(f"{row['percent_of_samples']:6.2f} %  " + "\n          ".join(lines))
    print(f"compiled code {jit:.1f} % of the samples, the driver {in_driver:.1f} %; search {search}")
    out = _results.write(args.out, report, command=["profile_kernel.py", *(argv if argv is not None else sys.argv[1:])],
                         started=started, load_before=load_before)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
