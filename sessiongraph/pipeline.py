"""discover -> parse -> store: the ingest pipeline behind ``sessiongraph ingest``."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from datetime import datetime

from sessiongraph import costs, engines
from sessiongraph.inference import partitions
from sessiongraph.ingest import knobs, registry, steps
from sessiongraph.ingest import privacy as profiles
from sessiongraph.ingest.discover import LOG_SUFFIXES, Found, listing, not_transcript, pruned_under, size_mtime
from sessiongraph.ingest.discover import roots as real_roots
from sessiongraph.ingest.errors import SessiongraphError
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.shell import check_launchers
from sessiongraph.pricing import Prices
from sessiongraph.store import Store
from sessiongraph.work import BATCH_FILES, Job, WrittenFile, text_bytes

# A store transaction holds up to BATCH_FILES (``work.BATCH_FILES``) files or BATCH_BYTES bytes of
# logs: many files, so that small files amortise a transaction's fixed cost (about 0.3 ms a file at
# 256 files a batch, most of the store's time on 25,000 small files), few bytes, so that the batch's
# rows stay small, a reader waits about as long as the batch takes to parse (a second or two) and a
# kill mid-ingest loses little work (every committed batch stays). The variables exist for the
# crash tests, which need many batches from few files.
BATCH_BYTES = knobs.number("SESSIONGRAPH_BATCH_BYTES", 256 << 20, int, least=1)
# Under --privacy full the rows carry step text, held in polars, Arrow and DuckDB at once while a
# batch is written: a batch also ends once it holds this many bytes of text (a quarter of its logs'
# bytes, on real transcripts), so the ingest's memory stays near metadata_only's.
BATCH_TEXT_BYTES = knobs.number("SESSIONGRAPH_BATCH_TEXT_BYTES", 16 << 20, int, least=1)
# DuckDB lets no reader in while a writer has the file open. So that `query` and exports wait
# about a batch rather than the whole ingest, the ingest closes the store after a batch when a
# reader is waiting (Store.release) and it has held the store HOLD_S, and leaves it closed at
# least READER_GAP_S (readers poll every 0.25 s) while it goes on parsing; the batches written
# meanwhile just grow. It does not close when nobody waits: each close checkpoints.
HOLD_S = 1.0
# Files per run of the passes (whole partitions, inference/partitions.py): the passes' memory
# is about that many files' frames (or the largest partition, when larger).
GROUP_FILES = knobs.number("SESSIONGRAPH_GROUP_FILES", 4000, int, least=1)
READER_GAP_S = 0.3


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
    prices: dict = field(default_factory=dict)  # costs.Repriced: the price set, rows (re)priced
    git: dict = field(default_factory=dict)  # gitlog.GitSummary with --git; empty without
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


Progress = Callable[[int, int], None]  # (files done, files to read)


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
    prices: str | None = None,
    changed: Sequence[str] | None = None,
    store: Store | None = None,
    git: bool = False,
    totals: bool = True,
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
    Usage rows are priced once written (``sessiongraph.costs``), with the ``prices`` override file
    if given, else the one the store remembers; rows priced with another price set are re-priced.

    ``changed`` (``sessiongraph watch``): only these paths under ``paths`` changed, so only they
    are listed (a folder walked, a file taken as it is) and compared with the store, and a path gone
    from disk drops the stored files at or under it, as ``prune`` would; nothing else is walked.
    ``store``: an open writable store to use (and leave open) instead of opening ``db``.

    ``git``: then read the git repositories the store's sessions worked in (``sessiongraph.gitlog``:
    heuristic commits rows and ``in_branch``); without it no repository is read and pygit2 is not
    imported, and the rows an earlier ``git`` ingest made stay as they are.

    ``totals``: fill the summary's store totals (sessions by harness, runs, edges, inference
    counts), four reads of whole tables; ``watch``, which reports none of them, goes without.
    """
    t0 = time.perf_counter()
    engines.check(engine)  # an unknown engine or a missing Ray fails before the store is touched
    profiles.check(privacy)
    if prices is not None:
        Prices.load(prices)  # a bad price file fails before the store is touched
    # What every job of this ingest shares; _plan sets each one's file.
    job = Job("", 0, 0, privacy, None, max_text_chars, check_launchers(launchers or {}), since, until)
    roots = [str(p) for p in real_roots(paths)]  # the spelling of every stored path (discover.real)
    missing: list[str] = []
    if changed is None:
        listed = list(listing(paths))  # raises for a named path that does not exist
    else:
        listed, missing = _listed_changes(changed)
    with nullcontext(store) if store is not None else Store(db) as store:
        summary = IngestSummary(db=str(store.path), roots=roots, privacy=privacy, files_found=len(listed))
        gone = store.stored_under(missing) if changed is not None else None
        plan = _plan(store, listed, job, roots if prune else None, gone)
        ingest_id = store.begin_ingest(roots)
        _parse_and_store(store, plan, ingest_id, summary, progress, engine, workers, ray_address)
        _prune(store, plan.gone, summary)
        summary.prices = costs.reprice(store, prices).to_dict()
        _infer(store, summary, engine, workers, ray_address)
        if git:
            from sessiongraph import gitlog  # pygit2 only when asked

            summary.git = gitlog.read_git(store, ingest_id).to_dict()
        _summarize(store, plan, ingest_id, summary, totals)
    summary.seconds = round(time.perf_counter() - t0, 3)
    return summary


