"""Benchmark sessiongraph: ingest on three kinds of corpus, the exports' memory and watch latency, one
table for each corpus and one summary table of the figures issue 30 sets targets for (or --json).

    python benchmarks/run.py                              # make bench: everything, in a temp dir deleted after
    python benchmarks/run.py --real-dir DIR               # real corpora in DIR/real-<MB>, made once, reused
    python benchmarks/run.py --size 200 --big-file-mb 100 --skip loopmath,watch --json
    python benchmarks/run.py --size 0 --small-mb 0 --real-mb 170 --skip exports,watch   # one real size only

The corpora: ``generated`` (``gen.py``, ``--size`` MB), ``real`` (the shared real transcripts
copied with fresh ids by ``replicate.py``, at each size of ``--real-mb``, default 170 and 700 MB)
and ``small_files`` (``repeat_samples.py``, ``--small-mb`` MB of tiny files). ``0`` skips one.
Then the exports' peak memory on each real size's ``--privacy full`` store (``export_memory.py``)
and their growth from the smallest size to the largest, and the append-to-queryable latency
under ``sessiongraph watch`` with ``--watch-files`` files (``watch_latency.py``).

Every measured step runs as its own child process under a fresh probe process (``run.py
_probe``), which times it and, after reaping it, reads its own ``/proc/self/io`` and
``getrusage(RUSAGE_CHILDREN)``: the kernel adds a reaped child's I/O counters and its largest
descendant's peak RSS there, so one probe sees the whole process tree (pool workers included).
Bytes read are ``rchar`` (every byte returned by read(2)-like calls, page cache or not; the
store's DuckDB reads count too); ``read_bytes`` only counts what missed the page cache, which
on a freshly generated corpus is close to nothing.

Steps, in order (``--skip`` names in brackets; the real corpora have no append and big steps, the
small-files corpus only the orjson, cold all-cores and warm steps):
- [orjson] every line of every file through ``orjson.loads`` in one process: the parse floor
- [ingest1w] cold ``sessiongraph ingest --workers 1`` into a fresh store
- [privacy] (real corpora) the same with ``--privacy full``: its store is the exports' store
- cold ``sessiongraph ingest`` with all cores into a fresh store (the base of the next steps)
- [loopmath] cold ``sessiongraph export ocp`` of that store, and cold ``loopmath graph --all
  --no-cache --format ocp --logs CORPUS --workspace ...`` (every workspace of the corpus)
- [warm] the same ingest again with nothing changed
- [append] 1 MB of valid records appended to the largest Claude transcript, then ingest; the
  file is truncated back (and its mtime restored) afterwards
- [big] one ``--big-file-mb`` Claude transcript alone, ingested into a fresh store
- [exports] (after the corpora) each export of ``export_memory.EXPORTS`` on each real size's
  ``--privacy full`` store, in a child of its own: peak RSS, wall seconds, growth ratio
- [watch] ``watch_latency.latency``: ``--watch-appends`` appends with ``--watch-files`` files watched
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import export_memory  # noqa: E402 - the generators and the other benchmarks live next to this file
import gen  # noqa: E402
import repeat_samples  # noqa: E402
import replicate  # noqa: E402
import watch_latency  # noqa: E402

SKIPPABLE = ("orjson", "ingest1w", "privacy", "loopmath", "warm", "append", "big", "exports", "watch")
REAL_MB = "170,700"  # the replicated real corpora's sizes (issue 30 measures at about these two)
KEYS = (
    "corpus_mb",
    "files",
    "orjson_mb_s",
    "ingest_mb_s_1w",
    "ingest_mb_s_all",
    "ratio_vs_orjson",
    "loopmath_s",
    "ratio_vs_loopmath",
    "ratio_vs_loopmath_1w",
    "orjson_cpu_s",
    "ingest_cpu_s_1w",
    "loopmath_cpu_s",
    "ratio_vs_orjson_cpu",
    "ratio_vs_loopmath_1w_cpu",
    "warm_s",
    "append_s",
    "append_bytes_read",
    "peak_rss_mb",
    "big_file_mb",
    "big_file_peak_rss_mb",
    "ingest_peak_rss_mb_1w",
    "ingest_cpu_s_1w_full",
    "ingest_peak_rss_mb_1w_full",
    "ratio_full_vs_metadata_cpu",
    "ratio_full_vs_metadata_rss",
)
APPEND_BYTES = 1_000_000


# -- the probe: one measured child process tree ------------------------------------------------


def _io_self() -> dict[str, int]:
    with open("/proc/self/io") as fh:
        return {k: int(v) for k, v in (line.split(":") for line in fh)}


def probe_main(argv: list[str]) -> int:
    """``run.py _probe OUT ERR -- CMD...``: run CMD with stdout/stderr to files, print the measures."""
    out, err, cmd = argv[0], argv[1], argv[3:]
    before = _io_self()
    t0 = time.perf_counter()
    with open(out, "wb") as fo, open(err, "wb") as fe:
        rc = subprocess.call(cmd, stdout=fo, stderr=fe)
    seconds = time.perf_counter() - t0
    after = _io_self()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = usage.ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "rc": rc,
                "seconds": seconds,
                "cpu_s": usage.ru_utime + usage.ru_stime,  # the whole tree's, pool workers included
                "rchar": after["rchar"] - before["rchar"],
                "read_bytes": after["read_bytes"] - before["read_bytes"],
                "peak_rss_mb": peak / 1024,
            }
        )
    )
    return 0


def measure(name: str, cmd: list[str], work: Path, env: dict | None = None) -> dict:
    """Run ``cmd`` under a fresh probe; its measures plus ``stdout`` (the command's output)."""
    out, err = work / f"{name}.out", work / f"{name}.err"
    res = subprocess.run(
        [sys.executable, __file__, "_probe", str(out), str(err), "--", *cmd],
        capture_output=True,
        text=True,
        env=env or child_env(),
        check=True,
    )
    m = json.loads(res.stdout)
    m["stdout"] = out.read_text()
    if m["rc"] != 0:
        raise SystemExit(f"{name} failed (exit {m['rc']}): {' '.join(cmd)}\n{err.read_text()[-3000:]}")
    return m


def compile_checkout() -> None:
    """Write the bytecode of this checkout's packages, as pip does when it installs a wheel.

    An editable install has none until an interpreter writes it, and one started with
    ``PYTHONDONTWRITEBYTECODE`` never does: every measured start would then compile all of
    sessiongraph (0.1-0.4 CPU s of each start, seen here), which an installed loopmath
    never pays."""
    import compileall
    import tomllib

    folders = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for folder in sorted(set(folders.values())):
        compileall.compile_dir(REPO / folder, quiet=1, workers=1)


def child_env(**extra: str) -> dict:
    """This checkout's code first, whatever is installed."""
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return env


# -- the orjson floor --------------------------------------------------------------------------


def orjson_main(argv: list[str]) -> int:
    """``run.py _orjson DIR``: parse every line of every log file; print bytes and seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    total = lines = 0
    loads = orjson.loads
    for path in corpus_files(Path(argv[0])):
        with open(path, "rb") as fh:
            if path.suffix == ".json":
                data = fh.read()
                _try(loads, data)
                total += len(data)
                lines += 1
                continue
            for raw in fh:
                total += len(raw)
                if raw.strip():
                    _try(loads, raw)
                    lines += 1
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"bytes": total, "lines": lines, "seconds": seconds, "cpu_s": cpu}))
    return 0


def _try(loads, data: bytes) -> None:
    try:
        loads(data)
    except orjson.JSONDecodeError:
        pass  # a broken sample (repeat_samples copies them too): parsed as far as it goes


def corpus_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        out += [Path(dirpath) / n for n in sorted(filenames) if n.endswith((".jsonl", ".json"))]
    return out


# -- helpers over the corpus -------------------------------------------------------------------


def largest_claude_transcript(root: Path) -> Path:
    """The largest main transcript (``<project>/<sessionId>.jsonl``, not a subagent file)."""
    best, size = None, -1
    for f in (root / ".claude" / "projects").glob("*/*.jsonl"):
        if not f.name.startswith("agent-") and f.stat().st_size > size:
            best, size = f, f.stat().st_size
    if best is None:
        raise SystemExit(f"no Claude transcript under {root}/.claude/projects")
    return best


def workspaces(root: Path) -> list[str]:
    """loopmath's workspace label of every cwd in the corpus: the cwd's last folder name
    (loopmath/ingest/base.py workspace_name, without its ``Workspace/<name>`` special case)."""
    found: set[str] = set()
    for f in corpus_files(root):
        if f.suffix != ".jsonl":
            continue
        with open(f, "rb") as fh:
            for raw in fh.read(1 << 16).split(b"\n")[:20]:
                try:
                    rec = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(rec, dict):
                    continue
                payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
                cwd = rec.get("cwd") or payload.get("cwd")
                if isinstance(cwd, str) and cwd.strip("/"):
                    found.add(cwd.rstrip("/").rsplit("/", 1)[-1])
                    break
    return sorted(found)


def sessiongraph(*args: str) -> list[str]:
    return [sys.executable, "-m", "sessiongraph", *args]


def loopmath_cmd() -> list[str] | None:
    if importlib.util.find_spec("loopmath") is None:
        return None
    exe = Path(sys.executable).parent / "loopmath"
    return [str(exe)] if exe.exists() else [shutil.which("loopmath") or "loopmath"]


def _loopmath_counts(stderr: str) -> str:
    """The counts from loopmath graph's summary lines (nodes, edges, artifacts, files read)."""
    graph = re.search(r"(\d+) nodes, (\d+) edges, (\d+) artifacts from (\d+) records", stderr)
    files = re.search(r"read (\d+) session files", stderr)
    if not graph:
        return "no summary on stderr"
    n, e, a, _ = graph.groups()
    return f"{files.group(1) if files else '?'} files read, {n} nodes, {e} edges, {a} artifacts"


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- the steps ---------------------------------------------------------------------------------


class Bench:
    def __init__(self, corpus: Path, work: Path, skip: set[str], big_mb: float, seed: int, label: str = "generated"):
        self.corpus, self.work, self.skip, self.big_mb, self.seed = corpus, work, skip, big_mb, seed
        self.label = label
        self.work.mkdir(parents=True, exist_ok=True)
        self.files = corpus_files(corpus)
        self.bytes = sum(f.stat().st_size for f in self.files)
        self.mb = self.bytes / 1e6
        self.rows: list[tuple] = []  # (step, seconds, cpu s, MB/s, peak RSS MiB, MB read) for the table
        self.r: dict = dict.fromkeys(KEYS)
        self.r.update(corpus_mb=round(self.mb, 1), files=len(self.files))
        self.rss: list[float] = []
        self.ingest_summary: dict = {}
        self.notes: list[str] = []  # what each tool built, under the table
        self.full_store: Path | None = None  # the --privacy full store (privacy step), for the exports

    def row(self, step: str, m: dict, mb: float | None = None) -> None:
        rate = mb / m["seconds"] if mb else None
        self.rows.append((step, m["seconds"], m["cpu_s"], rate, m["peak_rss_mb"], m["rchar"] / 1e6))

    def ingest(self, name: str, db: Path, *extra: str, corpus: Path | None = None) -> dict:
        m = measure(
            name, sessiongraph("ingest", str(corpus or self.corpus), "--db", str(db), "--json", *extra), self.work
        )
        m["summary"] = json.loads(m["stdout"])
        return m

    def run(self) -> dict:
        if "orjson" not in self.skip:
            self.orjson()
        if "ingest1w" not in self.skip:
            self.cold_one_worker()
        if "privacy" not in self.skip:
            self.privacy_full()
        store = self.cold_all()
        if "loopmath" not in self.skip:
            self.loopmath(store)
        if "warm" not in self.skip:
            self.warm(store)
        if "append" not in self.skip:
            self.append(store)
        if "big" not in self.skip and self.big_mb > 0:
            self.big()
        self.r["peak_rss_mb"] = round(max(self.rss), 1) if self.rss else None
        o, w1 = self.r["orjson_mb_s"], self.r["ingest_mb_s_1w"]
        self.r["ratio_vs_orjson"] = round(w1 / o, 3) if o and w1 else None
        if self.r["loopmath_s"] and w1:  # loopmath runs in one process: against one worker
            self.r["ratio_vs_loopmath_1w"] = round(self.r["loopmath_s"] / (self.mb / w1), 2)
        # The same ratios in CPU seconds, which other jobs on a shared machine disturb far less.
        oc, ic, lc = self.r["orjson_cpu_s"], self.r["ingest_cpu_s_1w"], self.r["loopmath_cpu_s"]
        self.r["ratio_vs_orjson_cpu"] = round(oc / ic, 3) if oc and ic else None
        self.r["ratio_vs_loopmath_1w_cpu"] = round(lc / ic, 2) if lc and ic else None
        fc, fr, mr = (
            self.r["ingest_cpu_s_1w_full"],
            self.r["ingest_peak_rss_mb_1w_full"],
            self.r["ingest_peak_rss_mb_1w"],
        )
        self.r["ratio_full_vs_metadata_cpu"] = round(fc / ic, 2) if fc and ic else None
        self.r["ratio_full_vs_metadata_rss"] = round(fr / mr, 2) if fr and mr else None
        return self.r

    def orjson(self) -> None:
        say("orjson: parsing every line ...")
        m = measure("orjson", [sys.executable, __file__, "_orjson", str(self.corpus)], self.work)
        inner = json.loads(m["stdout"])
        m["seconds"], m["cpu_s"] = inner["seconds"], inner["cpu_s"]  # the parse loop alone, without start-up
        self.r["orjson_mb_s"] = round(inner["bytes"] / 1e6 / inner["seconds"], 1)
        self.r["orjson_cpu_s"] = round(inner["cpu_s"], 3)
        self.row("orjson.loads every line", m, self.mb)

    def cold_one_worker(self) -> None:
        say("ingest --workers 1 (cold) ...")
        m = self.ingest("ingest1w", self.work / "store-1w.duckdb", "--workers", "1")
        self.r["ingest_mb_s_1w"] = round(self.mb / m["seconds"], 1)
        self.r["ingest_cpu_s_1w"] = round(m["cpu_s"], 3)
        self.r["ingest_peak_rss_mb_1w"] = round(m["peak_rss_mb"], 1)
        self.rss.append(m["peak_rss_mb"])
        self.row("ingest --workers 1 (cold)", m, self.mb)

    def privacy_full(self) -> None:
        """The one-worker cold ingest again under ``--privacy full``: its cost against
        ``metadata_only`` (ingest1w), and the store the exports are measured on."""
        say("ingest --workers 1 --privacy full (cold) ...")
        self.full_store = self.work / "store-full.duckdb"
        m = self.ingest("ingest1w-full", self.full_store, "--workers", "1", "--privacy", "full")
        self.r["ingest_cpu_s_1w_full"] = round(m["cpu_s"], 3)
        self.r["ingest_peak_rss_mb_1w_full"] = round(m["peak_rss_mb"], 1)
        self.row("ingest --workers 1 --privacy full (cold)", m, self.mb)

    def cold_all(self) -> Path:
        cores = os.cpu_count() or 1
        say(f"ingest --workers {cores} (cold) ...")
        store = self.work / "store.duckdb"
        m = self.ingest("ingest", store, "--workers", str(cores))
        self.ingest_summary = m["summary"]
        self.cold_all_s, self.cold_all_cpu = m["seconds"], m["cpu_s"]
        self.r["ingest_mb_s_all"] = round(self.mb / m["seconds"], 1)
        self.rss.append(m["peak_rss_mb"])
        self.row(f"ingest --workers {cores} (cold)", m, self.mb)
        return store

    def loopmath(self, store: Path) -> None:
        cmd = loopmath_cmd()
        if cmd is None:
            say("loopmath is not installed (pip install '.[bench]'): skipping the loopmath comparison")
            return
        say("sessiongraph export ocp ...")
        m = measure(
            "export",
            sessiongraph("export", "ocp", "--out", str(self.work / "ocp"), "--db", str(store), "--json"),
            self.work,
        )
        self.rss.append(m["peak_rss_mb"])
        self.row("export ocp", m)
        ours = self.cold_all_s + m["seconds"]
        names = workspaces(self.corpus)
        say(f"loopmath graph over {len(names)} workspaces (cold, --no-cache) ...")
        home = self.work / "loopmath-home"
        args = [
            "graph",
            "--all",
            "--no-cache",
            "--format",
            "ocp",
            "--quiet",
            "--logs",
            str(self.corpus),
            "--out",
            str(self.work / "loopmath.ocp.json"),
        ]
        for name in names:
            args += ["--workspace", name]
        lm = measure(
            "loopmath",
            cmd + args,
            self.work,
            env=child_env(LOOPMATH_HOME=str(home), LOOPMATH_CACHE_DIR=str(home / "cache")),
        )
        self.notes.append("loopmath: " + _loopmath_counts((self.work / "loopmath.err").read_text()))
        s = self.ingest_summary
        self.notes.append(
            f"sessiongraph: {s['files_read']} files read, {sum(s['store_sessions_by_harness'].values())} "
            f"sessions, {sum(sum(t.values()) for t in s['edges_by_kind'].values())} edges, {s['runs']} runs "
            f"({json.loads(m['stdout']).get('documents')} OCP documents)"
        )
        self.r["loopmath_s"] = round(lm["seconds"], 2)
        self.r["loopmath_cpu_s"] = round(lm["cpu_s"], 2)
        self.r["ratio_vs_loopmath"] = round(lm["seconds"] / ours, 2)
        self.row("loopmath graph --all --no-cache", lm, self.mb)
        cpu = self.cold_all_cpu + m["cpu_s"]
        self.rows.append(("ingest (all cores) + export ocp", ours, cpu, self.mb / ours, None, None))

    def warm(self, store: Path) -> None:
        say("warm re-ingest ...")
        m = self.ingest("warm", store)
        if m["summary"]["files_read"]:
            say(f"warning: the warm ingest read {m['summary']['files_read']} files")
        self.r["warm_s"] = round(m["seconds"], 2)
        self.rss.append(m["peak_rss_mb"])
        self.row("re-ingest, nothing changed", m)

    def append(self, store: Path) -> None:
        target = largest_claude_transcript(self.corpus)
        st = target.stat()
        say(f"append 1 MB to {target.relative_to(self.corpus)} ({st.st_size / 1e6:.1f} MB) and re-ingest ...")
        try:
            gen.append_records(target, APPEND_BYTES, seed=self.seed)
            m = self.ingest("append", store)
        finally:  # leave the corpus as it was, so a kept corpus can be measured again
            with open(target, "r+b") as fh:
                fh.truncate(st.st_size)
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.r["append_s"] = round(m["seconds"], 2)
        self.r["append_bytes_read"] = m["rchar"]
        self.rss.append(m["peak_rss_mb"])
        self.row(f"append 1 MB to a {st.st_size / 1e6:.0f} MB file, re-ingest", m)

    def big(self) -> None:
        folder = self.work / "bigfile"
        say(f"writing one {self.big_mb:g} MB transcript ...")
        plan = gen.one_file(folder, self.big_mb, seed=self.seed)
        try:
            say("ingest of the big file (cold) ...")
            m = self.ingest("big", self.work / "store-big.duckdb", corpus=folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            (self.work / "store-big.duckdb").unlink(missing_ok=True)
        self.r["big_file_mb"] = plan["mb"]
        self.r["big_file_peak_rss_mb"] = round(m["peak_rss_mb"], 1)
        self.row(f"one {plan['mb']:.0f} MB transcript (cold)", m, plan["mb"])


# -- output ------------------------------------------------------------------------------------


def table(b: Bench, source: str, plan: dict | None, expected_edges: dict | None = None) -> str:
    cores = os.cpu_count() or 1
    head = (
        f"sessiongraph benchmark, {datetime.now(UTC):%Y-%m-%d}, {b.label} corpus: {b.mb:.1f} MB, "
        f"{len(b.files)} files ({source}), {cores} cores, load average {os.getloadavg()[0]:.1f}"
    )
    lines = [head, "", f"{'step':<44} {'seconds':>8} {'cpu s':>7} {'MB/s':>8} {'peak RSS MiB':>13} {'MB read':>9}"]
    for step, secs, cpu, rate, rss, read in b.rows:
        lines.append(
            f"{step:<44} {secs:>8.2f} {_num(cpu, 2):>7} {_num(rate, 1):>8} {_num(rss, 0):>13} {_num(read, 1):>9}"
        )
    r = b.r
    lines += [
        "",
        f"ratio ingest --workers 1 / orjson: {_num(r['ratio_vs_orjson'], 3)}; "
        f"loopmath / (ingest + export): {_num(r['ratio_vs_loopmath'], 2)}; "
        f"loopmath / ingest --workers 1: {_num(r['ratio_vs_loopmath_1w'], 2)}",
        f"in CPU seconds: orjson / ingest --workers 1: {_num(r['ratio_vs_orjson_cpu'], 3)}; "
        f"loopmath / ingest --workers 1: {_num(r['ratio_vs_loopmath_1w_cpu'], 2)}",
    ]
    if r["ingest_cpu_s_1w_full"] is not None:
        lines.append(
            f"--privacy full / metadata_only, one worker: CPU {_num(r['ratio_full_vs_metadata_cpu'], 2)}, "
            f"peak RSS {_num(r['ratio_full_vs_metadata_rss'], 2)}"
        )
    got = b.ingest_summary.get("edges_by_kind")
    if plan is not None:
        ok = "yes" if got == plan["edges_by_kind"] else f"NO: planted {plan['edges_by_kind']}, found {got}"
        lines.append(f"edges found as planted: {ok}")
    if expected_edges is not None:
        ok = "yes" if got == expected_edges else f"NO: expected {expected_edges}, found {got}"
        lines.append(f"edges = copies x those of one copy: {ok}")
    lines.append("diagnostics: " + (json.dumps(b.ingest_summary.get("diagnostics_by_code")) or "{}"))
    lines += b.notes
    return "\n".join(lines)


def _num(v: float | None, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


# Issue 30's targets, as (what, key, target, met): the summary table's last columns.
TARGETS = {
    "orjson": ">= 0.30 at the largest size",
    "loopmath": ">= 2.5 at the largest size",
    "privacy_cpu": "<= 1.5",
    "privacy_rss": "<= 1.5",
    "export": "largest / smallest <= 1.3",
    "watch": "median <= 1 s",
}


def summary(results: dict) -> tuple[list[dict], str]:
    """The figures issue 30 names, from every part of the run: rows for JSON and a table."""
    real = results.get("real") or {}
    sizes = list(real)
    rows: list[dict] = []

    def add(figure: str, values: dict, target: str | None = None, met: bool | None = None) -> None:
        rows.append({"figure": figure, "values": values, "target": target, "met": met})

    def per_size(key: str) -> dict:
        return {size: real[size].get(key) for size in sizes}

    last = sizes[-1] if sizes else None
    for figure, key, target, ok in (
        ("orjson CPU / ingest CPU, one worker", "ratio_vs_orjson_cpu", "orjson", lambda v: v >= 0.30),
        ("loopmath CPU / ingest CPU, one worker", "ratio_vs_loopmath_1w_cpu", "loopmath", lambda v: v >= 2.5),
        ("--privacy full / metadata_only, CPU", "ratio_full_vs_metadata_cpu", "privacy_cpu", lambda v: v <= 1.5),
        ("--privacy full / metadata_only, peak RSS", "ratio_full_vs_metadata_rss", "privacy_rss", lambda v: v <= 1.5),
    ):
        values = per_size(key)
        if not any(v is not None for v in values.values()):
            continue
        judged = values[last] if target in ("orjson", "loopmath") else None
        if target in ("privacy_cpu", "privacy_rss"):
            met = all(ok(v) for v in values.values() if v is not None)
        else:
            met = ok(judged) if judged is not None else None
        add(figure, values, TARGETS[target], met)
    for name, by in (results.get("exports") or {}).items():
        values = {size: by[size]["peak_rss_mb"] for size in sizes if size in by}
        ratio = by.get("ratio")
        label = "growth" if ratio is not None else None
        add(
            f"export {name}, peak RSS MB",
            values | ({label: ratio} if label else {}),
            TARGETS["export"],
            None if ratio is None or name == "ocp" else ratio <= 1.3,
        )
    watch = results.get("watch")
    if watch:
        add(
            f"watch: append -> queryable, median of {watch['appends']} ({watch['files']} files), s",
            {"median": watch["median_s"], "p90": watch["p90_s"]},
            TARGETS["watch"],
            watch["median_s"] <= watch_latency.TARGET_MEDIAN_S,
        )
    width = 58
    cols = sorted(
        {k for r in rows for k in r["values"]}, key=lambda k: (k not in sizes, sizes.index(k) if k in sizes else 0, k)
    )
    head = f"{'figure':<{width}}" + "".join(f"{_col(c, sizes):>10}" for c in cols) + f"  {'target':<28} met"
    lines = [f"issue 30 figures, {datetime.now(UTC):%Y-%m-%d}, one run", "", head]
    for r in rows:
        cells = "".join(f"{_fig(r['values'].get(c)):>10}" for c in cols)
        met = "-" if r["met"] is None else ("yes" if r["met"] else "NO")
        lines.append(f"{r['figure']:<{width}}{cells}  {r['target'] or '':<28} {met}")
    return rows, "\n".join(lines)


def _col(name: str, sizes: list[str]) -> str:
    return f"{name} MB" if name in sizes else name


def _fig(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"


def _sizes(text: str) -> list[float]:
    try:
        sizes = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"bad --real-mb {text!r}: sizes in MB separated by commas, e.g. {REAL_MB}") from None
    return [x for x in sizes if x > 0]


def _label(mb: float) -> str:
    return f"{mb:g}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_probe"]:
        return probe_main(argv[1:])
    if argv[:1] == ["_orjson"]:
        return orjson_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=float, default=1000, help="generated corpus size in MB (10^6 bytes); 0: skip it")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--corpus", type=Path, help="use this generated corpus; an empty or missing folder is generated into and kept"
    )
    ap.add_argument("--big-file-mb", type=float, default=700, help="size of the one-transcript measurement (0: skip)")
    ap.add_argument(
        "--real-mb",
        default=REAL_MB,
        help=f"replicated real corpus sizes in MB, comma-separated (default {REAL_MB}; 0: none)",
    )
    ap.add_argument(
        "--real-dir", type=Path, help="the real corpora are DIR/real-<MB> (each made into it when empty, then kept)"
    )
    ap.add_argument("--real-src", type=Path, action="append", help="trees to replicate (default: replicate.py's)")
    ap.add_argument("--small-mb", type=float, default=100, help="many-small-files corpus size in MB (0: skip it)")
    ap.add_argument("--small-corpus", type=Path, help="use this many-small-files corpus (made into it when empty)")
    ap.add_argument("--watch-files", type=int, default=100_000, help="files under the watched root (0: skip watch)")
    ap.add_argument("--watch-appends", type=int, default=20, help="appends timed under watch (the median is reported)")
    ap.add_argument("--watch-dir", type=Path, help="keep the watch corpus and its store here (made once, reused)")
    ap.add_argument(
        "--watch-src", type=Path, action="append", help="claude-code and codex trees the watch corpus is cut from"
    )
    ap.add_argument("--skip", default="", help=f"comma-separated steps to skip: {','.join(SKIPPABLE)}")
    ap.add_argument("--keep", action="store_true", help="keep the generated corpora and the stores")
    ap.add_argument("--workdir", type=Path, help="where the temp folder goes (default: the system temp dir)")
    ap.add_argument("--json", action="store_true", help="print one JSON object (the tables go to stderr)")
    args = ap.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(SKIPPABLE):
        ap.error(f"unknown step(s) to skip: {', '.join(sorted(skip - set(SKIPPABLE)))}")
    real_sizes = _sizes(args.real_mb)
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sessiongraph-bench-", dir=args.workdir))
    compile_checkout()
    results: dict = {"generated": None, "real": {}, "small_files": None, "exports": None, "watch": None}
    texts = []
    full_stores: dict[str, Path] = {}  # real size -> its --privacy full store (the privacy step's)
    corpora: dict[str, Path] = {}
    try:
        if args.size > 0:
            corpus, plan = args.corpus, None
            if corpus is None or not _filled(corpus):
                corpus = corpus or work / "corpus"
                say(f"generating {args.size:g} MB into {corpus} ...")
                plan = gen.generate(corpus, args.size, seed=args.seed)
                say(f"  {plan['files']} files, {plan['mb']} MB in {plan['seconds']} s ({plan['mb_s']} MB/s)")
            bench = Bench(corpus, work / "generated", skip | {"privacy"}, args.big_file_mb, args.seed)
            results["generated"] = bench.run()
            texts.append(table(bench, f"generated, seed {args.seed}" if plan else f"given: {corpus}", plan))
        for mb in real_sizes:
            label = _label(mb)
            corpus = (args.real_dir / f"real-{label}") if args.real_dir else work / f"real-{label}"
            if not _filled(corpus):
                say(f"replicating real logs to {mb:g} MB into {corpus} ...")
                sources = args.real_src or [s for s in replicate.DEFAULT_SOURCES if s.is_dir()]
                if not sources:
                    raise SystemExit("no real logs to replicate (../shared is absent): use --real-src or --real-mb 0")
                done = replicate.replicate(sources, corpus, size_mb=mb)
                say(f"  {done['copies']} copies, {done['files']} files, {done['bytes'] / 1e6:.1f} MB")
            corpora[label] = corpus
            bench = Bench(corpus, work / f"real-{label}-work", skip | {"append", "big"}, 0, args.seed, label="real")
            results["real"][label] = bench.run()
            if bench.full_store is not None:
                full_stores[label] = bench.full_store
            texts.append(
                table(bench, f"replicate.py: {_copies(corpus)} copies", None, _edges_times_copies(corpus, bench))
            )
        if args.small_mb > 0:
            corpus = args.small_corpus or work / "small"
            if not _filled(corpus):
                say(f"repeating sample_logs to {args.small_mb:g} MB into {corpus} ...")
                files = repeat_samples.log_files(repeat_samples.SAMPLES)
                per_copy = sum(len(repeat_samples.Rewriter(0, set()).content(f.name, f.read_bytes())) for f in files)
                repeat_samples.repeat(repeat_samples.SAMPLES, corpus, max(1, -(-int(args.small_mb * 1e6) // per_copy)))
            small_skip = skip | {"ingest1w", "privacy", "loopmath", "append", "big"}
            bench = Bench(corpus, work / "small-work", small_skip, 0, args.seed, label="small_files")
            results["small_files"] = bench.run()
            texts.append(table(bench, f"repeat_samples.py --size-mb {args.small_mb:g}", None))
        if "exports" not in skip and real_sizes:
            results["exports"] = exports(corpora, full_stores, real_sizes, work)
        if "watch" not in skip and args.watch_files > 0:
            say(f"watch latency: {args.watch_appends} appends with {args.watch_files} files watched ...")
            sources = tuple(args.watch_src) if args.watch_src else watch_latency.SOURCES
            results["watch"] = watch_latency.latency(
                args.watch_dir or work / "watch", args.watch_files, args.watch_appends, sources
            )
        rows, text = summary(results)
        results["summary"] = rows
        texts.append(text)
        text = "\n\n".join(texts)
        if args.json:  # the tables still go to stderr, for the record
            say(text)
            print(json.dumps(results))
        else:
            print(text)
    finally:
        if args.keep:
            say(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def exports(corpora: dict[str, Path], full_stores: dict[str, Path], sizes: list[float], work: Path) -> dict:
    """``export_memory.peaks`` on each real size's ``--privacy full`` store (the privacy step's;
    made here, unmeasured, when that step was skipped), and the growth from the first size to the last."""
    by_size = {}
    for mb in sizes:
        label = _label(mb)
        db = full_stores.get(label)
        if db is None:
            db = work / f"real-{label}-work" / "store-full.duckdb"
            if not db.exists():
                say(f"ingest --privacy full of the {label} MB corpus for the exports (not measured) ...")
                db.parent.mkdir(parents=True, exist_ok=True)
                export_memory.cli(["ingest", str(corpora[label]), "--db", str(db), "--privacy", "full"], None)
        say(f"exports of the {label} MB store ...")
        by_size[label] = export_memory.peaks(db, work / "exports" / label, say=say)
    labels = [_label(mb) for mb in sizes]
    return (
        export_memory.growth(by_size, labels[0], labels[-1])
        if len(labels) > 1
        else export_memory.growth(by_size, "", "")
    )


def _filled(folder: Path) -> bool:
    return folder.exists() and any(folder.iterdir())


def _copies(corpus: Path) -> int:
    return sum(1 for d in corpus.iterdir() if d.name.startswith("copy-"))


def _edges_times_copies(corpus: Path, bench: Bench) -> dict | None:
    """The edges of one copy times the copies: what the whole replicated corpus must give when
    no copy links to another."""
    first = corpus / "copy-0000"
    if not first.is_dir():
        return None
    m = bench.ingest("one-copy", bench.work / "store-one-copy.duckdb", corpus=first)
    k = _copies(corpus)
    return {kind: {t: n * k for t, n in tiers.items()} for kind, tiers in m["summary"]["edges_by_kind"].items()}


if __name__ == "__main__":
    sys.exit(main())
