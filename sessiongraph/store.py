"""The DuckDB store: one file, frame tables replaced per source file in one transaction."""

from __future__ import annotations

import fcntl
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import cast

import duckdb
import platformdirs
import polars as pl

from sessiongraph import __version__
from sessiongraph.errors import SessiongraphError
from sessiongraph.inference.edges import ARTIFACTS, EDGES, INFERENCE_DIAGNOSTICS, RUN_SESSIONS, RUNS, Inferred, conform
from sessiongraph.ingest.frames import NOT_INFERRED, SCHEMAS, Frames
from sessiongraph.ingest.resume import Checkpoint

SCHEMA_VERSION = "7"
# How long to wait for a store another sessiongraph process holds (DuckDB allows one writer, and
# no reader while it writes) before giving up with a clear message.
LOCK_TIMEOUT_S = float(os.environ.get("SESSIONGRAPH_LOCK_TIMEOUT", "30"))
FRAME_TABLES: tuple[str, ...] = tuple(SCHEMAS)
INFERENCE_TABLES: dict[str, pl.Schema] = {
    "edges": EDGES,
    "lineage": EDGES,
    "runs": RUNS,
    "run_sessions": RUN_SESSIONS,
    "artifacts": ARTIFACTS,
    "inference_diagnostics": INFERENCE_DIAGNOSTICS,
}
DB_ENV = "SESSIONGRAPH_DB"


def default_db_path() -> Path:
    """``$SESSIONGRAPH_DB``, else ``sessiongraph.duckdb`` in the user data dir."""
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    return Path(platformdirs.user_data_dir("sessiongraph", appauthor=False)) / "sessiongraph.duckdb"


def _sql(name: str) -> str:
    return resources.files("sessiongraph.sql").joinpath(name).read_text(encoding="utf-8")


def _view_sql() -> list[str]:
    views = resources.files("sessiongraph.sql").joinpath("views")
    # usage_dedup first: session_overview reads it.
    names = sorted(p.name for p in views.iterdir() if p.name.endswith(".sql"))
    names.sort(key=lambda n: n != "usage_dedup.sql")
    return [views.joinpath(n).read_text(encoding="utf-8") for n in names]


