"""Helpers on a DuckDB connection: one transaction, frames registered for one statement's
while, and the first line of a DuckDB error."""

from __future__ import annotations

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
