"""discover -> parse -> store: the ingest pipeline behind ``sessiongraph ingest``."""

from __future__ import annotations

import os
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime

from ingest import privacy as profiles, registry
from ingest.discover import Found, default_roots, discover
from ingest.frames import Frames
from ingest.jsonl import Diagnostics
from ingest.shell_facts import shell_facts
from inference import infer
from sessiongraph import engines
from sessiongraph.store import FileResult, Store

# Files per store transaction: large enough to amortise DuckDB's commit, small enough that a
# kill mid-ingest loses little work (every committed batch stays). The variable exists for the
# crash tests, which need many batches from few files.
BATCH_FILES = int(os.environ.get("SESSIONGRAPH_BATCH_FILES", "256"))
# Skip reasons that are problems with the file (a diagnostics row) rather than files that
# are simply not session logs.
DIAGNOSED_SKIPS = frozenset({"unknown_format", "empty_file", "unreadable_file"})


@dataclass
class IngestSummary:
    db: str
    roots: list[str]
    privacy: str = profiles.DEFAULT  # the profile the files read now were stored under
    files_found: int = 0
    files_read: int = 0
    files_unchanged: int = 0
    files_skipped: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    sessions_by_harness: dict[str, int] = field(default_factory=dict)
    diagnostics_by_code: dict[str, int] = field(default_factory=dict)
    store_sessions_by_harness: dict[str, int] = field(default_factory=dict)
    inferred: bool = False  # whether the passes ran (they do when any file changed)
    runs: int = 0
    edges_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> tier -> n
    inference_counts: dict[str, int] = field(default_factory=dict)  # pass.code -> events
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


Progress = Callable[[int, int], None]  # (files done, files to read)


def parse_file(found: Found) -> Frames:
    """Run one file through its adapter, then read its shell calls' commands into launches and
    file events (here, in the worker, while the text is at hand); an adapter bug becomes a
    diagnostic, not a crash."""
    if found.harness is None:
        diags = Diagnostics(found.path)
        diags.add(found.skip_reason or "unknown_format", None, "")
        return Frames.from_rows(diagnostics=diags.rows)
    try:
        return shell_facts(registry.get(found.harness).parse(found.path))
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop a batch of thousands
        where = traceback.extract_tb(exc.__traceback__)[-1]
        diags = Diagnostics(found.path, found.harness)
        diags.add(
            "internal_error",
            None,
            f"{type(exc).__name__} at {os.path.basename(where.filename)}:{where.lineno}",
        )
        return Frames.from_rows(diagnostics=diags.rows)


Job = tuple[Found, int, int]  # a file to read, with the size and mtime it had when listed


def _parse_job(job: Job) -> tuple[Job, Frames]:
    return job, parse_file(job[0])


def _in_window(frames: Frames, since: datetime | None, until: datetime | None) -> bool:
    s = frames.sessions
    if s.height == 0 or (since is None and until is None):
        return True
    starts = [t for t in s["started_at"].to_list() if t is not None]
    ends = [t for t in s["ended_at"].to_list() if t is not None]
    if since is not None and ends and max(ends) < since:
        return False
    if until is not None and starts and min(starts) > until:
        return False
    return True


