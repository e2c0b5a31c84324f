"""How ingest cost grows with the archive: cold ingests of two sizes, and what a warm ingest, one
appended line, and one appended line with a new file in another workspace cost at the larger.

    python benchmarks/scale.py                          # 100 and 400 MB under a temp folder
    python benchmarks/scale.py --sizes 100,400 --workdir ~/.cache/sg-scale --json

Corpora are ``repeat_samples.py`` copies of sample_logs/ (``WORKDIR/c<MB>``, made once and kept
with ``--workdir``); every command is a fresh ``python -m sessiongraph ingest`` timed by
``run.py``'s probe (wall seconds, CPU seconds of the whole process tree, peak RSS of its largest
process). The appended line is the last line of a Claude transcript of the first copy, repeated;
the new file is a sample transcript rewritten as another developer's (a copy number no corpus
uses), so it lands in a workspace of its own. Both are undone afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import repeat_samples
from run import child_env, measure

# The targets on the 2-core machine (benchmarks/README.md).
TARGETS = {"append_s": 1.0, "warm_s": 1.0, "cold_ratio": 4.4, "peak_rss_mb": 1024.0, "rss_ratio": 1.3}
NEW_COPY = 99_999


def ingest(corpus: Path, db: Path, work: Path, name: str) -> dict:
    cmd = [sys.executable, "-m", "sessiongraph", "ingest", str(corpus), "--db", str(db), "--json"]
    m = measure(name, cmd, work, child_env())
    summary = json.loads(m["stdout"])
    return {
        "seconds": round(m["seconds"], 3),
        "cpu_s": round(m["cpu_s"], 3),
        "peak_rss_mb": round(m["peak_rss_mb"], 1),
        "files_read": summary["files_read"],
        "files_inferred": summary.get("files_inferred"),
        "partitions_inferred": summary.get("partitions_inferred"),
    }


def corpus_for(work: Path, mb: int) -> Path:
    out = work / f"c{mb}"
    if not out.is_dir() or not any(out.iterdir()):
        repeat_samples.main([str(out), "--size-mb", str(mb)])
    return out


def transcript(corpus: Path) -> Path:
    """A Claude main transcript of the first copy (the same one at every size)."""
    return sorted((corpus / "copy-0000" / "claude-code" / "projects").glob("*/*.jsonl"))[0]


def new_workspace_file(corpus: Path) -> Path:
    """A sample transcript as a developer no copy has: fresh ids, its own home and project."""
    samples = repeat_samples.SAMPLES
    rel = sorted((samples / "claude-code" / "projects").glob("*/*.jsonl"))[0].relative_to(samples)
    rw = repeat_samples.Rewriter(NEW_COPY, repeat_samples.id_tokens([rel.as_posix()], [(samples / rel).read_bytes()]))
    target = corpus / f"copy-{NEW_COPY}" / rw.text(rel.as_posix())
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(rw.content(rel.name, (samples / rel).read_bytes()))
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,400", help="corpus sizes in MB, smallest first (default 100,400)")
    ap.add_argument("--workdir", type=Path, help="where corpora and stores go (kept); default a temp folder")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="sg-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    r: dict = {"sizes_mb": sizes}
    for mb in sizes:
        corpus = corpus_for(work, mb)
        db = work / f"store-{mb}.duckdb"
        for p in (db, db.with_name(db.name + ".wal"), db.with_name(db.name + ".lock")):
            p.unlink(missing_ok=True)
        m = ingest(corpus, db, work, f"cold-{mb}")
        r[f"cold_s_{mb}"], r[f"cold_cpu_s_{mb}"], r[f"peak_rss_mb_{mb}"] = m["seconds"], m["cpu_s"], m["peak_rss_mb"]
        r[f"files_{mb}"] = sum(1 for _ in corpus.rglob("*.json*"))
        print(f"cold {mb} MB: {m}", file=sys.stderr)
    small, big = sizes[0], sizes[-1]
    r["cold_ratio"] = round(r[f"cold_s_{big}"] / r[f"cold_s_{small}"], 2)
    r["cold_cpu_ratio"] = round(r[f"cold_cpu_s_{big}"] / r[f"cold_cpu_s_{small}"], 2)
    r["rss_ratio"] = round(r[f"peak_rss_mb_{big}"] / r[f"peak_rss_mb_{small}"], 2)
    r["peak_rss_mb"] = r[f"peak_rss_mb_{big}"]
    corpus, db = work / f"c{big}", work / f"store-{big}.duckdb"
    steps = {}
    steps["warm"] = ingest(corpus, db, work, "warm")
    path = transcript(corpus)
    original, stat = path.read_bytes(), path.stat()
    line = original.splitlines(keepends=True)[-1]
    new = None
    try:
        path.write_bytes(original + line)
        steps["append"] = ingest(corpus, db, work, "append")
        new = new_workspace_file(corpus)
        path.write_bytes(original + line + line)
        steps["append_new_file"] = ingest(corpus, db, work, "append-new-file")
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if new is not None:
            shutil.rmtree(corpus / f"copy-{NEW_COPY}", ignore_errors=True)
    for name, m in steps.items():
        print(f"{name} at {big} MB: {m}", file=sys.stderr)
        r[f"{name}_s"], r[f"{name}_cpu_s"] = m["seconds"], m["cpu_s"]
        r[f"{name}_peak_rss_mb"] = m["peak_rss_mb"]
        r[f"{name}_files_inferred"] = m["files_inferred"]
    r["targets_met"] = {k: r[k] <= v for k, v in TARGETS.items()}
    if args.json:
        print(json.dumps(r))
    else:
        for k, v in r.items():
            print(f"{k:<28} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
