"""Render time of a run page with 1,000 sessions, measured in headless Chromium.

Builds a synthetic store holding one run (a lead, nested subagents, launched sessions, artifact
flows, a few continuations), writes the run's page with ``sessiongraph.views.html.run_page``, opens it
in Chromium several times and prints the page's own ``performance.now()`` marks, which its script
writes into the DOM (milliseconds since navigation start):

  data-sg-script-start  the inline script starts (HTML and JSON block parsed)
  data-sg-drawn         the timeline is drawn
  data-sg-ready         the tables are built and layout is done: the page is usable

Usage: .venv/bin/python benchmarks/html_render.py [--sessions 1000] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sessiongraph.store import Store  # noqa: E402
from sessiongraph.views.html import run_page  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
]
MARKS = ("script-start", "parsed", "drawn", "ready")
RUN = "run_bench"


def synthetic_store(db: Path, n: int, seed: int = 7) -> None:
    """One run of ``n`` sessions over three hours; every child has a spawn or launch edge."""
    rng = random.Random(seed)
    t0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    sessions, members, edges, usage, artifacts = [], [], [], [], []
    depth = {}
    for i in range(n):
        sid = f"claude-code:lead-{seed}" if i == 0 else None
        if i == 0:
            start, end, parent, via = t0, t0 + timedelta(hours=3), None, None
            harness, kind, role, model = "claude-code", "main", "lead", "claude-opus-4-5-20251101"
        else:
            p = sessions[rng.randrange(i)]
            while depth[p["session_id"]] >= 3:
                p = sessions[rng.randrange(i)]
            parent, span = p["session_id"], (p["ended_at"] - p["started_at"]).total_seconds()
            start = p["started_at"] + timedelta(seconds=rng.uniform(0.05, 0.8) * span)
            end = start + timedelta(seconds=rng.uniform(0.05, 0.6) * span)
            via = "launch" if rng.random() < 0.15 else "spawn"
            harness = "codex" if via == "launch" else "claude-code"
            sid = f"{harness}:s{i:05d}" if via == "launch" else f"claude-code:lead-{seed}/a{i:05d}"
            kind, role = ("main", "cli") if via == "launch" else ("subagent", "subagent")
            model = (
                "gpt-5.1-codex"
                if via == "launch"
                else rng.choice(["claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"])
            )
            tier = rng.choices(["verified", "heuristic", "reported"], [80, 15, 5])[0]
            edges.append(
                {
                    "edge_id": f"e-{via}-{i}",
                    "kind": via,
                    "src": parent,
                    "dst": sid,
                    "tier": tier,
                    "evidence": "synthetic",
                    "pass": via,
                    "ts": start - timedelta(seconds=0.4),
                    "lag_s": 0.4,
                    "run_id": RUN,
                }
            )
        depth[sid] = 0 if parent is None else depth[parent] + 1
        sessions.append(
            {
                "session_id": sid,
                "harness": harness,
                "session_kind": kind,
                "source_path": f"/bench/{i}.jsonl",
                "started_at": start,
                "ended_at": end,
                "model": model,
                "n_records": 10,
                "ingest_id": 1,
            }
        )
        members.append(
            {
                "run_id": RUN,
                "session_id": sid,
                "parent_session_id": parent,
                "via": via,
                "depth": depth[sid],
                "role": role,
                "role_tier": "heuristic",
            }
        )
        for k in range(rng.randint(1, 3)):
            usage.append(
                {
                    "session_id": sid,
                    "ts": start + timedelta(seconds=k),
                    "model": model,
                    "message_id": f"m{k}",
                    "input_tokens": rng.randint(10, 5000),
                    "output_tokens": rng.randint(10, 3000),
                    "cache_read_tokens": rng.randint(0, 90000),
                    "cache_creation_tokens": 0,
                    "cache_creation_5m_tokens": 0,
                    "cache_creation_1h_tokens": 0,
                    "reasoning_tokens": 0,
                    "source_path": f"/bench/{i}.jsonl",
                    "ingest_id": 1,
                }
            )
    by_start = sorted(sessions, key=lambda s: s["started_at"])
    for j in range(n // 2):  # artifact flows: a write, then a later read by another session
        w, r = sorted(rng.sample(range(n), 2))
        writer, reader = by_start[w], by_start[r]
        wts = writer["started_at"] + (writer["ended_at"] - writer["started_at"]) / 2
        rts = max(reader["started_at"], wts) + timedelta(seconds=5)
        file = f"/work/project/src/module_{j % 180}.py"
        artifacts.append(
            {
                "path": file,
                "version": j // 180 + 1,
                "producer": writer["session_id"],
                "ts": wts,
                "how": "Write",
                "tier": "verified",
                "n_writes": 1,
                "n_reads": 1,
                "writers": [writer["session_id"]],
                "consumers": [reader["session_id"]],
            }
        )
        edges.append(
            {
                "edge_id": f"e-art-{j}",
                "kind": "artifact",
                "src": writer["session_id"],
                "dst": reader["session_id"],
                "tier": rng.choice(["verified", "heuristic"]),
                "evidence": "write then read",
                "pass": "artifacts",
                "ts": rts,
                "lag_s": (rts - wts).total_seconds(),
                "path": file,
                "version": j // 180 + 1,
                "run_id": RUN,
            }
        )
    runs = [
        {
            "run_id": RUN,
            "root_session_id": sessions[0]["session_id"],
            "root_harness": "claude-code",
            "started_at": t0,
            "ended_at": max(s["ended_at"] for s in sessions),
            "n_sessions": n,
            "n_spawns": sum(e["kind"] == "spawn" for e in edges),
            "n_launches": sum(e["kind"] == "launch" for e in edges),
            "n_artifact_edges": n // 2,
            "max_depth": max(depth.values()),
        }
    ]
    with Store(db) as store:
        for table, rows in (
            ("sessions", sessions),
            ("run_sessions", members),
            ("edges", edges),
            ("usage", usage),
            ("artifacts", artifacts),
            ("runs", runs),
        ):
            store.con.register("bench_rows", pl.DataFrame(rows, infer_schema_length=None).to_arrow())
            store.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM bench_rows")
            store.con.unregister("bench_rows")


def measure(page: Path, tmp: Path, fragment: str = "") -> dict[str, float]:
    profile = tempfile.mkdtemp(dir=tmp, prefix="profile-")
    t = time.perf_counter()
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri() + fragment],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    wall = (time.perf_counter() - t) * 1000
    head = dom[:400]
    marks = {m: float(re.search(rf'data-sg-{m}="([0-9.]+)"', head).group(1)) for m in MARKS}
    marks["bars"] = dom.count('class="bar ')
    marks["edges"] = dom.count('<g class="edge ')
    marks["chromium_process"] = wall
    return marks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="Keep the store and page in this folder.")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found: apt-get install chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = args.keep or Path(tmpdir)
        tmp.mkdir(parents=True, exist_ok=True)
        db = tmp / "bench.duckdb"
        db.unlink(missing_ok=True)
        synthetic_store(db, args.sessions)
        t = time.perf_counter()
        with Store(db, read_only=True) as store:
            text = run_page(store, RUN)
        build_ms = (time.perf_counter() - t) * 1000
        page = tmp / "run.html"
        page.write_text(text, encoding="utf-8")
        print(f"page: {args.sessions} sessions, {len(text) / 1e6:.2f} MB, built by sessiongraph in {build_ms:.0f} ms")
        root = "claude-code:lead-7"
        for label, fragment in (
            ("open", ""),
            ("open, sort by USD, select the lead", f"#sort=usd:desc&select=session:{quote(root, safe='')}"),
        ):
            runs = [measure(page, tmp, fragment) for _ in range(args.repeat)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            print(
                f"{label}: median of {args.repeat} in Chromium, ms since navigation start: "
                f"script start {med['script-start']:.0f}, timeline drawn {med['drawn']:.0f}, "
                f"ready {med['ready']:.0f} (script ran {med['ready'] - med['script-start']:.0f}); "
                f"{med['bars']:.0f} lane bars, {med['edges']:.0f} edges; whole chromium process "
                f"{med['chromium_process']:.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
