"""What ``--privacy full`` costs over the default ``metadata_only``: CPU seconds and peak memory.

    python benchmarks/privacy_cost.py /work/bench/real-170 /work/bench/real-700      # one pair each
    python benchmarks/privacy_cost.py CORPUS --runs 3 --json
    python benchmarks/privacy_cost.py CORPUS --code DIR      # DIR: another checkout (git archive)

For each corpus, ``sessiongraph ingest CORPUS --db NEW --workers 1 --json --privacy P`` runs for
``P = metadata_only`` and ``P = full`` in turn (``--runs`` pairs, each into a fresh store in a
temporary folder), each in a child process of its own: its CPU seconds (user + system) and peak
RSS are the child's own, from ``wait4``. The ratios full / metadata_only are taken pair by pair
(the median is printed), so a machine whose speed drifts during the call moves both sides.

``--code DIR`` runs the ingests from the source checkout DIR (its ``sessiongraph/``, ``ingest/``,
``inference/`` and ``sql/``, laid out as the installed package), to measure before a change with
this environment's libraries.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROFILES = ("metadata_only", "full")
# The installed package's layout (pyproject.toml [tool.setuptools.package-dir]).
PACKAGE_DIRS = {"ingest": "ingest", "inference": "inference", "sql": "sql"}


def corpus_mb(root: Path) -> float:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6


def layout(code: Path, into: Path) -> Path:
    """A folder whose ``sessiongraph`` package is the checkout's, laid out as pip installs it
    (links only: the checkout stays untouched)."""
    pkg = into / "sessiongraph"
    pkg.mkdir()
    for entry in (code / "sessiongraph").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for name, folder in PACKAGE_DIRS.items():
        (pkg / name).symlink_to(code / folder)
    return into


def ingest(corpus: Path, profile: str, db: Path, path: Path | None) -> dict:
    """One cold ingest in a child: CPU seconds, peak RSS (MiB) and wall seconds."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "sessiongraph", "ingest", str(corpus), "--db", str(db)]
    cmd += ["--workers", "1", "--json", "--privacy", profile]
    t0 = time.perf_counter()
    # Run from the store's folder: `-m` puts the working folder first on sys.path, before PYTHONPATH.
    proc = subprocess.Popen(cmd, env=env, cwd=db.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err}")
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024, "wall_s": wall}


def ran_from(path: Path | None, cwd: Path) -> str:
    """Where the children's sessiongraph is imported from (a check that --code took)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path) + os.pathsep + env.get("PYTHONPATH", "")
    probe = "import sessiongraph.ingest.secrets as s, os; print(os.path.dirname(os.path.dirname(os.path.realpath(s.__file__))))"
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def measure(corpus: Path, runs: int, path: Path | None, workdir: Path) -> dict:
    pairs = []
    for i in range(runs):
        pairs.append({p: ingest(corpus, p, workdir / f"{p}-{i}.duckdb", path) for p in PROFILES})
    out: dict = {"corpus": str(corpus), "corpus_mb": round(corpus_mb(corpus), 1), "runs": runs}
    for p in PROFILES:
        for key in ("cpu_s", "peak_rss_mib", "wall_s"):
            out[f"{p}_{key}"] = round(statistics.median(r[p][key] for r in pairs), 2)
    for key, name in (("cpu_s", "cpu_ratio"), ("peak_rss_mib", "rss_ratio")):
        out[name] = round(statistics.median(r["full"][key] / r["metadata_only"][key] for r in pairs), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=1, help="pairs of ingests per corpus (default 1)")
    ap.add_argument("--code", type=Path, help="a source checkout to run instead of the installed package")
    ap.add_argument("--json", action="store_true", help="one JSON object per corpus on stdout")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sg-privacy-") as tmp:
        path = layout(args.code.resolve(), Path(tmp)) if args.code else None
        code = ran_from(path, Path(tmp))
        results = [measure(c.resolve(), args.runs, path, Path(tmp)) for c in args.corpora]
    load = os.getloadavg()[0]
    if args.json:
        for r in results:
            print(json.dumps({**r, "code": code, "load_average": round(load, 1)}))
        return
    print(f"--privacy full against metadata_only, one worker, cold; code in {code}; load average {load:.1f}")
    print(
        f"{'corpus MB':>10} {'meta cpu s':>11} {'full cpu s':>11} {'ratio':>6} {'meta MiB':>9} {'full MiB':>9} {'ratio':>6}"
    )
    for r in results:
        print(
            f"{r['corpus_mb']:>10.1f} {r['metadata_only_cpu_s']:>11.2f} {r['full_cpu_s']:>11.2f} {r['cpu_ratio']:>6.2f}"
            f" {r['metadata_only_peak_rss_mib']:>9.0f} {r['full_peak_rss_mib']:>9.0f} {r['rss_ratio']:>6.2f}"
        )


if __name__ == "__main__":
    main()