@dataclass
class _Plan:
    """What an ingest reads and drops, decided before it reads anything (:func:`_plan`)."""

    todo: list[Job]  # the files to read, in listing order (then the logs of changed side files)
    stored: dict[str, tuple[int, int, str | None]]  # path -> (size, mtime, profile) of the stored ones
    gone: list[str]  # stored files no longer on disk (with prune)
    skipped: Counter[str]  # files not read, by reason (the loop adds the ones it skips)
    downgraded: bool  # rows stored under full are replaced under another profile: compact after
    sessions: Counter[str] = field(default_factory=Counter)  # sessions read, by harness
    diagnostics: Counter[str] = field(default_factory=Counter)  # diagnostics read, by code


def _listed_changes(changed: Sequence[str]) -> tuple[list, list[str]]:
    """The listing of the ``changed`` paths alone: a folder's files (walked, as a root is), a log
    file's own entry; and the paths gone from disk."""
    listed: dict[str, tuple] = {}  # a file changed in a changed folder is listed once
    missing: list[str] = []
    for path in dict.fromkeys(changed):
        try:
            if os.path.isdir(path) or (os.path.isfile(path) and path.endswith(LOG_SUFFIXES)):
                for entry in listing([path]):
                    listed.setdefault(entry[0].path if isinstance(entry[0], Found) else entry[0], entry)
            elif not os.path.lexists(path):
                missing.append(path)
        except SessiongraphError:  # gone between the look and the listing
            missing.append(path)
    return list(listed.values()), missing


def _plan(store: Store, listed: list, job: Job, prune_roots: list[str] | None, gone: list[str] | None = None) -> _Plan:
    """The listed files to read: those whose fingerprint differs from the stored one, found by
    DuckDB (no Python work per unchanged file), less those not transcripts or older than
    ``--since``; the logs of changed side files; each grown file's checkpoint. The files to drop
    are ``gone`` when given (the watcher knows them), else with ``prune_roots`` the stored files
    under them that were not listed."""
    privacy = job.privacy
    items = [item for item, _s, _m in listed]
    names = [item.path if isinstance(item, Found) else item for item in items]
    sizes = [size for _i, size, _m in listed]
    mtimes = [mtime for _i, _s, mtime in listed]
    changed = store.changed(names, sizes, mtimes, privacy)
    stored = dict(changed.stored)
    not_log = [not_transcript(n) for n in names]
    since_ns = job.since.timestamp() * 1e9 if job.since is not None else None
    old = [since_ns is not None and 0 <= m < since_ns for m in mtimes]  # not modified since: nothing newer
    skipped: Counter[str] = Counter()
    skipped["not_transcript"] = sum(not_log)
    skipped["before_since"] = sum(o and not n for o, n in zip(old, not_log, strict=True))
    todo = [
        job._replace(item=items[i], size=sizes[i], mtime=mtimes[i])
        for i in changed.positions
        if not (not_log[i] or old[i])
    ]
    if gone is None:
        gone = store.gone(names, pruned_under(prune_roots, names), listed) if prune_roots is not None else []
    # A side file is read with its log (registry.log_of): when it changes or goes, so may the log's rows.
    queued = {j.item for j in todo if isinstance(j.item, str)}
    for side in [*queued, *gone]:
        log = registry.log_of(side)
        if log is None:
            continue
        fingerprint = None if log in queued or not os.path.exists(log) else store.fingerprint(log)
        if fingerprint is not None:
            stored[log] = fingerprint
            size, mtime = size_mtime(log)
            todo.append(job._replace(item=log, size=size, mtime=mtime))
            queued.add(log)
    # A file that grew (under the same profile) may resume from where the last ingest stopped.
    grown = store.checkpoints(
        [
            j.item
            for j in todo
            if isinstance(j.item, str)
            and j.item in stored
            and j.size > stored[j.item][0]
            and stored[j.item][2] == privacy
        ]
    )
    todo = [j._replace(checkpoint=grown.get(j.item)) if isinstance(j.item, str) else j for j in todo]
    # Rows stored under full and now replaced under metadata_only leave their text in free blocks.
    downgraded = privacy != "full" and any(
        stored.get(j.item.path if isinstance(j.item, Found) else j.item, ())[2:] == ("full",) for j in todo
    )
    return _Plan(todo, stored, gone, skipped, downgraded)


