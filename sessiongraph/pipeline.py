"""discover -> parse -> store: the ingest pipeline behind ``sessiongraph ingest``."""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import NamedTuple

from sessiongraph import engines
from sessiongraph.inference import partitions
from sessiongraph.ingest import privacy as profiles
from sessiongraph.ingest import registry, resume, steps
from sessiongraph.ingest.discover import NOT_TRANSCRIPTS, Found, classify, default_roots, listing, size_mtime
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import Diagnostics
from sessiongraph.ingest.resume import Checkpoint
from sessiongraph.ingest.shell import check_launchers
from sessiongraph.ingest.shell_facts import carry, shell_facts
from sessiongraph.store import FileResult, Store

# A store transaction holds up to BATCH_FILES files or BATCH_BYTES bytes of logs: many files, so
# that small files amortise a transaction's fixed cost (about 0.3 ms a file at 256 files a batch,
# most of the store's time on 25,000 small files), few bytes, so that the batch's rows stay small,
# a reader waits about as long as the batch takes to parse (a second or two) and a kill
# mid-ingest loses little work (every committed batch stays). The variables exist for the crash
# tests, which need many batches from few files.
BATCH_FILES = int(os.environ.get("SESSIONGRAPH_BATCH_FILES", "4096"))
BATCH_BYTES = int(os.environ.get("SESSIONGRAPH_BATCH_BYTES", str(256 << 20)))
# DuckDB lets no reader in while a writer has the file open. So that `query` and exports wait
# about a batch rather than the whole ingest, the ingest closes the store after a batch when a
# reader is waiting (Store.release) and it has held the store HOLD_S, and leaves it closed at
# least READER_GAP_S (readers poll every 0.25 s) while it goes on parsing; the batches written
# meanwhile just grow. It does not close when nobody waits: each close checkpoints.
HOLD_S = 1.0
# Files per run of the passes (whole partitions, inference/partitions.py): the passes' memory
# is about that many files' frames (or the largest partition, when larger).
GROUP_FILES = int(os.environ.get("SESSIONGRAPH_GROUP_FILES", "4000"))
READER_GAP_S = 0.3
# Skip reasons that are problems with the file (a diagnostics row) rather than files that
# are simply not session logs.
DIAGNOSED_SKIPS = frozenset({"unknown_format", "empty_file", "unreadable_file", "symlink_loop", "special_file"})


@dataclass
class IngestSummary:
    db: str
    roots: list[str]
    privacy: str = profiles.DEFAULT  # the profile the files read now were stored under
    files_found: int = 0
    files_read: int = 0
    files_unchanged: int = 0
    files_resumed: int = 0  # grown transcripts read from where the last ingest stopped
    bytes_skipped: int = 0  # bytes those resumed files did not read again
    files_skipped: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    sessions_by_harness: dict[str, int] = field(default_factory=dict)
    diagnostics_by_code: dict[str, int] = field(default_factory=dict)
    store_sessions_by_harness: dict[str, int] = field(default_factory=dict)
    files_removed: int = 0  # files gone from disk whose rows were dropped (``prune``)
    inferred: bool = False  # whether the passes ran (they do when any file changed)
    partitions_inferred: int = 0  # partitions the passes ran over (those changed files reach)
    files_inferred: int = 0  # the files in them
    runs: int = 0
    edges_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> tier -> n
    inference_counts: dict[str, int] = field(default_factory=dict)  # pass.code -> events
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


Progress = Callable[[int, int], None]  # (files done, files to read)


class Job(NamedTuple):
    """A file to read: what discovery found (a path, or a Found for a folder it could not walk),
    the size and mtime it had when listed, the privacy profile to keep it under, the
    checkpoint to resume it from (a grown transcript) and the launcher table
    (``ingest.shell``) its shell commands are read with."""

    item: str | Found
    size: int
    mtime: int
    privacy: str = profiles.DEFAULT
    checkpoint: Checkpoint | None = None
    max_text_chars: int = steps.DEFAULT_MAX_TEXT_CHARS
    launchers: tuple[tuple[str, str], ...] = ()  # wrapper CLIs beyond the built-in table
    # The ingest's --since/--until: a file none of whose sessions falls in it is not kept.
    since: datetime | None = None
    until: datetime | None = None


class Parsed(NamedTuple):
    found: Found
    frames: Frames  # as the privacy profile keeps them
    checkpoint: Checkpoint | None = None  # where the next ingest may resume this file