@dataclass(frozen=True, slots=True)
class FileResult:
    """What one ingest learned about one file: its fingerprint and the frames it produced."""

    path: str
    harness: str | None
    size_bytes: int
    mtime_ns: int
    frames: Frames
    skip_reason: str | None = None
    privacy: str | None = None  # the ingest privacy profile the frames were kept under
    replaces: bool = True  # the store may hold rows of this file already (False: a new file)
    checkpoint: Checkpoint | None = None  # where the next ingest may resume reading it


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
        self._config = {"autoinstall_known_extensions": False}
        if read_only:
            self._config["enable_external_access"] = False
        self._con: duckdb.DuckDBPyConnection | None = None
        self._opened_at = 0.0
        # Writers exclude each other for their whole run with a lock file; DuckDB's own lock is
        # held only while a transaction is being written (see release), so readers get in between.
        self._writer_lock = None if read_only else _take_writer_lock(self.path)
        try:
            if not read_only:
                if not self.path.exists():
                    self._create()
                self._migrate()
            else:
                self._check_version()
        except BaseException:
            self.close()
            raise

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection, opened on first use (again after :meth:`release`)."""
        if self._con is None:
            self._con = self._connect(self._config)
            self._opened_at = time.monotonic()
        return self._con

    def release(self, held_for_s: float = 0.0) -> bool:
        """Close the DuckDB connection if it has been open ``held_for_s`` or longer, so a reader
        waiting on DuckDB's file lock can get in; the next use reopens it (about 10 ms).
        Returns whether it closed."""
        if self._con is not None and time.monotonic() - self._opened_at >= held_for_s:
            self._con.close()
            self._con = None
            return True
        return False

    def _connect(self, config: dict) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        pause = 0.05
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=self.read_only, config=config)
            except duckdb.IOException as exc:
                busy = "lock" in str(exc).lower()
                if busy and time.monotonic() < deadline:
                    time.sleep(pause)  # another sessiongraph is writing: wait for its batch to end
                    pause = min(pause * 2, 0.25)  # short polls: an ingest leaves gaps between batches
                    continue
                why = (
                    f"another process is using it (waited {LOCK_TIMEOUT_S:g}s; "
                    "set SESSIONGRAPH_LOCK_TIMEOUT to wait longer)"
                    if busy
                    else _first_line(exc)
                )
                raise SessiongraphError(f"cannot open store {self.path}: {why}", path=str(self.path)) from None
            except duckdb.Error as exc:
                raise SessiongraphError(
                    f"{self.path} is not a sessiongraph store: {_first_line(exc)}", path=str(self.path)
                ) from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.release()
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
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(_sql("schema.sql"))
            for view in _view_sql():
                self.con.execute(view)
            if version is None:
                self.con.execute("INSERT INTO sessiongraph_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

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

    def checkpoints(self, paths: list[str]) -> dict[str, Checkpoint]:
        """The stored checkpoints of these files (those that have one)."""
        if not paths:
            return {}
        self.con.register("wanted_paths", pl.DataFrame({"source_path": paths}).to_arrow())
        rows = self.con.execute(
            "SELECT source_path, byte_offset, line, head_sha, seam_sha, state, carry FROM checkpoints"
            " WHERE source_path IN (SELECT source_path FROM wanted_paths)"
        ).fetchall()
        self.con.unregister("wanted_paths")
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

    def write(self, results: list[FileResult], ingest_id: int) -> None:
        """Replace every row of these files, all in one transaction: a reader sees all or none."""
        if not results:
            return
        frames = Frames.concat([r.frames for r in results])
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
                "n_sessions": [r.frames.height("sessions") for r in results],
                "n_diagnostics": [r.frames.height("diagnostics") for r in results],
                "privacy": [r.privacy for r in results],
                "ingest_id": [ingest_id] * len(results),
                "ingested_at": [now] * len(results),
            },
            schema_overrides={"harness": pl.String, "skip_reason": pl.String, "privacy": pl.String},
        )
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            con.register("batch_paths", paths.to_arrow())
            if paths.height:
                for table in (*FRAME_TABLES, "ingested_files", "checkpoints"):
                    con.execute(f"DELETE FROM {table} WHERE source_path IN (SELECT source_path FROM batch_paths)")
            for table, df in frames.tables().items():
                if df.height:
                    con.register("batch_rows", df.to_arrow())
                    con.execute(f"INSERT INTO {table} BY NAME SELECT *, {int(ingest_id)} AS ingest_id FROM batch_rows")
                    con.unregister("batch_rows")
            con.register("batch_files", files.to_arrow())
            con.execute("INSERT INTO ingested_files BY NAME SELECT * FROM batch_files")
            con.unregister("batch_files")
            saved = [(r.path, r.checkpoint) for r in results if r.checkpoint is not None]
            if saved:
                con.executemany(
                    "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [[p, c.offset, c.line, c.head_sha, c.seam_sha, c.state, c.carry] for p, c in saved],
                )
            con.unregister("batch_paths")
            # The inference tables no longer match the frames until write_inference runs: if we
            # are killed before that, the next ingest knows to infer again.
            self._set_meta("inference_stale", "true")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def write_inference(self, inferred: Inferred) -> None:
        """Replace every inference table at once: readers see the old graph or the new one."""
        tables = inferred.tables()
        edges = tables.pop("edges")
        tables["edges"] = edges.filter(pl.col("run_id").is_not_null())
        tables["lineage"] = edges.filter(pl.col("run_id").is_null())
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            for name, schema in INFERENCE_TABLES.items():
                con.execute(f"DELETE FROM {name}")
                df = conform(tables[name], schema)
                if df.height:
                    con.register("inferred_rows", df.to_arrow())
                    con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM inferred_rows")
                    con.unregister("inferred_rows")
            self._set_meta("inference_stale", "false")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def compact(self) -> None:
        """Rewrite the store into a new file that takes this one's place. DuckDB leaves the bytes of
        deleted rows in free blocks: this is how the text of rows a ``metadata_only`` ingest replaced
        leaves the file. A kill midway leaves the old store whole (and a stray ``.compact`` file)."""
        fresh = self.path.with_name(self.path.name + ".compact")
        fresh.unlink(missing_ok=True)
        name = self.con.execute("SELECT current_database()").fetchall()[0][0].replace('"', '""')
        self.con.execute(f"ATTACH '{str(fresh).replace(chr(39), chr(39) * 2)}' AS sessiongraph_compact")
        self.con.execute(f'COPY FROM DATABASE "{name}" TO sessiongraph_compact')
        self.con.execute("DETACH sessiongraph_compact")
        self.release()
        os.replace(fresh, self.path)  # the next use of the store opens the rewritten file

    def _set_meta(self, key: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO sessiongraph_meta VALUES (?, ?)", [key, value])

    def needs_inference(self) -> bool:
        """Frames changed since the last inference (an ingest killed between the two steps)."""
        rows = self.con.execute("SELECT value FROM sessiongraph_meta WHERE key = 'inference_stale'").fetchall()
        return bool(rows) and rows[0][0] == "true"

    def load_frames(self) -> Frames:
        """Every stored frame row the passes read, as the frames they take (no steps or texts)."""
        out = {}
        for name, schema in SCHEMAS.items():
            if name in NOT_INFERRED:
                continue
            table = self.con.sql(f"SELECT {', '.join(schema)} FROM {name}").to_arrow_table()
            # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
            out[name] = conform(cast(pl.DataFrame, pl.from_arrow(table)), schema)
        return Frames(**out)

    # -- reading -----------------------------------------------------------------------------

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        try:
            rel = self.con.sql(sql, params=params) if params else self.con.sql(sql)
            # A statement with no result set (SET, PRAGMA ...) gives no relation.
            # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
            return pl.DataFrame() if rel is None else cast(pl.DataFrame, pl.from_arrow(rel.to_arrow_table()))
        except duckdb.Error as exc:
            raise SessiongraphError(f"query failed: {_first_line(exc)}") from None

    def counts(self, sql: str) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.con.execute(sql).fetchall()}


def _take_writer_lock(db: Path):
    """An exclusive flock on ``<db>.lock``, waited for up to LOCK_TIMEOUT_S; the open file is the
    lock (the OS drops it when the process dies, so a killed ingest never leaves a stale lock)."""
    lock_path = db.with_name(db.name + ".lock")
    try:
        fh = open(lock_path, "a+")  # noqa: SIM115 - held open for the Store's life
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


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