def _parse_and_store(
    store: Store,
    plan: _Plan,
    ingest_id: int,
    summary: IngestSummary,
    progress: Progress | None,
    engine: str,
    workers: int | None,
    address: str | None,
) -> None:
    """Every planned file through the engine (where files are classified, parsed and built into
    frames, sessiongraph/engines/), written to the store in batches of whole engine batches;
    the counts go to ``summary`` and ``plan``."""
    todo, skipped = plan.todo, plan.skipped
    batch: list[WrittenFile] = []
    batch_frames: list[Frames] = []
    batch_bytes = batch_text = 0
    released_at: float | None = None  # when the store was last closed for readers
    done = 0
    if progress:
        progress(0, len(todo))
    for parsed in engines.parse_all(engine, todo, workers=workers, address=address):
        batch_frames.append(parsed.frames)
        batch_text += text_bytes(parsed.frames)
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
                plan.sessions.update(harnesses)
                for code, n in zip(codes, counts, strict=True):
                    plan.diagnostics[code] += n
                # Files that are not logs are remembered too, so the next ingest need not open them.
                batch.append(
                    WrittenFile(
                        path,
                        harness,
                        job.size,
                        job.mtime,
                        len(harnesses),
                        sum(counts),
                        skip_reason,
                        job.privacy,
                        replaces=path in plan.stored,
                        checkpoint=checkpoint,
                    )
                )
                batch_bytes += max(job.size, 0)
            if progress:
                progress(done, len(todo))
        # A store batch is whole engine batches (their frames hold the rows of all their files).
        if (len(batch) >= BATCH_FILES or batch_bytes >= BATCH_BYTES or batch_text >= BATCH_TEXT_BYTES) and (
            released_at is None or time.monotonic() - released_at >= READER_GAP_S
        ):
            store.write(batch, Frames.concat(batch_frames), ingest_id)
            batch, batch_frames, batch_bytes, batch_text = [], [], 0, 0
            released_at = time.monotonic() if store.release(held_for_s=HOLD_S, for_readers=True) else None
    store.write(batch, Frames.concat(batch_frames), ingest_id)


def _prune(store: Store, gone: list[str], summary: IngestSummary) -> None:
    """Drop the rows of the files gone from disk (``--prune``; none without)."""
    store.remove(gone)
    summary.files_removed = len(gone)


def _infer(store: Store, summary: IngestSummary, engine: str, workers: int | None, address: str | None) -> None:
    """Run the passes over the partitions that files written or dropped (now, or by an ingest
    killed before inferring) were in or are in now, group after group, by the engine."""
    if not store.needs_inference():
        return
    plan = store.inference_plan(GROUP_FILES)

    def loaded():
        for files in plan.groups:
            frames = store.load_frames(files)
            store.release(held_for_s=HOLD_S, for_readers=True)  # readers may query between groups
            yield files, frames

    # The next group loads (DuckDB, polars: mostly without the GIL) while the passes run.
    with _Ahead(loaded()) as groups:
        results = partitions.concat(engines.infer_all(engine, groups, workers=workers, address=address))
    store.write_partitions(plan, results)
    summary.inferred = True
    summary.files_inferred = sum(g.height for g in plan.groups)
    summary.partitions_inferred = sum(g["partition_id"].n_unique() for g in plan.groups)


def _summarize(store: Store, plan: _Plan, ingest_id: int, summary: IngestSummary, totals: bool = True) -> None:
    """Close the ingest's row, compact a downgraded store, and fill ``summary`` with this
    ingest's counts and (with ``totals``) the store's totals."""
    skipped = +plan.skipped  # drop zero counts
    # An unchanged file is not opened, not even to classify it: the store knows it.
    summary.files_unchanged = (
        summary.files_found - len(plan.todo) - plan.skipped["not_transcript"] - plan.skipped["before_since"]
    )
    summary.files_skipped = sum(skipped.values())
    summary.skipped_by_reason = dict(sorted(skipped.items()))
    summary.sessions_by_harness = dict(sorted(plan.sessions.items()))
    summary.diagnostics_by_code = dict(sorted(plan.diagnostics.items()))
    store.finish_ingest(
        ingest_id, read=summary.files_read, unchanged=summary.files_unchanged, skipped=summary.files_skipped
    )
    if plan.downgraded:
        store.compact()
    if not totals:
        return
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