class FileParse(NamedTuple):
    """What the ingest loop needs of one parsed file besides its rows (which are in its batch's
    frames): small, so that it crosses from a worker cheaply."""

    job: Job | None  # the engine sets it on the driver side (a job never travels back)
    # The file as classified (a Found's fields: a tuple of strings unpickles far faster than a
    # slotted dataclass, and there is one per file).
    path: str
    harness: str | None
    skip_reason: str | None
    checkpoint: Checkpoint | None  # where the next ingest may resume this file
    harnesses: tuple[str, ...]  # the harness of each of its sessions
    codes: tuple[str, ...]  # the code of each of its diagnostics rows
    counts: tuple[int, ...]  # how many problems each of those rows stands for (repeats are folded)
    in_window: bool  # False: outside --since/--until, its rows are not in the batch


class Batch(NamedTuple):
    """What an engine yields for a run of consecutive jobs: one :class:`FileParse` per job, in
    order, and the rows of those in the window as frames built once (polars tables), in the same
    file order: the worker, not the driver, pays for building them."""

    files: list[FileParse]
    frames: Frames


def parse_path(
    item: str | Found,
    checkpoint: Checkpoint | None = None,
    privacy: str = profiles.DEFAULT,
    max_text_chars: int = steps.DEFAULT_MAX_TEXT_CHARS,
    launchers: tuple[tuple[str, str], ...] = (),
) -> Parsed:
    """The unit of work an engine runs: classify one listed file (reading its head), run it
    through its adapter (from ``checkpoint`` when the adapter reads grown files from where it
    stopped), read its shell commands into launches and file events while the text is at hand,
    and keep what ``privacy`` lets the store keep (step text only under ``full``, each step's cut
    to ``max_text_chars``). An adapter bug becomes a diagnostic."""
    with steps.text_policy(privacy == "full", max_text_chars):
        return _parse_path(item, checkpoint, privacy, launchers)


def _parse_path(
    item: str | Found, checkpoint: Checkpoint | None, privacy: str, launchers: tuple[tuple[str, str], ...]
) -> Parsed:
    found = item if isinstance(item, Found) else classify(item)
    diags = Diagnostics(found.path, found.harness)
    if found.harness is None:
        reason = found.skip_reason or "unknown_format"
        if reason in DIAGNOSED_SKIPS:
            diags.add(reason, None, "")
        return Parsed(found, Frames.from_rows(diagnostics=diags.rows))
    adapter = registry.get(found.harness)
    try:
        if not hasattr(adapter, "parse_from"):
            return Parsed(found, profiles.apply(shell_facts(adapter.parse(found.path), None, launchers), privacy))
        frames, saved = adapter.parse_from(found.path, checkpoint, lambda state: profiles.scrub_state(state, privacy))
        resumed = checkpoint is not None and saved is not None and saved.resumed_from > 0
        carried = resume.loads(checkpoint.carry) if resumed and checkpoint and checkpoint.carry else None
        frames = profiles.apply(shell_facts(frames, carried, launchers), privacy)
        if saved is not None and privacy != "full":
            # The state kept no commands: keep what they said for the next resume (masked rows,
            # the calls' kinds and lines are all it needs of them).
            saved = dataclasses.replace(saved, carry=resume.dumps(carry(frames, saved.line)))
        return Parsed(found, frames, saved)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop a batch of thousands
        where = traceback.extract_tb(exc.__traceback__)[-1]
        diags.add("internal_error", None, f"{type(exc).__name__} at {os.path.basename(where.filename)}:{where.lineno}")
        return Parsed(found, Frames.from_rows(diagnostics=diags.rows))


def parse_batch(jobs: Sequence[Job]) -> Batch:
    """The unit of work of every engine: each job through :func:`parse_path`, the files outside
    the window left out, and the rows of the others built into one set of frames."""
    files: list[FileParse] = []
    kept: list[Frames] = []
    for job in jobs:
        found, frames, checkpoint = parse_path(job.item, job.checkpoint, job.privacy, job.max_text_chars, job.launchers)
        in_window = _in_window(frames, job.since, job.until)
        harnesses = tuple(frames.values("sessions", "harness"))
        codes = tuple(frames.values("diagnostics", "code"))
        counts = tuple(n or 1 for n in frames.values("diagnostics", "count"))
        files.append(
            FileParse(
                None, found.path, found.harness, found.skip_reason, checkpoint, harnesses, codes, counts, in_window
            )
        )
        if in_window:
            kept.append(frames)
    built = Frames.concat(kept)
    built.tables()  # build every table now, here
    return Batch(files, built)


