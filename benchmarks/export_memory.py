"""Peak memory of each export at two store sizes: does it stay flat as the store grows?

    python benchmarks/export_memory.py --workdir /tmp/expmem                  # 170 and 700 MB
    python benchmarks/export_memory.py --workdir /tmp/expmem --code DIR       # another checkout's code

For each size, ``replicate.py`` copies the real logs of ``../shared`` into ``WORKDIR/logs<MB>``
with fresh ids and ``sessiongraph ingest --privacy full`` (trajectories need text) builds
``WORKDIR/s<MB>.duckdb``; both are kept and reused (the 700 MB store takes minutes). Each export
then runs in a subprocess of its own, and its peak RSS is that child's ``ru_maxrss`` (``wait4``).
``--code DIR`` puts DIR (a checkout, e.g. ``git archive`` of an older commit) first on the
subprocesses' ``PYTHONPATH``, to measure the same stores before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

EXPORTS = {
    "parquet": ["export", "parquet", "--privacy", "full", "--out", "{out}"],
    "trajectories": ["export", "trajectories", "--out", "{out}"],
    "trajectories --by run": ["export", "trajectories", "--by", "run", "--out", "{out}"],
    "ocp": ["export", "ocp", "--privacy", "full", "--out", "{out}"],
}


def cli(args: list[str], code: str | None) -> tuple[float, float]:
    """Run ``sessiongraph ARGS`` in a child; (peak RSS in MB, wall seconds)."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-c", "from sessiongraph.cli import main; main()", *args]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{err}")
    return usage.ru_maxrss / 1024, wall  # Linux: KiB


def store(workdir: Path, mb: int) -> Path:
    db = workdir / f"s{mb}.duckdb"
    if db.exists():
        return db
    logs = workdir / f"logs{mb}"
    if not logs.exists():
        subprocess.run([sys.executable, str(HERE / "replicate.py"), str(logs), "--size-mb", str(mb)], check=True)
    cli(["ingest", str(logs), "--db", str(db), "--privacy", "full"], None)
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[170, 700], help="MB of replicated logs")
    ap.add_argument("--code", help="a checkout whose sessiongraph the exports run (default: this one)")
    ap.add_argument("--only", nargs="+", choices=list(EXPORTS), help="just these exports")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    for mb in args.sizes:
        db = store(args.workdir, mb)
        for name, template in EXPORTS.items():
            if args.only and name not in args.only:
                continue
            out = args.workdir / "out" / f"{name.replace(' ', '_')}-{mb}"
            shutil.rmtree(out, ignore_errors=True)
            rss, wall = cli([a.format(out=out) for a in template] + ["--db", str(db)], args.code)
            results.setdefault(name, {})[mb] = {"peak_rss_mb": round(rss), "wall_s": round(wall, 1)}
            print(f"{name:24} {mb:5} MB  peak {rss:7.0f} MB  {wall:6.1f} s", flush=True)
    if len(args.sizes) == 2:
        small, big = args.sizes
        for by in results.values():
            by["ratio"] = round(by[big]["peak_rss_mb"] / by[small]["peak_rss_mb"], 2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
