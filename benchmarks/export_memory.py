"""Peak memory of each export at two store sizes: does it stay flat as the store grows?

    python benchmarks/export_memory.py --workdir /tmp/expmem                  # 170 and 700 MB
    python benchmarks/export_memory.py --workdir /tmp/expmem --code DIR       # another checkout's code

For each size, ``replicate.py`` copies the real logs of ``../shared`` into ``WORKDIR/logs<MB>``
with fresh ids and ``sessiongraph ingest --privacy full`` (trajectories need text) builds
``WORKDIR/s<MB>.duckdb``; both are kept and reused (the 700 MB store takes minutes). Each export
then runs in a subprocess of its own, and its peak RSS is that child's ``ru_maxrss`` (``wait4``).
``--code DIR`` runs the exports with the sessiongraph installed in DIR instead, to measure the
same stores before a change: ``git archive OLD | tar -x -C SRC && pip install --no-deps --target
DIR SRC`` (a bare checkout will not do: the package maps ``ingest/`` and ``inference/`` inside
it). This checkout's editable install would win over ``PYTHONPATH``, so the child drops it.

``run.py`` (``make bench``) uses :func:`peaks` and :func:`growth` on the ``--privacy full`` stores
its own ingests made.
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


# The editable install's finder sits before PYTHONPATH on sys.meta_path, and `python -c` puts the
# working directory (maybe this checkout) first on sys.path: without both, --code's package wins.
_NOT_EDITABLE = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path"
    " if not getattr(f, '__module__', '').startswith('__editable__')]; sys.path[:] = [p for p in sys.path if p]; "
)


def cli(args: list[str], code: str | None) -> tuple[float, float]:
    """Run ``sessiongraph ARGS`` in a child; (peak RSS in MB, wall seconds)."""
    env = dict(os.environ)
    prelude = ""
    if code:
        env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
        prelude = _NOT_EDITABLE
    cmd = [sys.executable, "-c", prelude + "from sessiongraph.cli import main; main()", *args]
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


def peaks(db: Path, out: Path, only: list[str] | None = None, code: str | None = None, say=print) -> dict[str, dict]:
    """Each export of ``db`` (into ``out/<name>``, emptied first) in a child of its own:
    name -> {peak_rss_mb, wall_s}."""
    results: dict[str, dict] = {}
    for name, template in EXPORTS.items():
        if only and name not in only:
            continue
        target = out / name.replace(" ", "_")
        shutil.rmtree(target, ignore_errors=True)
        rss, wall = cli([a.format(out=target) for a in template] + ["--db", str(db)], code)
        results[name] = {"peak_rss_mb": round(rss), "wall_s": round(wall, 1)}
        say(f"{name:24} {db.name:>16}  peak {rss:7.0f} MB  {wall:6.1f} s")
    return results


def growth(by_size: dict[str, dict[str, dict]], small: str, big: str) -> dict[str, dict]:
    """{size: {export: figures}} -> {export: {size: figures, ..., "ratio": big peak / small peak}}."""
    out: dict[str, dict] = {}
    for size, results in by_size.items():
        for name, figures in results.items():
            out.setdefault(name, {})[size] = figures
    for by in out.values():
        if small in by and big in by:
            by["ratio"] = round(by[big]["peak_rss_mb"] / by[small]["peak_rss_mb"], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[170, 700], help="MB of replicated logs")
    ap.add_argument("--code", help="a checkout whose sessiongraph the exports run (default: this one)")
    ap.add_argument("--only", nargs="+", choices=list(EXPORTS), help="just these exports")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    by_size = {
        str(mb): peaks(store(args.workdir, mb), args.workdir / "out" / str(mb), args.only, args.code)
        for mb in args.sizes
    }
    sizes = [str(mb) for mb in args.sizes]
    print(json.dumps(growth(by_size, sizes[0], sizes[-1]) if len(sizes) == 2 else growth(by_size, "", ""), indent=2))


if __name__ == "__main__":
    main()
