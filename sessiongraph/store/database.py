"""The store's class: :class:`Store`, a sessiongraph DuckDB file (``sessiongraph.store``)."""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple, cast

import duckdb
import platformdirs
import polars as pl

from sessiongraph.errors import SessiongraphError
from sessiongraph.inference import partitions
from sessiongraph.inference.edges import Inferred, conform
from sessiongraph.ingest import knobs
from sessiongraph.ingest.commits import GIT_EVIDENCE
from sessiongraph.ingest.frames import NOT_INFERRED, SCHEMAS, Frames
from sessiongraph.ingest.resume import Checkpoint
from sessiongraph.store.batches import groups
from sessiongraph.store.connection import first_line, io_failure, registered, transaction
from sessiongraph.store.locks import (
    LOCK_TIMEOUT_S,
    readers_waiting,
    signal_waiting,
    take_writer_lock,
    writer_active,
)
from sessiongraph.store.schema import FILE_TABLES, INFERENCE_TABLES, SCHEMA_VERSION, sql, view_sql
from sessiongraph.version import __version__
from sessiongraph.work import WrittenFile

DB_ENV = "SESSIONGRAPH_DB"
PER_RUN_SESSIONS = 2_000  # sessions of the runs Store.per_run reads at once (whole runs)
# The commits rows `ingest --git` made (sessiongraph.gitlog), not any log: a log read again keeps them.
GIT_ROWS = "evidence IN (" + ", ".join(f"'{e}'" for e in GIT_EVIDENCE) + ")"
# Rows per row group a writer appends (DuckDB's default: 122,880). A checkpoint rewrites each row
# group that appends reached since the last one, a partly filled one whole; a --privacy full
# ingest's texts (about 1.5 KB a row) filled a default one with 190 MB, rewritten at every
# checkpoint: commits cost a fifth of the ingest, and the rewrite doubled its peak memory.
ROW_GROUP_ROWS = knobs.number("SESSIONGRAPH_ROW_GROUP_ROWS", 16384, int, least=2048, multiple=2048)
# Up to this many values, a filter on them is a literal list (Store._among): DuckDB applies it
# inside each table's scan, so a `watch` batch of one file deletes and loads its rows in about
# half the time of a semi-join against a registered table of the values (which reads every row
# of every column the statement needs before joining). Beyond it, the semi-join.
LITERAL_VALUES = 64


def default_db_path() -> Path:
    """``$SESSIONGRAPH_DB``, else ``sessiongraph.duckdb`` in the user data dir."""
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    return Path(platformdirs.user_data_dir("sessiongraph", appauthor=False)) / "sessiongraph.duckdb"


def _busy(exc: duckdb.IOException, path: Path) -> bool:
    """Whether opening failed only because another process is writing the store: DuckDB's file
    lock, or a header read short while a sessiongraph writer's close rewrites it (seen under
    `watch`, whose writer closes between ingests). A short read with no writer is a damaged file."""
    message = str(exc).lower()
    return "lock" in message or ("could not read enough bytes" in message and writer_active(path))


class Changed(NamedTuple):
    """The listed files that differ from what the store holds (``Store.changed``)."""

    positions: list[int]  # their positions in the listing, in order
    stored: dict[str, tuple[int, int, str | None]]  # path -> (size, mtime, profile) as stored, of those it holds


@dataclass(frozen=True, slots=True)
class InferencePlan:
    """What one inference redoes (``Store.inference_plan``)."""

    dirty: pl.Series  # files written or removed since the last inference
    old_partitions: pl.Series  # partitions whose inference rows are replaced
    groups: list[pl.DataFrame]  # (source_path, partition_id) of whole new partitions, one per pass run
    everything: bool = False  # every inference row is replaced (a store loaded from a dataset)