def ingest(
    paths: Sequence[str] = (),
    *,
    db: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    privacy: str = profiles.DEFAULT,
) -> IngestSummary:
    """Ingest every log under ``paths`` (default: the harness roots) into the store at ``db``.

    Files unchanged since the last ingest (same size and mtime) are not read again; a changed
    file's rows are replaced. ``since``/``until`` keep only files with a session in the window.
    ``privacy`` is the store's profile (``ingest.privacy``): ``metadata_only`` keeps no log text,
    ``full`` keeps shell commands and descriptions with secrets masked. A file stored under
    another profile is read again.
    """
    t0 = time.perf_counter()
    engines.check(engine)  # an unknown engine or a missing Ray fails before the store is touched
    profiles.check(privacy)
    roots = [str(p) for p in paths] if paths else [str(r) for r in default_roots()]
    found = list(discover(paths))  # raises for a named path that does not exist
    with Store(db) as store:
        summary = IngestSummary(db=str(store.path), roots=roots, privacy=privacy, files_found=len(found))
        known = store.fingerprints()
        skipped: Counter[str] = Counter()
        todo: list[Job] = []
        for f in found:
            if f.skip_reason in ("not_transcript", "not_a_log"):
                skipped[f.skip_reason] += 1
                continue
            try:
                st = os.stat(f.path)
                size, mtime = st.st_size, st.st_mtime_ns
            except OSError:
                size, mtime = -1, -1
            if since is not None and mtime >= 0 and mtime < since.timestamp() * 1e9:
                skipped["before_since"] += 1  # not modified since: it holds nothing newer
                continue
            if known.get(f.path) == (size, mtime, privacy):
                summary.files_unchanged += 1
                continue
            todo.append((f, size, mtime))

        # Rows stored under full and now replaced under metadata_only leave their text in free blocks.
        downgraded = privacy != "full" and any(known.get(f.path, ())[2:] == ("full",) for f, _, _ in todo)
        ingest_id = store.begin_ingest(roots)
        sessions: Counter[str] = Counter()
        diagnostics: Counter[str] = Counter()
        batch: list[FileResult] = []
        done = 0
        if progress:
            progress(0, len(todo))
        # engine: where files are parsed (sessiongraph/engines/); everything else runs here.
        parsed = engines.parse_all(engine, todo, workers=workers, address=ray_address)
        for (f, size, mtime), frames in parsed:
            done += 1
            if not _in_window(frames, since, until):
                skipped["outside_window"] += 1
            else:
                if f.skip_reason:
                    skipped[f.skip_reason] += 1
                else:
                    summary.files_read += 1
                sessions.update(frames.sessions["harness"].to_list())
                diagnostics.update(frames.diagnostics["code"].to_list())
                kept = profiles.apply(frames, privacy)  # the one way log text reaches the store
                batch.append(FileResult(f.path, f.harness, size, mtime, kept, f.skip_reason, privacy))
                if len(batch) >= BATCH_FILES:
                    store.write(batch, ingest_id)
                    batch = []
            if progress:
                progress(done, len(todo))
        store.write(batch, ingest_id)
        if store.needs_inference():  # any batch written now, or by an ingest killed before inferring
            store.write_inference(infer(store.load_frames()))
            summary.inferred = True
        summary.files_skipped = sum(skipped.values())
        summary.skipped_by_reason = dict(sorted(skipped.items()))
        summary.sessions_by_harness = dict(sorted(sessions.items()))
        summary.diagnostics_by_code = dict(sorted(diagnostics.items()))
        store.finish_ingest(
            ingest_id, read=summary.files_read, unchanged=summary.files_unchanged, skipped=summary.files_skipped
        )
        if downgraded:
            store.compact()
        summary.store_sessions_by_harness = store.counts(
            "SELECT harness, count(DISTINCT session_id) FROM sessions GROUP BY harness ORDER BY harness"
        )
        summary.runs = store.counts("SELECT 'runs', count(*) FROM runs")["runs"]
        for kind, tier, n in store.con.execute(
            "SELECT kind, tier, count(*) FROM all_edges GROUP BY ALL ORDER BY ALL"
        ).fetchall():
            summary.edges_by_kind.setdefault(kind, {})[tier] = n
        summary.inference_counts = store.counts(
            "SELECT pass || '.' || code, sum(count) FROM inference_diagnostics GROUP BY ALL ORDER BY 1"
        )
    summary.seconds = round(time.perf_counter() - t0, 3)
    return summary


def _parse_all(jobs: list[Job], workers: int | None):
    """Yield ``(job, frames)`` in listing order; in-process for one worker or one file."""
    n = workers or os.cpu_count() or 1
    if n <= 1 or len(jobs) < 2:
        for job in jobs:
            yield _parse_job(job)
        return
    with ProcessPoolExecutor(max_workers=min(n, len(jobs))) as pool:
        yield from pool.map(_parse_job, jobs, chunksize=4)