def _in_window(frames: Frames, since: datetime | None, until: datetime | None) -> bool:
    if frames.height("sessions") == 0 or (since is None and until is None):
        return True
    starts = [t for t in frames.values("sessions", "started_at") if t is not None]
    ends = [t for t in frames.values("sessions", "ended_at") if t is not None]
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
    launchers: dict[str, str] | None = None,
    prune: bool = False,
    max_text_chars: int = steps.DEFAULT_MAX_TEXT_CHARS,
) -> IngestSummary:
    """Ingest every log under ``paths`` (default: the harness roots) into the store at ``db``.

    Files unchanged since the last ingest (same size and mtime) are not opened; a grown
    transcript is read from its checkpoint (``ingest.resume``); a changed file's rows are replaced. ``since``/``until`` keep only files with a session in the window.
    ``privacy`` is the store's profile (``ingest.privacy``): ``metadata_only`` keeps no log text,
    ``full`` keeps shell commands and descriptions with secrets masked, and step text (``texts``)
    cut to ``max_text_chars`` per step. A file stored under another profile is read again. With ``prune``, files the store holds under ``paths`` that
    are no longer on disk are dropped from it (without, the store keeps the sessions of logs a
    harness has cleaned up).

    The passes then run only over the partitions (``inference.partitions``) that the files
    written or dropped now were in or are in now; every other inference row stays as it is.
    ``launchers`` (program -> harness) adds wrapper CLIs that run an agent CLI to the built-in
    table (``ingest.shell.BUILTIN_LAUNCHERS``); it applies to the files read in this ingest.
    """
    t0 = time.perf_counter()
    engines.check(engine)  # an unknown engine or a missing Ray fails before the store is touched
    profiles.check(privacy)
    table = check_launchers(launchers or {})
    roots = [str(p) for p in paths] if paths else [str(r) for r in default_roots()]
    listed = list(listing(paths))  # raises for a named path that does not exist
    with Store(db) as store:
        summary = IngestSummary(db=str(store.path), roots=roots, privacy=privacy, files_found=len(listed))
        items = [item for item, _s, _m in listed]
        names = [item.path if isinstance(item, Found) else item for item in items]
        sizes = [size for _i, size, _m in listed]
        mtimes = [mtime for _i, _s, mtime in listed]
        skipped: Counter[str] = Counter()
        # Files whose fingerprint differs from the stored one, found by DuckDB: no Python work
        # per unchanged file (the store's fingerprints of these files, for those it holds).
        known = store.changed(names, sizes, mtimes, privacy)
        not_log = [n.endswith(_NOT_TRANSCRIPT_TAILS) or n in NOT_TRANSCRIPTS for n in names]
        since_ns = since.timestamp() * 1e9 if since is not None else None
        old = [since_ns is not None and 0 <= m < since_ns for m in mtimes]  # not modified since: nothing newer
        skipped["not_transcript"] = sum(not_log)
        skipped["before_since"] = sum(o and not n for o, n in zip(old, not_log, strict=True))
        todo: list[Job] = []
        for i in known.pop(_CHANGED):
            if not (not_log[i] or old[i]):
                todo.append(Job(items[i], sizes[i], mtimes[i], privacy, None, max_text_chars, table, since, until))
        # An unchanged file is not opened, not even to classify it: the store knows it.
        summary.files_unchanged = len(names) - len(todo) - skipped["not_transcript"] - skipped["before_since"]
        skipped = +skipped  # drop zero counts
        gone = store.gone(names, paths or [str(r) for r in default_roots()], listed) if prune else []
        # A Claude subagent's sidecar (agent-<id>.meta.json) is read with its transcript: when it
        # changes, so may the transcript's rows.
        queued = {j.item for j in todo if isinstance(j.item, str)}
        for side in [p for p in (*queued, *gone) if p.endswith(SIDECAR)]:
            log = side[: -len(SIDECAR)] + ".jsonl"
            stored = None if log in queued or not os.path.exists(log) else store.fingerprint(log)
            if stored is not None:
                known[log] = stored
                todo.append(Job(log, *size_mtime(log), privacy, None, max_text_chars, table, since, until))
                queued.add(log)
                summary.files_unchanged -= 1
        # A file that grew (under the same profile) may resume from where the last ingest stopped.
        grown = store.checkpoints(
            [
                j.item
                for j in todo
                if isinstance(j.item, str)
                and j.item in known
                and j.size > known[j.item][0]
                and known[j.item][2] == privacy
            ]
        )
        todo = [j._replace(checkpoint=grown.get(j.item)) if isinstance(j.item, str) else j for j in todo]
        # Rows stored under full and now replaced under metadata_only leave their text in free blocks.
        downgraded = privacy != "full" and any(
            known.get(j.item.path if isinstance(j.item, Found) else j.item, ())[2:] == ("full",) for j in todo
        )
        ingest_id = store.begin_ingest(roots)
        sessions: Counter[str] = Counter()
        diagnostics: Counter[str] = Counter()
        batch: list[FileResult] = []
        batch_frames: list[Frames] = []
        batch_bytes = 0
        released_at: float | None = None  # when the store was last closed for readers
        done = 0
        if progress:
            progress(0, len(todo))
        # engine: where files are classified, parsed and built into frames (sessiongraph/engines/);
        # the rest runs here.
        for parsed in engines.parse_all(engine, todo, workers=workers, address=ray_address):
            batch_frames.append(parsed.frames)
            for job, path, harness, skip_reason, checkpoint, harnesses, codes, counts, in_window in parsed.files:
                done += 1
                if checkpoint is not None and checkpoint.resumed_from:
                    summary.files_resumed += 1
                    summary.bytes_skipped += checkpoint.resumed_from
                if not in_window:
                    skipped["outside_window"] += 1
                else:
                    if skip_reason:
                        skipped[skip_reason] += 1
                    else:
                        summary.files_read += 1
                    sessions.update(harnesses)
                    for code, n in zip(codes, counts, strict=True):
                        diagnostics[code] += n
                    # Files that are not logs are remembered too, so the next ingest need not open them.
                    batch.append(
                        FileResult(
                            path,
                            harness,
                            job.size,
                            job.mtime,
                            len(harnesses),
                            sum(counts),
                            skip_reason,
                            privacy,
                            replaces=path in known,
                            checkpoint=checkpoint,
                        )
                    )
                    batch_bytes += max(job.size, 0)
                if progress:
                    progress(done, len(todo))
            # A store batch is whole engine batches (their frames hold the rows of all their files).
            if (len(batch) >= BATCH_FILES or batch_bytes >= BATCH_BYTES) and (
                released_at is None or time.monotonic() - released_at >= READER_GAP_S
            ):
                store.write(batch, Frames.concat(batch_frames), ingest_id)
                batch, batch_frames, batch_bytes = [], [], 0
                released_at = time.monotonic() if store.release(held_for_s=HOLD_S, for_readers=True) else None
        store.write(batch, Frames.concat(batch_frames), ingest_id)
        store.remove(gone)
        summary.files_removed = len(gone)
        if store.needs_inference():  # files written or dropped now, or by an ingest killed before inferring
            plan = store.inference_plan(GROUP_FILES)

            def loaded():
                for files in plan.groups:
                    frames = store.load_frames(files)
                    store.release(held_for_s=HOLD_S, for_readers=True)  # readers may query between groups
                    yield files, frames

            # engine: where the passes run over each group of partitions (sessiongraph/engines/).
            # The next group loads (DuckDB, polars: mostly without the GIL) while the passes run.
            with _Ahead(loaded()) as groups:
                results = partitions.concat(engines.infer_all(engine, groups, workers=workers, address=ray_address))
            store.write_partitions(plan, results)
            summary.inferred = True
            summary.files_inferred = sum(g.height for g in plan.groups)
            summary.partitions_inferred = sum(g["partition_id"].n_unique() for g in plan.groups)
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


class _Ahead:
    """An iterator that produces the next item of ``items`` on a thread while the consumer works
    on the current one (one item ahead, so memory holds at most two). As a context manager it
    stops and joins the thread on the way out, also when the consumer failed: nothing is left
    using ``items``' resources (the store connection) after it."""

    _END = object()

    def __init__(self, items: Iterator):
        self._items = items
        self._ready: queue.Queue = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sessiongraph-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for item in self._items:
                if not self._put((item, None)):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            self._put((self._END, exc))
            return
        self._put((self._END, None))

    def _put(self, entry: tuple) -> bool:
        while not self._stop.is_set():
            try:
                self._ready.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> _Ahead:
        return self

    def __next__(self):
        item, exc = self._ready.get()
        if exc is not None:
            raise exc
        if item is self._END:
            raise StopIteration
        return item

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        close = getattr(self._items, "close", None)
        if close is not None:
            close()


SIDECAR = ".meta.json"
_NOT_TRANSCRIPT_TAILS = tuple("/" + n for n in NOT_TRANSCRIPTS)
_CHANGED = "\x00changed"  # key of Store.changed's list of changed positions