class Store:
    """A sessiongraph DuckDB file. Open read-only for queries, read-write for ingest."""

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False):
        self.path = Path(path).expanduser() if path else default_db_path()
        self.read_only = read_only
        if read_only and not self.path.exists():
            raise SessiongraphError(
                f"no store at {self.path}; run `sessiongraph ingest` first or pass --db",
                path=str(self.path),
            )
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        # Never fetch extensions from the network: a store must open offline. A reader may not touch
        # files either (COPY TO, ATTACH, read_csv...): `query` runs whatever SQL it is given.
        self._config: dict[str, bool | str] = {"autoinstall_known_extensions": False}
        if not read_only:
            # DuckDB checkpoints when the WAL passes this (default 16 MB) and rewrites every row
            # group the transactions since touched: tables smaller than a row group are rewritten
            # whole each time. 64 MB: a quarter as many rewrites (on 25,000 small files the
            # ingest's COMMITs took 0.7 CPU s less), for up to 64 MB of WAL kept in memory.
            self._config["checkpoint_threshold"] = "64MB"
        else:
            self._config["enable_external_access"] = False
        self._con: duckdb.DuckDBPyConnection | None = None
        self._opened_at = 0.0
        self._cap_mb: int | None = None  # DuckDB's memory_limit while capped (Store.capped)
        self._cap_before: int | None = None  # ... and the limit before, in bytes
        self._idle = False  # a writer between its ingests: neither the connection nor the lock held
        # Writers exclude each other for their whole run with a lock file; DuckDB's own lock is
        # held only while a transaction is being written (see release), so readers get in between.
        self._writer_lock = None if read_only else take_writer_lock(self.path)
        try:
            if not read_only:
                if not self.path.exists():
                    self._create()
                self._migrate()
            else:
                self._check_version()
        except BaseException as exc:
            self.close()
            self._raise_if_disk_failed(exc)
            raise

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection, opened on first use (again after :meth:`release` or :meth:`idle`)."""
        if self._idle:
            self._resume()
        elif self._con is None:
            self._con = self._connect(self._config)
            self._opened_at = time.monotonic()
        assert self._con is not None
        return self._con

    def release(self, held_for_s: float = 0.0, *, for_readers: bool = False) -> bool:
        """Close the DuckDB connection if it has been open ``held_for_s`` or longer (with
        ``for_readers``: and a reader is waiting for the store), so a reader waiting on DuckDB's
        file lock can get in; the next use reopens it. Returns whether it closed.

        Closing checkpoints (DuckDB rewrites the row groups a transaction touched since the last
        one): a writer that closed after every batch spent more on that than on its inserts, so
        an ingest closes only when someone waits."""
        if self._con is None or time.monotonic() - self._opened_at < held_for_s:
            return False
        if for_readers and not readers_waiting(self.path):
            return False
        self._con.close()
        self._con = None
        return True

    def idle(self) -> None:
        """A writer that waits for work (``sessiongraph watch``) closes the connection and drops its
        writer lock: readers open the store and another ingest may run. The next use of
        :attr:`con` takes the lock again (waiting as a new writer would) and checks the version."""
        if self.read_only or self._idle:
            return
        self.release()
        if self._writer_lock is not None:
            self._writer_lock.close()
            self._writer_lock = None
        self._idle = True

    def _resume(self) -> None:
        self._writer_lock = take_writer_lock(self.path)
        self._idle = False
        try:
            self._con = self._connect(self._config)
            self._opened_at = time.monotonic()
            if (version := self._schema_version()) != SCHEMA_VERSION:
                raise SessiongraphError(
                    f"store {self.path} has schema version {version} now, this sessiongraph writes {SCHEMA_VERSION}",
                    path=str(self.path),
                )
        except BaseException:
            self.close()
            self._idle = True
            raise

    def _connect(self, config: dict) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        pause = 0.05
        waiting = None  # a reader's shared lock on <db>.readers while it waits (see locks.readers_waiting)
        try:
            while True:
                try:
                    return self._open(config)
                except duckdb.IOException as exc:
                    busy = _busy(exc, self.path)
                    if busy and self.read_only and waiting is None:
                        waiting = signal_waiting(self.path)  # the ingest closes the store after its batch
                    if busy and time.monotonic() < deadline:
                        time.sleep(pause)  # another sessiongraph is writing: wait for its batch to end
                        pause = min(pause * 2, 0.25)  # short polls: an ingest leaves gaps between batches
                        continue
                    why = (
                        f"another process is using it (waited {LOCK_TIMEOUT_S:g}s; "
                        "set SESSIONGRAPH_LOCK_TIMEOUT to wait longer)"
                        if busy
                        else first_line(exc)
                    )
                    raise SessiongraphError(f"cannot open store {self.path}: {why}", path=str(self.path)) from None
                except duckdb.Error as exc:
                    raise SessiongraphError(
                        f"{self.path} is not a sessiongraph store: {first_line(exc)}", path=str(self.path)
                    ) from None
        finally:
            if waiting is not None:
                waiting.close()  # closing the file drops the shared lock

    def _open(self, config: dict) -> duckdb.DuckDBPyConnection:
        if self.read_only:
            return duckdb.connect(str(self.path), read_only=True, config=config)
        # A writer attaches the file to get a row group size of its own (ROW_GROUP_ROWS), with the
        # spill folder DuckDB would give the file opened directly.
        con = duckdb.connect(config={**config, "temp_directory": f"{self.path}.tmp"})
        try:
            con.execute(f"ATTACH {_literal(str(self.path))} AS store (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
            con.execute("USE store")
        except BaseException:
            con.close()
            raise
        return con

    def __enter__(self) -> Store:
        return self

    def __exit__(self, _type: object, exc: BaseException | None, _tb: object) -> None:
        """Close; a writer whose block or close (it checkpoints) failed to write the disk raises
        one :class:`SessiongraphError` naming the store instead of DuckDB's error."""
        try:
            self.close()
        except (duckdb.Error, OSError) as closing:
            self._raise_if_disk_failed(exc or closing)
            raise
        if exc is not None:
            self._raise_if_disk_failed(exc)

    def _raise_if_disk_failed(self, exc: BaseException) -> None:
        # Each write is one transaction: a failed one left the store as it was before it.
        if self.read_only or (why := io_failure(exc)) is None:
            return
        named = str(exc.filename or "") if isinstance(exc, OSError) else str(exc)
        if str(self.path) not in named:
            return  # another file's failure (an export's output): the CLI shows its own message
        raise SessiongraphError(
            f"cannot write store {self.path}: {why}; it holds what was written before this "
            "failure, nothing of the failed write (free space and run again)",
            path=str(self.path),
        ) from None

    def close(self) -> None:
        try:
            self.release()
        finally:
            if self._writer_lock is not None:
                self._writer_lock.close()  # closing the file drops the flock
                self._writer_lock = None

    # -- schema ------------------------------------------------------------------------------

    def _create(self) -> None:
        # A new store is made beside its path and renamed into place once its schema is committed:
        # a process killed while creating it leaves no file that readers would take for a store.
        tmp = self.path.with_name(f"{self.path.name}.creating")  # under the writer lock: ours alone
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        final, self.path = self.path, tmp
        try:
            self._migrate()
            self.release()
        finally:
            self.path = final
        os.replace(tmp, final)

    def _migrate(self) -> None:
        # A store of another schema version is refused before anything is created in it.
        version = self._schema_version()
        if version is not None and version != SCHEMA_VERSION:
            raise SessiongraphError(
                f"store {self.path} has schema version {version}, this sessiongraph writes "
                f"{SCHEMA_VERSION}; ingest into a new --db file",
                path=str(self.path),
            )
        # One transaction: a process killed while creating a store leaves no half-made schema.
        with transaction(self.con):
            self.con.execute(sql("schema.sql"))
            for view in view_sql():
                self.con.execute(view)
            if version is None:
                self.con.execute("INSERT INTO sessiongraph_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])

    def _schema_version(self) -> str | None:
        try:
            rows = self.con.execute("SELECT value FROM sessiongraph_meta WHERE key = 'schema_version'").fetchall()
        except duckdb.CatalogException:
            return None
        return rows[0][0] if rows else None

    def _check_version(self) -> None:
        version = self._schema_version()
        if version is None:
            raise SessiongraphError(f"{self.path} is not a sessiongraph store", path=str(self.path))
        if version != SCHEMA_VERSION:
            raise SessiongraphError(
                f"store {self.path} has schema version {version}, this sessiongraph reads "
                f"{SCHEMA_VERSION}; ingest again into a new --db file",
                path=str(self.path),
            )

    # -- ingest ------------------------------------------------------------------------------

    def fingerprints(self) -> dict[str, tuple[int, int, str | None]]:
        """source path -> (size, mtime, privacy profile) as last ingested."""
        rows = self.con.execute("SELECT source_path, size_bytes, mtime_ns, privacy FROM ingested_files").fetchall()
        return {p: (s, m, priv) for p, s, m, priv in rows}

    def changed(self, paths: list[str], sizes: list[int], mtimes: list[int], privacy: str) -> Changed:
        """Which listed files differ from what the store holds (new, other size or mtime, or
        stored under another privacy profile), compared by DuckDB."""
        listed = pl.DataFrame(
            {"i": range(len(paths)), "source_path": paths, "size": sizes, "mtime": mtimes},
            schema={"i": pl.Int64, "source_path": pl.String, "size": pl.Int64, "mtime": pl.Int64},
        )
        # A few listed files (a watch batch): only their stored rows are read (Store._among).
        few = len(paths) <= LITERAL_VALUES
        chosen: AbstractContextManager[tuple[str, list]] = (
            self._among("source_path", listed["source_path"], "listed_paths") if few else nullcontext(("true", []))
        )
        with registered(self.con, {"listed_files": listed.to_arrow()}), chosen as (among, params):
            rows = self.con.execute(
                "SELECT l.i, l.source_path, f.size_bytes, f.mtime_ns, f.privacy FROM listed_files l"
                f" LEFT JOIN (SELECT * FROM ingested_files WHERE {among}) f USING (source_path)"
                " WHERE f.source_path IS NULL OR f.size_bytes != l.size OR f.mtime_ns != l.mtime"
                " OR f.privacy IS DISTINCT FROM ? ORDER BY l.i",
                [*params, privacy],
            ).fetchall()
        return Changed([r[0] for r in rows], {p: (s, m, priv) for _i, p, s, m, priv in rows if s is not None})

    def fingerprint(self, path: str) -> tuple[int, int, str | None] | None:
        """(size, mtime, privacy profile) of one stored file, or None."""
        rows = self.con.execute(
            "SELECT size_bytes, mtime_ns, privacy FROM ingested_files WHERE source_path = ?", [path]
        ).fetchall()
        return rows[0] if rows else None

    def gone(self, listed: list[str], roots: Sequence[str], problems: list) -> list[str]:
        """Stored files under ``roots`` that are not in ``listed`` (none under a folder discovery
        could not walk: unreadable is not gone)."""
        from sessiongraph.ingest.discover import Found

        blind = [item.path.rstrip("/") + "/" for item, _s, _m in problems if isinstance(item, Found)]
        listed_paths = pl.DataFrame({"source_path": listed}, schema={"source_path": pl.String}).to_arrow()
        with registered(self.con, {"listed_paths": listed_paths}):
            stored = self.con.execute(
                "SELECT source_path FROM ingested_files"
                " WHERE source_path NOT IN (SELECT source_path FROM listed_paths) ORDER BY source_path"
            ).fetchall()
        tops = [str(r).rstrip("/") for r in roots]
        return [
            p
            for (p,) in stored
            if any(p == r or p.startswith(r + "/") for r in tops) and not any(p.startswith(b) for b in blind)
        ]

    def stored_under(self, paths: list[str]) -> list[str]:
        """The stored files that are one of ``paths`` or lie under one of them (a folder)."""
        if not paths:
            return []
        tops = pl.DataFrame({"top": [p.rstrip("/") for p in paths]}, schema={"top": pl.String})
        with registered(self.con, {"gone_tops": tops.to_arrow()}):
            rows = self.con.execute(
                "SELECT source_path FROM ingested_files WHERE source_path IN (SELECT top FROM gone_tops)"
                " OR EXISTS (SELECT 1 FROM gone_tops WHERE starts_with(source_path, top || '/'))"
                " ORDER BY source_path"
            ).fetchall()
        return [p for (p,) in rows]

    def checkpoints(self, paths: list[str]) -> dict[str, Checkpoint]:
        """The stored checkpoints of these files (those that have one)."""
        if not paths:
            return {}
        with registered(self.con, {"wanted_paths": pl.DataFrame({"source_path": paths}).to_arrow()}):
            rows = self.con.execute(
                "SELECT source_path, byte_offset, line, head_sha, seam_sha, state, carry FROM checkpoints"
                " WHERE source_path IN (SELECT source_path FROM wanted_paths)"
            ).fetchall()
        return {p: Checkpoint(o, n, h, s, bytes(b), bytes(c) if c else b"") for p, o, n, h, s, b, c in rows}

    def begin_ingest(self, roots: list[str]) -> int:
        ingest_id = int(self.con.execute("SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests").fetchall()[0][0])
        self.con.execute(
            "INSERT INTO ingests (ingest_id, started_at, version, roots) VALUES (?, ?, ?, ?)",
            [ingest_id, datetime.now(UTC), __version__, roots],
        )
        return ingest_id

    def finish_ingest(self, ingest_id: int, *, read: int, unchanged: int, skipped: int) -> None:
        self.con.execute(
            "UPDATE ingests SET finished_at = ?, files_read = ?, files_unchanged = ?, files_skipped = ?"
            " WHERE ingest_id = ?",
            [datetime.now(UTC), read, unchanged, skipped, ingest_id],
        )

    def write(self, results: list[WrittenFile], frames: Frames, ingest_id: int) -> None:
        """Replace every row of these files with ``frames`` (the rows of all of them), all in one
        transaction: a reader sees all or none."""
        if not results:
            return
        # Deleting scans every table: only files the store may already hold need it.
        paths = pl.DataFrame(
            {"source_path": [r.path for r in results if r.replaces]}, schema={"source_path": pl.String}
        )
        now = datetime.now(UTC)
        files = pl.DataFrame(
            {
                "source_path": [r.path for r in results],
                "harness": [r.harness for r in results],
                "size_bytes": [r.size_bytes for r in results],
                "mtime_ns": [r.mtime_ns for r in results],
                "status": ["skipped" if r.skip_reason else "parsed" for r in results],
                "skip_reason": [r.skip_reason for r in results],
                "n_sessions": [r.n_sessions for r in results],
                "n_diagnostics": [r.n_diagnostics for r in results],
                "privacy": [r.privacy for r in results],
                "ingest_id": [ingest_id] * len(results),
                "ingested_at": [now] * len(results),
            },
            schema_overrides={"harness": pl.String, "skip_reason": pl.String, "privacy": pl.String},
        )
        saved = [(r.path, r.checkpoint) for r in results if r.checkpoint is not None]
        checkpoints = pl.DataFrame(
            {
                "source_path": [p for p, _ in saved],
                "byte_offset": [c.offset for _, c in saved],
                "line": [c.line for _, c in saved],
                "head_sha": [c.head_sha for _, c in saved],
                "seam_sha": [c.seam_sha for _, c in saved],
                "state": [c.state for _, c in saved],
                "carry": [c.carry for _, c in saved],
            },
            schema={
                "source_path": pl.String,
                "byte_offset": pl.Int64,
                "line": pl.Int64,
                "head_sha": pl.String,
                "seam_sha": pl.String,
                "state": pl.Binary,
                "carry": pl.Binary,
            },
        )
        con = self.con
        # Each table goes to Arrow once, and is read by DuckDB both for its insert and for the keys.
        arrow = {name: frames.table(name).to_arrow() for name in SCHEMAS}
        with registered(con, {f"batch_{name}": table for name, table in arrow.items()}):
            try:
                with transaction(con):
                    if paths.height:
                        self._delete_files(paths, keep_git=True)
                    # Appends on one thread: a batch is smaller than a row group, and more threads
                    # only split it (the steps' insert took about half as much CPU again on two),
                    # beside busy parse workers.
                    con.execute("SET threads = 1")
                    for name, table in arrow.items():
                        if table.num_rows:
                            con.execute(
                                f"INSERT INTO {name} BY NAME SELECT *, {int(ingest_id)} AS ingest_id FROM batch_{name}"
                            )
                    if arrow["commits"].num_rows:
                        self._after_commits()
                    self._insert("ingested_files", files)
                    self._insert("checkpoints", checkpoints)
                    con.execute("INSERT INTO partition_keys " + partitions.key_sql(lambda name: f"batch_{name}"))
                    # The inference tables no longer match these files until their partitions are
                    # inferred again; if we are killed before that, the next ingest finds them here.
                    self._insert("dirty_files", files.select("source_path"))
            finally:
                con.execute("RESET threads")

    def _after_commits(self) -> None:
        """After a batch's commits rows went in (``batch_commits``): a verified commit row takes the
        place of a heuristic row of the same commit (its hash a prefix of the full one), and a
        verified row gets back the ``in_branch`` the last ``ingest --git`` found for it
        (``commit_checks``), so a log read again without --git loses no git fact."""
        self.con.execute(
            f"DELETE FROM commits WHERE {GIT_ROWS} AND EXISTS (SELECT 1 FROM batch_commits v"
            " WHERE v.kind = 'commit' AND v.commit_hash IS NOT NULL AND starts_with(commits.commit_hash, v.commit_hash))"
        )
        self.con.execute(
            f"UPDATE commits SET in_branch = k.in_branch FROM commit_checks k WHERE NOT {GIT_ROWS}"
            " AND commits.session_id = k.session_id AND commits.commit_hash = k.commit_hash"
            " AND commits.source_path IN (SELECT source_path FROM batch_commits)"
        )

    def write_git(
        self, sessions: list[str], matched: list[str], rows: pl.DataFrame, checks: pl.DataFrame, ingest_id: int
    ) -> None:
        """What ``ingest --git`` found for the sessions whose repository it read (``sessiongraph.gitlog``),
        in one transaction: the heuristic ``commits`` rows of ``matched`` (those of ``sessions`` its
        walk reached) replaced by ``rows``, ``in_branch`` of the verified commit rows of ``sessions``
        set from ``checks`` (session_id, commit_hash, in_branch; null where it found none), which
        ``commit_checks`` keeps for logs read again later."""
        con = self.con
        schema = {"session_id": pl.String}
        read = pl.DataFrame({"session_id": sessions}, schema=schema)
        walked = pl.DataFrame({"session_id": matched}, schema=schema)
        checks = checks.with_columns(ingest_id=pl.lit(ingest_id, pl.Int64))
        tables = {
            "git_sessions": read.to_arrow(),
            "git_matched": walked.to_arrow(),
            "git_rows": rows.to_arrow(),
            "git_checks": checks.to_arrow(),
        }
        with registered(con, tables), transaction(con):
            con.execute(f"DELETE FROM commits WHERE {GIT_ROWS} AND session_id IN (SELECT session_id FROM git_matched)")
            if rows.height:
                con.execute(f"INSERT INTO commits BY NAME SELECT *, {int(ingest_id)} AS ingest_id FROM git_rows")
            con.execute("DELETE FROM commit_checks WHERE session_id IN (SELECT session_id FROM git_sessions)")
            if checks.height:
                con.execute("INSERT INTO commit_checks BY NAME SELECT * FROM git_checks")
            con.execute(
                "UPDATE commits SET in_branch = (SELECT k.in_branch FROM git_checks k WHERE k.session_id ="
                f" commits.session_id AND k.commit_hash = commits.commit_hash) WHERE NOT {GIT_ROWS}"
                " AND kind = 'commit' AND session_id IN (SELECT session_id FROM git_sessions)"
            )

    def remove(self, paths: list[str]) -> None:
        """Forget files that are gone from disk: their rows go (with the heuristic commits rows
        ``ingest --git`` gave their sessions), their partitions are inferred again."""
        if not paths:
            return
        df = pl.DataFrame({"source_path": paths}, schema={"source_path": pl.String})
        with transaction(self.con):
            self._delete_files(df)
            self._insert("dirty_files", df)
            self.con.execute("DELETE FROM commit_checks WHERE session_id NOT IN (SELECT session_id FROM sessions)")

    def _delete_files(self, paths: pl.DataFrame, *, keep_git: bool = False) -> None:
        """Every row of these files; with ``keep_git`` (the file is read again) not the commits
        rows ``ingest --git`` made for its sessions."""
        with self._among("source_path", paths["source_path"], "gone_paths") as (among, params):
            for table in FILE_TABLES:
                kept = f" AND NOT {GIT_ROWS}" if keep_git and table == "commits" else ""
                self.con.execute(f"DELETE FROM {table} WHERE {among}{kept}", params or None)

    @contextmanager
    def _among(self, column: str, values: pl.Series, name: str) -> Iterator[tuple[str, list]]:
        """``column IN (values)`` as SQL and its parameters, for the block: a literal list of up to
        LITERAL_VALUES values, else a semi-join against them registered as table ``name``."""
        if len(values) <= LITERAL_VALUES:
            yield (f"{column} IN ({', '.join('?' * len(values))})" if len(values) else "false"), values.to_list()
            return
        with registered(self.con, {name: values.rename("value").to_frame().to_arrow()}):
            yield f"{column} IN (SELECT value FROM {name})", []

    def _insert_keys(self, tables: dict[str, pl.DataFrame]) -> None:
        """The partition keys of these frame rows (inference/partitions.py), computed by DuckDB."""
        with registered(self.con, {f"keyed_{name}": df.to_arrow() for name, df in tables.items()}):
            self.con.execute("INSERT INTO partition_keys " + partitions.key_sql(lambda name: f"keyed_{name}"))

    def _insert(self, table: str, df: pl.DataFrame, select: str = "*") -> None:
        """Append an Arrow batch as it is (columns by name): no Python loop over rows."""
        if df.height == 0:
            return
        with registered(self.con, {"batch_rows": df.to_arrow()}):
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT {select} FROM batch_rows")

    def write_inference(self, inferred: Inferred) -> None:
        """Replace every inference table at once with runs stated elsewhere (``load-parquet``):
        readers see the old graph or the new one. The next ingest infers every partition again."""
        tables = inferred.tables()
        tables["inference_diagnostics"] = conform(tables["inference_diagnostics"], partitions.STORED_DIAGNOSTICS)
        con = self.con
        # Frames stored without their keys (loaded from a dataset) get them, so that the next
        # ingest's passes see them.
        unkeyed = self._frame(
            con.sql(
                "SELECT DISTINCT source_path FROM sessions"
                " WHERE source_path NOT IN (SELECT source_path FROM partition_keys)"
            ).to_arrow_table()
        )
        with transaction(con):
            for name in (*INFERENCE_TABLES, "file_partitions", "session_partitions", "dirty_files"):
                con.execute(f"DELETE FROM {name}")
            if unkeyed.height:
                self._insert_keys(self.load_frames(unkeyed).tables())
            self._insert_inference(tables)
            self._set_meta("inference_scope", "all")

    def _insert_inference(self, tables: dict[str, pl.DataFrame]) -> None:
        edges = tables["edges"]
        rows = {
            **tables,
            "edges": edges.filter(pl.col("run_id").is_not_null()),
            "lineage": edges.filter(pl.col("run_id").is_null()),
        }
        for name, schema in INFERENCE_TABLES.items():
            self._insert(name, conform(rows[name], schema))
        for name in ("file_partitions", "session_partitions"):
            if name in rows:
                self._insert(name, rows[name])

    # -- partitioned inference (inference/partitions.py) ----------------------------------------

    def needs_inference(self) -> bool:
        """Files changed since their partitions were last inferred (now, or by a killed ingest)."""
        dirty = self.con.execute("SELECT EXISTS (SELECT 1 FROM dirty_files)").fetchall()[0][0]
        return bool(dirty) or self._meta("inference_scope") == "all"

    def inference_plan(self, max_files: int) -> InferencePlan:
        """What the next inference must redo: every partition a changed file was in, every
        partition it is in now (all files its linking keys reach), grouped for the passes."""
        con = self.con
        everything = self._meta("inference_scope") == "all"
        dirty = self._frame(con.sql("SELECT DISTINCT source_path FROM dirty_files").to_arrow_table())
        if everything:
            old = self._frame(con.sql("SELECT DISTINCT partition_id FROM file_partitions").to_arrow_table())
            rows = self._frame(con.sql("SELECT source_path, key, active FROM partition_keys").to_arrow_table())
        else:
            old, rows = self._reach(dirty)
        parts = partitions.components(conform(rows, partitions.KEYS)) if rows.height else None
        return InferencePlan(
            dirty=dirty["source_path"],
            old_partitions=old["partition_id"] if old.height else pl.Series("partition_id", [], pl.String),
            groups=partitions.groups(parts, max_files) if parts is not None else [],
            everything=everything,
        )

    def _reach(self, dirty: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The old partitions of the ``dirty`` files, and the keys (partition_keys rows) of every
        file reachable from them or from their old partition-mates through active keys, taking
        whole old partitions as it goes. Each step reads only the rows of the values at hand
        (Store._among): a watch batch reaches a few files of a large store."""
        parts = pl.Series("partition_id", [], pl.String)
        files = pl.Series("source_path", [], pl.String)
        keys: list[pl.DataFrame] = []
        frontier = dirty["source_path"]
        while True:
            # whole old partitions of the frontier join it
            old = self._among_rows("SELECT DISTINCT partition_id FROM file_partitions", "source_path", frontier)
            new = old.filter(~pl.col("partition_id").is_in(parts.implode()))["partition_id"]
            if len(new):
                parts = pl.concat([parts, new])
                mates = self._among_rows("SELECT source_path FROM file_partitions", "partition_id", new)
                frontier = pl.concat([frontier, mates["source_path"]], how="vertical")
            frontier = frontier.unique()
            frontier = frontier.filter(~frontier.is_in(files.implode()))
            if len(frontier) == 0:
                break
            files = pl.concat([files, frontier])
            held = self._among_rows("SELECT source_path, key, active FROM partition_keys", "source_path", frontier)
            keys.append(held)
            # files sharing a key of the frontier that some file holds actively
            holders = self._among_rows(
                "SELECT source_path, key, active FROM partition_keys", "key", held["key"].unique()
            )
            linking = holders.group_by("key").agg(pl.col("active").any()).filter("active")["key"]
            frontier = holders.filter(
                pl.col("key").is_in(linking.implode()) & ~pl.col("source_path").is_in(files.implode())
            )["source_path"]
        rows = pl.concat(keys) if keys else pl.DataFrame(schema=partitions.KEYS)
        return parts.unique().to_frame(), rows

    def _among_rows(self, select: str, column: str, values: pl.Series) -> pl.DataFrame:
        """The rows of ``select`` whose ``column`` is one of ``values`` (Store._among)."""
        with self._among(column, values, "among_values") as (among, params):
            return self._frame(self.con.sql(f"{select} WHERE {among}", params=params or None).to_arrow_table())

    def write_partitions(self, plan: InferencePlan, tables: dict[str, pl.DataFrame]) -> None:
        """Replace the inference rows of the plan's old partitions with the rows its groups gave
        (one transaction: readers see the old graph or the new one); rows of every other
        partition are not touched."""
        con = self.con
        with ExitStack() as among, transaction(con):
            done, done_params = among.enter_context(self._among("source_path", plan.dirty, "done_paths"))
            if plan.everything:
                for name in (*INFERENCE_TABLES, "file_partitions", "session_partitions"):
                    con.execute(f"DELETE FROM {name}")
            else:
                parts, parts_params = among.enter_context(self._among("partition_id", plan.old_partitions, "old_parts"))
                sessions = self._among_rows(
                    "SELECT DISTINCT session_id FROM session_partitions", "partition_id", plan.old_partitions
                )["session_id"]
                runs = self._among_rows("SELECT DISTINCT run_id FROM run_sessions", "session_id", sessions)["run_id"]
                src, src_params = among.enter_context(self._among("src", sessions, "old_src"))
                dst, dst_params = among.enter_context(self._among("dst", sessions, "old_dst"))
                producer, producer_params = among.enter_context(self._among("producer", sessions, "old_producers"))
                run, run_params = among.enter_context(self._among("run_id", runs, "old_runs"))
                for name in ("edges", "lineage"):
                    con.execute(f"DELETE FROM {name} WHERE {src} OR {dst}", [*src_params, *dst_params] or None)
                for name in ("runs", "run_sessions"):
                    con.execute(f"DELETE FROM {name} WHERE {run}", run_params or None)
                con.execute(f"DELETE FROM artifacts WHERE {producer}", producer_params or None)
                for name in ("inference_diagnostics", "session_partitions", "file_partitions"):
                    con.execute(f"DELETE FROM {name} WHERE {parts}", parts_params or None)
                con.execute(f"DELETE FROM file_partitions WHERE {done}", done_params or None)
            if tables:
                self._insert_inference(tables)
            con.execute(f"DELETE FROM dirty_files WHERE {done}", done_params or None)
            self._set_meta("inference_scope", "partitions")

    def compact(self) -> None:
        """Rewrite the store into a new file that takes this one's place. DuckDB leaves the bytes of
        deleted rows in free blocks: this is how the text of rows a ``metadata_only`` ingest replaced
        leaves the file. A kill midway leaves the old store whole (and a stray ``.compact`` file)."""
        fresh = self.path.with_name(self.path.name + ".compact")
        fresh.unlink(missing_ok=True)
        name = self.con.execute("SELECT current_database()").fetchall()[0][0].replace('"', '""')
        self.con.execute(f"ATTACH {_literal(str(fresh))} AS sessiongraph_compact")
        self.con.execute(f'COPY FROM DATABASE "{name}" TO sessiongraph_compact')
        self.con.execute("DETACH sessiongraph_compact")
        self.release()
        os.replace(fresh, self.path)  # the next use of the store opens the rewritten file

    def _set_meta(self, key: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO sessiongraph_meta VALUES (?, ?)", [key, value])

    @staticmethod
    def _frame(table) -> pl.DataFrame:
        # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
        return cast(pl.DataFrame, pl.from_arrow(table))

    def _meta(self, key: str) -> str | None:
        rows = self.con.execute("SELECT value FROM sessiongraph_meta WHERE key = ?", [key]).fetchall()
        return rows[0][0] if rows else None

    def load_frames(self, files: pl.DataFrame | None = None) -> Frames:
        """The stored frame rows the passes read (no steps or texts) of ``files`` (a frame with ``source_path``; default every file),
        file by file in path order, each file's rows in the order they were written: the same
        rows in the same order whatever ingests wrote them."""
        out = {}
        chosen: AbstractContextManager[tuple[str, list]] = (
            nullcontext(("true", [])) if files is None else self._among("source_path", files["source_path"], "wanted")
        )
        with chosen as (among, params):
            for name, schema in SCHEMAS.items():
                if name in NOT_INFERRED:
                    continue
                table = self.con.sql(
                    f"SELECT {', '.join(schema)} FROM {name} WHERE {among} ORDER BY source_path, rowid",
                    params=params or None,
                )
                # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
                out[name] = conform(cast(pl.DataFrame, pl.from_arrow(table.to_arrow_table())), schema)
        return Frames(**out)

    # -- reading -----------------------------------------------------------------------------

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        while True:
            try:
                rel = self.con.sql(sql, params=params) if params else self.con.sql(sql)
                # A statement with no result set (SET, PRAGMA ...) gives no relation.
                # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
                return (
                    pl.DataFrame()
                    if rel is None
                    else cast(pl.DataFrame, pl.from_arrow(_as_polars(rel).to_arrow_table()))
                )
            except duckdb.OutOfMemoryException as exc:
                if not self._raise_cap():
                    raise SessiongraphError(f"query failed: {first_line(exc)}") from None
            except duckdb.Error as exc:
                raise SessiongraphError(f"query failed: {first_line(exc)}") from None

    @contextmanager
    def capped(self, mb: int) -> Iterator[None]:
        """DuckDB's memory limited to ``mb`` for the block (then as it was). DuckDB keeps every
        block of the file it has read until its ``memory_limit`` (by default 80% of RAM), so an
        export that reads the whole store, a group at a time, would otherwise hold all of it at
        the end; capped, it holds at most ``mb`` of them. A read-only connection cannot spill, so
        a query that needs more than the cap runs again with the cap doubled (``query``), up to
        the limit before the block."""
        con = self.con
        before = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        self._cap_before = _bytes(before)
        if self._cap_before is not None and mb * 2**20 >= self._cap_before:
            yield  # the limit is lower already
            return
        self._cap_mb = mb
        con.execute(f"SET memory_limit = '{mb}MiB'")
        try:
            yield
        finally:
            self._cap_mb = None
            if self._con is not None:
                self._con.execute(f"SET memory_limit = '{before}'")

    def _raise_cap(self) -> bool:
        """Double a capped memory limit (at most the limit before the cap); False when not capped
        or already there."""
        if self._cap_mb is None:
            return False
        top = (self._cap_before or 2**63) // 2**20
        if self._cap_mb >= top:
            return False
        self._cap_mb = min(self._cap_mb * 2, top)
        self.con.execute(f"SET memory_limit = '{self._cap_mb}MiB'")
        return True

    def counts(self, sql: str) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.con.execute(sql).fetchall()}

    # A session's node state and what it waits on: what its latest-ending row records (every row of
    # one file records the same), even when an end time is missing. Shared by the OCP documents and
    # the dataset's sessions table (a SELECT fragment over ``sessions``).
    NODE_STATE = """
arg_max(state, coalesce(ended_at, 'epoch'::TIMESTAMPTZ)) AS state,
arg_max_null(waiting_on, coalesce(ended_at, 'epoch'::TIMESTAMPTZ)) FILTER (WHERE state IS NOT NULL) AS waiting_on
"""

    def chosen_runs(
        self,
        runs: Sequence[str] = (),
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        harnesses: Sequence[str] = (),
    ) -> pl.DataFrame:
        """The ``runs`` rows an export covers, oldest first: the named ones (any id
        :meth:`resolve_run` takes), else all; kept when active on or after ``since``, started by
        ``until`` and headed by one of ``harnesses`` (a run's harness is its root's)."""
        table = self.query("SELECT * FROM runs ORDER BY started_at NULLS LAST, run_id")
        if runs:
            table = table.filter(pl.col("run_id").is_in([self.resolve_run(r) for r in runs]))
        if since is not None:
            table = table.filter(pl.col("ended_at").is_null() | (pl.col("ended_at") >= since))
        if until is not None:
            table = table.filter(pl.col("started_at").is_null() | (pl.col("started_at") <= until))
        if harnesses:
            table = table.filter(pl.col("root_harness").is_in(list(harnesses)))
        return table

    def per_run(
        self, chosen: pl.DataFrame, queries: Mapping[str, str], *, batch_sessions: int = PER_RUN_SESSIONS
    ) -> Iterator[tuple[dict, dict[str, pl.DataFrame]]]:
        """Each ``chosen`` run's row with, per named query, that query's rows of the run: each query
        (which reads the chosen run ids as the table ``chosen`` and gives a ``run_id`` column) runs
        once per group of whole runs of about ``batch_sessions`` sessions (``batches.groups``), so an
        export of ten thousand runs costs a handful of queries per group and holds one group's rows."""
        weights = dict(chosen.select("run_id", "n_sessions").iter_rows()) if "n_sessions" in chosen.columns else {}
        by_id = {run["run_id"]: run for run in chosen.iter_rows(named=True)}
        for group in groups(by_id, weights, batch_sessions):
            ids = pl.DataFrame({"run_id": group}, schema={"run_id": pl.String})
            with registered(self.con, {"chosen": ids.to_arrow()}):
                results = {name: self.query(sql) for name, sql in queries.items()}
            parts = {
                name: (
                    {k[0]: g for k, g in df.partition_by("run_id", as_dict=True).items()} if df.height else {},
                    df.head(0),
                )
                for name, df in results.items()
            }
            del results
            for rid in group:
                yield by_id[rid], {name: runs.get(rid, empty) for name, (runs, empty) in parts.items()}

    def resolve_run(self, ref: str) -> str:
        """The run id of ``ref``: a run id, a session id of any member (with or without its
        harness prefix), or a unique prefix of either (a run id's with or without ``run_``);
        when several runs match, the error names them."""
        ref = ref.strip()
        if not ref:
            raise SessiongraphError("give a run id, a session id or a prefix of one")
        hit = self.query("SELECT DISTINCT run_id FROM run_sessions WHERE run_id = $1 OR session_id = $1", [ref])
        if hit.height == 1:
            return hit.item()
        hit = self.query(
            "SELECT DISTINCT run_id, session_id FROM run_sessions WHERE starts_with(run_id, $1)"
            " OR starts_with(run_id, 'run_' || $1) OR starts_with(session_id, $1)"
            " OR starts_with(split_part(session_id, ':', 2), $1)",
            [ref],
        )
        # A session prefix also matches its subagents ("<id>/<agent>"), which may head runs of
        # their own (warm-ups, orphans): the top-level session wins.
        for candidates in (hit, hit.filter(~pl.col("session_id").str.contains("/"))):
            runs = candidates["run_id"].unique()
            if runs.len() == 1:
                return runs.item()
        if hit.height:
            matches = hit.group_by("run_id").agg(pl.col("session_id").min()).sort("run_id")
            n = matches.height
            shown = "; ".join(f"{r} ({s})" for r, s in matches.head(AMBIGUOUS_SHOWN).iter_rows())
            more = f"; and {n - AMBIGUOUS_SHOWN} more" if n > AMBIGUOUS_SHOWN else ""
            raise SessiongraphError(f"{ref!r} matches {n} runs: {shown}{more}; give more of the id")
        ids = self.query("SELECT run_id FROM runs")["run_id"].to_list()
        close = difflib.get_close_matches(ref, ids, n=1)
        hint = f"; did you mean {close[0]}?" if close else "; `sessiongraph runs` lists them"
        raise SessiongraphError(f"no run {ref!r}{hint}")


def _literal(text: str) -> str:
    """A SQL string literal (ATTACH takes no parameters)."""
    return "'" + text.replace("'", "''") + "'"


AMBIGUOUS_SHOWN = 8  # runs an ambiguous prefix's error names (with one session of each)


_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}


def _bytes(setting: str) -> int | None:
    """DuckDB's spelling of a memory size ("18.8 GiB", "128.0 MiB") in bytes; None if unreadable."""
    number, _, unit = setting.strip().partition(" ")
    try:
        return int(float(number) * _UNITS[unit.strip().upper() or "B"])
    except (ValueError, KeyError):
        return None


# DuckDB types polars cannot hold (it refuses their Arrow form): such columns come as DuckDB's text.
_TEXT_TYPES = ("INTERVAL", "UNION", "BIT", "BIGNUM", "VARINT", "TIME WITH TIME ZONE")


def _as_polars(rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    rel = _unique_names(rel)
    types = [str(t) for t in rel.types]
    if not any(name in t for t in types for name in _TEXT_TYPES):
        return rel
    cols = []
    for name, t in zip(rel.columns, types, strict=True):
        quoted = '"' + name.replace('"', '""') + '"'
        cols.append(f"CAST({quoted} AS VARCHAR) AS {quoted}" if any(n in t for n in _TEXT_TYPES) else quoted)
    return rel.project(", ".join(cols))


def _unique_names(rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """A result whose columns share a name (``SELECT a.id, b.id``) keeps the first and numbers the
    others ``id_1``, ``id_2``, ... (a frame's names are unique), selected by position."""
    if len(set(rel.columns)) == len(rel.columns):
        return rel
    taken: set[str] = set(rel.columns)
    seen: set[str] = set()
    cols = []
    for i, name in enumerate(rel.columns, start=1):
        new = name
        n = 0
        while new in seen or (new != name and new in taken):
            n += 1
            new = f"{name}_{n}"
        seen.add(new)
        cols.append(f'#{i} AS "{new.replace(chr(34), chr(34) * 2)}"')
    return rel.project(", ".join(cols))
