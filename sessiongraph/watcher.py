"""``sessiongraph watch``: a store that keeps up with the log roots.

The roots are followed with ``watchfiles`` (inotify, FSEvents or ReadDirectoryChangesW); each
debounced set of changes goes through the one ingest path (``pipeline.ingest`` with
``changed=``), which lists and compares only the changed paths, so a change costs the same with
ten files under the roots as with a hundred thousand. A root that does not exist yet is waited
for by watching its nearest existing parent, not recursively; once it appears it is walked
whole and watched. Between ingests the store is idle (``Store.idle``): no connection and no
writer lock, so readers and other ingests get in.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import watchfiles

from sessiongraph import pipeline
from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest import discover, steps
from sessiongraph.ingest import privacy as profiles
from sessiongraph.store import Store

# watchfiles yields a set of changes once nothing changed for STEP_MS, or after DEBOUNCE_MS of
# changes at most: a write is ingested within a second even while a harness keeps writing.
STEP_MS = 50
DEBOUNCE_MS = 400
# How long to wait before trying again when another ingest (or a long read) holds the store.
RETRY_S = 1.0
BUSY = ("another sessiongraph is writing", "another process is using it")  # store.locks, Store._connect

Report = Callable[[dict], None]  # one event: {"event": "watching" | "ingest" | "busy" | "stopped", ...}


@dataclass
class WatchSummary:
    db: str
    roots: list[str]
    ingests: int = 0  # ingests run (the catch-up one included)
    files_read: int = 0
    files_removed: int = 0
    seconds: float = 0.0  # how long it watched
    waiting_for: list[str] = field(default_factory=list)  # roots that never appeared

    def to_dict(self) -> dict:
        return asdict(self)


def watch(
    paths: Sequence[str] = (),
    *,
    db: str | None = None,
    workers: int | None = None,
    privacy: str = profiles.DEFAULT,
    launchers: dict[str, str] | None = None,
    max_text_chars: int = steps.DEFAULT_MAX_TEXT_CHARS,
    prices: str | None = None,
    report: Report | None = None,
    stop: threading.Event | None = None,
) -> WatchSummary:
    """Ingest ``paths`` (default: the harness roots) as ``ingest --prune`` would, then each change
    under them as it happens, until ``stop`` is set or Ctrl-C or SIGTERM (KeyboardInterrupt: the
    ingest under way rolls back its store batch, the lock is released). Returns what it did."""
    t0 = time.monotonic()
    roots = [str(r) for r in discover.roots(paths)]
    stop = stop or threading.Event()
    emit = report or (lambda _event: None)
    options = dict(workers=workers, privacy=privacy, launchers=launchers, max_text_chars=max_text_chars, prices=prices)
    changes: queue.Queue = queue.Queue()
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C is how it stops, even when started where SIGINT is ignored (a shell's background
        # job): and SIGTERM (a service manager's stop) stops it the same way.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    with Store(db) as store:
        summary = WatchSummary(db=str(store.path), roots=roots)
        ignored = str(store.path)  # the store's own files (.wal, .lock) when it lies under a root
        followers: list[_Follower] = []
        try:
            layout = _layout(roots)
            followers = _follow(layout, changes)
            present = [r for r in roots if os.path.exists(r)]
            if present:
                _run(store, summary, emit, present, None, options)
            emit({"event": "watching", "roots": present, "waiting_for": layout.waiting})
            pending: set[str] = set()
            while not stop.is_set():
                try:
                    got = changes.get(timeout=0.2)
                except queue.Empty:
                    if not pending:
                        continue
                    got = set()
                if isinstance(got, BaseException):
                    raise got
                pending |= _relevant(got, roots, ignored)
                while True:  # whatever else is waiting joins this ingest
                    try:
                        more = changes.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(more, BaseException):
                        raise more
                    pending |= _relevant(more, roots, ignored)
                new_layout = _layout(roots)
                if new_layout != layout:  # a root appeared or went: follow it (new watchers first)
                    appeared = [r for r in new_layout.present if r not in layout.present]
                    went = [r for r in layout.present if r not in new_layout.present]
                    old, followers = followers, _follow(new_layout, changes)
                    _stop(old)
                    layout = new_layout
                    pending |= {*appeared, *went}
                    if appeared or went:
                        emit({"event": "watching", "roots": layout.present, "waiting_for": layout.waiting})
                if not pending:
                    continue
                present = [r for r in roots if os.path.exists(r)] or roots
                try:
                    _run(store, summary, emit, present, sorted(pending), options)
                except SessiongraphError as exc:
                    if not any(why in str(exc) for why in BUSY):
                        raise
                    emit({"event": "busy", "message": str(exc)})  # kept pending, tried again
                    time.sleep(RETRY_S)
                    continue
                pending = set()
        except KeyboardInterrupt:
            pass  # the transaction under way rolled back (store.connection.transaction)
        finally:
            _stop(followers)
            store.idle()
        summary.waiting_for = [r for r in roots if not os.path.exists(r)]
        summary.seconds = round(time.monotonic() - t0, 3)
    emit({"event": "stopped", **summary.to_dict()})
    return summary


def _run(
    store: Store, summary: WatchSummary, emit: Report, roots: list[str], changed: list[str] | None, options: dict
) -> None:
    """One ingest (all of ``roots`` when ``changed`` is None), then the store idle again."""
    try:
        # The store's totals (four whole-table reads) are no part of what a watch reports.
        done = pipeline.ingest(roots, store=store, prune=True, changed=changed, totals=False, **options)
    finally:
        store.idle()
    summary.ingests += 1
    summary.files_read += done.files_read
    summary.files_removed += done.files_removed
    emit(
        {
            "event": "ingest",
            "changed": len(changed) if changed is not None else None,
            "paths": changed[:20] if changed is not None else None,
            "files_read": done.files_read,
            "files_resumed": done.files_resumed,
            "files_removed": done.files_removed,
            "files_unchanged": done.files_unchanged,
            "partitions_inferred": done.partitions_inferred,
            "seconds": done.seconds,
        }
    )


def _relevant(changes: Iterable[tuple[watchfiles.Change, str]], roots: list[str], ignored: str) -> set[str]:
    """The changed paths an ingest must look at, in the spelling the store uses (discover.real):
    log files, folders (walked), and paths gone (they may have been a log or a folder of logs);
    not the store's own files, nor anything under a folder discovery skips."""
    out = set()
    for _change, raw in changes:
        path = str(discover.real(raw))
        if path.startswith(ignored) or raw.startswith(ignored):
            continue
        root = next((r for r in roots if path == r or path.startswith(r.rstrip("/") + "/")), None)
        if root is None:
            # Under a parent watched for a root that is not there yet: the layout check follows it.
            continue
        parts = Path(path[len(root) :]).parts
        if any(p in discover.SKIP_DIRS for p in parts[:-1]) or (parts and parts[-1] in discover.SKIP_DIRS):
            continue
        if path.endswith(discover.LOG_SUFFIXES) or os.path.isdir(path) or not os.path.lexists(path):
            out.add(path)
    return out


