"""Helpers on a DuckDB connection: one transaction, frames registered for one statement's
while, the first line of a DuckDB error, and whether an error was a failed read or write."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress

import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """BEGIN, then COMMIT when the block ends, or ROLLBACK (and the error raised again) when it
    fails, also on KeyboardInterrupt: readers see all of the block's writes or none."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        # A COMMIT that failed (the WAL could not be written: disk full) has rolled back already,
        # and ROLLBACK would then fail with "no transaction is active", hiding the real error.
        with suppress(duckdb.TransactionException):
            con.execute("ROLLBACK")
        raise


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, tables: Mapping[str, object]) -> Iterator[None]:
    """Arrow tables (or frames) readable by name in SQL for the block, unregistered when it ends,
    however it ends (a registered table holds its memory as long as it stays registered)."""
    names: list[str] = []
    try:
        for name, table in tables.items():
            con.register(name, table)
            names.append(name)
        yield
    except BaseException:
        for name in names:
            # In a transaction the error aborted DuckDB refuses to unregister; its ROLLBACK drops
            # the names registered in it. The block's error is the one to raise.
            with suppress(duckdb.Error):
                con.unregister(name)
        raise
    for name in names:
        con.unregister(name)


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# The OS errors that mean the disk, not the data, is at fault; DuckDB reports them inside its own
# exceptions ("Could not write file ...: No space left on device") with the OS's words.
_DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS)


def io_failure(exc: BaseException) -> str | None:
    """The OS's reason, lower-cased (``no space left on device``), when ``exc`` is a failed read or
    write of a file (disk full, quota, I/O error, read-only file system), else None."""
    if isinstance(exc, OSError):
        return os.strerror(exc.errno).lower() if exc.errno in _DISK_ERRNOS else None
    if isinstance(exc, duckdb.Error):
        text = str(exc).lower()
        for number in _DISK_ERRNOS:
            if (why := os.strerror(number).lower()) in text:
                return why
    return None
