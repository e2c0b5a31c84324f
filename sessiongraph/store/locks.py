"""The store's own locks, beside DuckDB's: writers exclude each other for their whole run with
``<db>.lock``; a reader waiting for the store says so with ``<db>.readers``, so that the ingest
closes the store after its batch (``Store.release``)."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path

from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest import knobs

# How long to wait for a store another sessiongraph process holds (DuckDB allows one writer, and
# no reader while it writes) before giving up with a clear message.
LOCK_TIMEOUT_S = knobs.number("SESSIONGRAPH_LOCK_TIMEOUT", 30.0, float, least=0.0)


def take_writer_lock(db: Path):
    """An exclusive flock on ``<db>.lock``, waited for up to LOCK_TIMEOUT_S; the open file is the
    lock (the OS drops it when the process dies, so a killed ingest never leaves a stale lock)."""
    lock_path = db.with_name(db.name + ".lock")
    try:
        fh = open(lock_path, "a+")
    except OSError as exc:
        raise SessiongraphError(
            f"cannot open store {db}: cannot create {lock_path}: {exc.strerror}", path=str(db)
        ) from None
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    pause = 0.05
    while True:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fh
        except BlockingIOError:
            if time.monotonic() >= deadline:
                fh.close()
                raise SessiongraphError(
                    f"cannot open store {db}: another sessiongraph is writing it (waited {LOCK_TIMEOUT_S:g}s; "
                    "set SESSIONGRAPH_LOCK_TIMEOUT to wait longer)",
                    path=str(db),
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 1.0)


def writer_active(db: Path) -> bool:
    """Whether a sessiongraph writer holds ``<db>.lock`` (see :func:`take_writer_lock`) now."""
    try:
        with open(db.with_name(db.name + ".lock"), "rb") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            return False
    except OSError:
        return False  # no lock file: no sessiongraph writer ever opened this store


def _readers_path(db: Path) -> Path:
    return db.with_name(db.name + ".readers")


def signal_waiting(db: Path):
    """A shared flock on ``<db>.readers``, held (the open file) while a reader waits for the store:
    the ingest sees it and closes the store after its batch. None when the file cannot be opened
    (a read-only folder): the reader then waits for the ingest to end."""
    try:
        fh = open(_readers_path(db), "a+")
    except OSError:
        return None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # the writer is testing the lock this instant: the next poll tries again
        fh.close()
        return None
    return fh


def readers_waiting(db: Path) -> bool:
    """Whether a reader holds ``<db>.readers`` shared (see :func:`signal_waiting`)."""
    try:
        with open(_readers_path(db), "a+") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            return False
    except OSError:
        return True  # cannot tell: close, as before readers could signal