@dataclass(frozen=True)
class _Layout:
    present: list[str]  # roots that exist: watched recursively
    parents: list[str]  # the nearest existing parent of each root that does not: watched alone
    waiting: list[str]  # those roots


def _layout(roots: list[str]) -> _Layout:
    present, parents, waiting = [], [], []
    for root in roots:
        if os.path.exists(root):
            present.append(root)
            continue
        waiting.append(root)
        parent = Path(root).parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if str(parent) not in parents:
            parents.append(str(parent))
    return _Layout(present, parents, waiting)


class _Follower(threading.Thread):
    """One ``watchfiles.watch`` over some paths, putting each set of changes (or its error) on a queue."""

    def __init__(self, paths: list[str], recursive: bool, out: queue.Queue):
        super().__init__(name="sessiongraph-watch", daemon=True)
        self.paths, self.recursive, self.out = paths, recursive, out
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            for changes in watchfiles.watch(
                *self.paths,
                watch_filter=None,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=self.stop,
                recursive=self.recursive,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                self.out.put(changes)
        except FileNotFoundError:
            # The path went before the watch began: a layout change the main loop sees next time.
            self.out.put(set())
        except Exception as exc:  # noqa: BLE001 - raised again by the main loop
            self.out.put(exc)


def _follow(layout: _Layout, out: queue.Queue) -> list[_Follower]:
    followers = []
    if layout.present:
        followers.append(_Follower(layout.present, True, out))
    if layout.parents:
        followers.append(_Follower(layout.parents, False, out))
    for f in followers:
        f.start()
    return followers


def _stop(followers: list[_Follower]) -> None:
    for f in followers:
        f.stop.set()
    for f in followers:
        f.join()
