"""The Parquet dataset: ``export parquet``, ``query --parquet`` and ``load``.

Layout: ``OUT/<table>/harness=<h>/month=<yyyy-mm>/part-<i>.parquet`` (Hive partitioning; a null
harness or month is ``unknown``). The partition columns live in the folder names only. Each file's
key-value metadata holds ``sessiongraph.schema_version``, the table, the privacy profile and
``sessiongraph.content_hash``: the hash of its partition's rows. Exporting again writes a partition
only when that hash changed; an unchanged file is not touched (same bytes, same mtime), and a
partition that no longer has rows is deleted.

``OUT`` is a local path or any URI ``pyarrow.fs.FileSystem.from_uri`` accepts (``s3://bucket/x``,
``gs://...``, ``file:///...``). Columns, types and meanings: ``DATASET.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import cast

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from sessiongraph import costs
from sessiongraph.dataset import tables as dataset
from sessiongraph.dataset.tables import SCHEMA_VERSION, TABLES, arrow_schema
from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.frames import PROFILES
from sessiongraph.store import Store, batches
from sessiongraph.version import __version__

KEY_VERSION = b"sessiongraph.schema_version"
KEY_HASH = b"sessiongraph.content_hash"
KEY_TABLE = b"sessiongraph.table"
KEY_PRIVACY = b"sessiongraph.privacy"
KEY_PRODUCER = b"sessiongraph.producer"
# Rows per file: a partition larger than this is split into part-0, part-1 ... (a month of one
# harness is rarely that big; the cap keeps any one file readable by a single worker).
ROWS_PER_FILE = 1_000_000
HASH_ROWS = 100_000  # rows serialised at a time for the content hash
HASH_BYTES = 8_000_000  # ... or fewer, about this many bytes of rows at a time


@dataclass
class ParquetSummary:
    out: str
    privacy: str
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows written or kept
    partitions_written: int = 0
    partitions_unchanged: int = 0
    files_removed: int = 0
    unpriced_models: dict[str, int] = field(default_factory=dict)  # model -> requests without a price

    def to_dict(self) -> dict:
        return asdict(self)


def filesystem(uri: str | os.PathLike) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem and base path of a local path or a filesystem URI."""
    text = os.fspath(uri)
    if "://" not in text:
        return pafs.LocalFileSystem(), os.path.abspath(text)
    try:
        fs, path = pafs.FileSystem.from_uri(text)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise SessiongraphError(f"cannot open {text}: {exc}", path=text) from None
    return fs, path.rstrip("/")


def export_parquet(
    out: str | os.PathLike,
    *,
    db: str | None = None,
    privacy: str = "metadata_only",
) -> ParquetSummary:
    """Write the store at ``db`` as a Hive-partitioned Parquet dataset under ``out``.

    Each table is read partition by partition and a partition chunk by chunk (``tables.Dataset``,
    the trajectories in groups of sessions): what is held at once is one chunk, the tables of a
    row per session, file or run, and DuckDB's capped cache (``batches.EXPORT_MEMORY_MB``)."""
    if privacy not in PROFILES:
        raise SessiongraphError(f"unknown privacy profile {privacy!r}; use one of {', '.join(PROFILES)}")
    with Store(db, read_only=True) as store, store.capped(batches.EXPORT_MEMORY_MB):
        summary = write(dataset.Dataset(store, privacy), out, privacy=privacy)
        unpriced = dataset.unpriced(store)
    summary.unpriced_models = {m or "(none)": n for m, n in unpriced.iter_rows()}
    return summary


def content_hash(table: str, privacy: str, rows: pl.DataFrame) -> str:
    """sha256 of a partition's schema and rows (in their fixed order), as NDJSON."""
    h = _hasher(table, privacy)
    _hash_rows(h, rows)
    return h.hexdigest()


def _hasher(table: str, privacy: str):  # -> hashlib's sha256 object (no public type for it)
    h = hashlib.sha256()
    h.update(f"{SCHEMA_VERSION}\x1f{table}\x1f{privacy}\x1f{arrow_schema(table, privacy)}\n".encode())
    return h


def _hash_rows(h, rows: pl.DataFrame) -> None:
    # bounded memory on a large partition: slices of HASH_ROWS rows, fewer when rows are wide
    # (trajectories); the NDJSON, hence the hash, is the same however the rows are sliced
    for chunk in rows.iter_slices(_slice_rows(rows)):
        h.update(chunk.write_ndjson().encode("utf-8"))


def _slice_rows(rows: pl.DataFrame) -> int:
    """Rows of ``rows`` in a slice of about HASH_BYTES (at most HASH_ROWS): wide rows, fewer."""
    if not rows.height:
        return HASH_ROWS
    per_row = max(1, int(rows.estimated_size()) // rows.height)
    return max(1, min(HASH_ROWS, HASH_BYTES // per_row))


def _meta(name: str, privacy: str, digest: str) -> dict[bytes, bytes]:
    return {
        KEY_VERSION: SCHEMA_VERSION.encode(),
        KEY_HASH: digest.encode(),
        KEY_TABLE: name.encode(),
        KEY_PRIVACY: privacy.encode(),
        KEY_PRODUCER: f"sessiongraph {__version__}".encode(),
    }


def write(data: dataset.Dataset, out: str | os.PathLike, *, privacy: str) -> ParquetSummary:
    """Write every table of ``data`` under ``out``, rewriting only changed partitions (a table
    not built, trajectories under metadata_only, loses its old files)."""
    fs, base = filesystem(out)
    summary = ParquetSummary(out=os.fspath(out), privacy=privacy)
    fs.create_dir(base, recursive=True)
    for name in TABLES:
        if name == "trajectories":
            parts = dataset.trajectory_partitions(data) if privacy == "full" else iter(())
            _write_streamed(fs, base, name, privacy, parts, summary)
        else:
            _write_table(fs, base, name, privacy, data.partitions(name), summary)
    return summary


def _write_table(
    fs: pafs.FileSystem,
    base: str,
    name: str,
    privacy: str,
    partitions: Iterator[tuple[str, str, Callable[[], Iterator[pl.DataFrame]]]],
    summary: ParquetSummary,
) -> None:
    """Each partition read twice, a chunk at a time: once for its content hash, and again to
    write it only when the hash differs from the stored files' (an unchanged file is not touched)."""
    target = arrow_schema(name, privacy)
    existing = _files(fs, f"{base}/{name}")
    keep: set[str] = set()
    total = 0
    for harness, month, chunks in partitions:
        folder = _folder(base, name, harness, month)
        h = _hasher(name, privacy)
        n = 0
        for part in chunks():
            rows = part.drop("_harness", "_month")
            n += rows.height
            _hash_rows(h, rows)
            del rows, part
        digest = h.hexdigest()
        total += n
        paths = [f"{folder}/part-{i}.parquet" for i in range(max(1, -(-n // ROWS_PER_FILE)))]
        keep.update(paths)
        in_folder = {p for p in existing if posixpath.dirname(p) == folder}
        if in_folder == set(paths) and all(_stored_hash(fs, p) == digest for p in paths):
            summary.partitions_unchanged += 1
            continue
        fs.create_dir(folder, recursive=True)
        _write_files(fs, paths, target.with_metadata(_meta(name, privacy, digest)), chunks())
        summary.partitions_written += 1
    summary.rows[name] = total
    _remove_stale(fs, f"{base}/{name}", set(existing) - keep, summary)


def _write_files(fs: pafs.FileSystem, paths: list[str], target: pa.Schema, chunks: Iterator[pl.DataFrame]) -> None:
    """A partition's rows into ``paths`` in order, ROWS_PER_FILE rows a file, a row group of
    about HASH_BYTES at a time (one Arrow copy of a slice, never the file); each file is written
    beside its path and renamed when complete, so a reader never sees half a file."""
    files = iter(paths)
    path: str | None = None
    sink = writer = None
    in_file = 0

    def close() -> None:
        if writer is not None and sink is not None and path is not None:
            writer.close()
            sink.close()
            fs.move(path + ".tmp", path)

    try:
        for part in chunks:
            rows = part.drop("_harness", "_month")
            for piece in rows.iter_slices(_slice_rows(rows)):
                while piece.height:
                    if writer is None or in_file == ROWS_PER_FILE:
                        close()
                        path = next(files)
                        sink = fs.open_output_stream(path + ".tmp")
                        writer = pq.ParquetWriter(sink, target, compression="zstd")
                        in_file = 0
                    take = piece.slice(0, ROWS_PER_FILE - in_file)
                    writer.write_table(take.to_arrow().cast(target))
                    in_file += take.height
                    piece = piece.slice(take.height)
            del rows, part
        if writer is None:  # a partition of no rows (it has none: a partition has a row)
            path = next(files)
            sink = fs.open_output_stream(path + ".tmp")
            writer = pq.ParquetWriter(sink, target, compression="zstd")
        close()
    except BaseException:
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        raise


def _write_streamed(
    fs: pafs.FileSystem,
    base: str,
    name: str,
    privacy: str,
    partitions: Iterator[tuple[str, str, Iterator[pl.DataFrame]]],
    summary: ParquetSummary,
) -> None:
    """One file per partition, written slice by slice while its content hash is taken (the same
    hash as ``content_hash`` of the whole partition); the hash goes into the footer, and when it
    equals the stored file's, the new file is dropped and the stored one left untouched."""
    target = arrow_schema(name, privacy)
    existing = _files(fs, f"{base}/{name}")
    keep: set[str] = set()
    rows_total = 0
    for harness, month, slices in partitions:
        folder = _folder(base, name, harness, month)
        path = f"{folder}/part-0.parquet"
        keep.add(path)
        fs.create_dir(folder, recursive=True)
        tmp = path + ".tmp"
        h = _hasher(name, privacy)
        with fs.open_output_stream(tmp) as sink, pq.ParquetWriter(sink, target, compression="zstd") as writer:
            for part in slices:
                rows = part.drop("_harness", "_month")
                rows_total += rows.height
                for piece in rows.iter_slices(_slice_rows(rows)):
                    h.update(piece.write_ndjson().encode("utf-8"))
                    writer.write_table(piece.to_arrow().cast(target))
                del rows, part
            digest = h.hexdigest()
            writer.add_key_value_metadata(_meta(name, privacy, digest))
        in_folder = {p for p in existing if posixpath.dirname(p) == folder}
        if in_folder == {path} and _stored_hash(fs, path) == digest:
            fs.delete_file(tmp)
            summary.partitions_unchanged += 1
            continue
        fs.move(tmp, path)  # a reader never sees half a file
        summary.partitions_written += 1
    summary.rows[name] = rows_total
    _remove_stale(fs, f"{base}/{name}", set(existing) - keep, summary)


def _folder(base: str, name: str, harness: str, month: str) -> str:
    return f"{base}/{name}/harness={_segment(harness)}/month={_segment(month)}"


def _remove_stale(fs: pafs.FileSystem, table_dir: str, stale: set[str], summary: ParquetSummary) -> None:
    """The files of a table no partition wrote this time, and the folders they leave empty."""
    for path in sorted(stale):
        fs.delete_file(path)
        summary.files_removed += 1
    _prune_empty(fs, table_dir)


# A folder name longer than this (file systems allow 255 bytes) holds a shortened partition value.
MAX_SEGMENT = 100


def _segment(value: str) -> str:
    """A partition value as a folder name: harness names and months are plain; anything else is
    URI-encoded the way Hive readers decode it. A value whose folder name would pass MAX_SEGMENT
    (a crafted harness name) is cut and ends in ``~`` and 16 hex digits of its sha256: the same
    value, the same folder, and no two values share one."""
    from urllib.parse import quote

    quoted = quote(value, safe="-_.")
    if len(quoted) <= MAX_SEGMENT:
        return quoted
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    keep = value
    while len(quote(keep, safe="-_.")) > MAX_SEGMENT - 17:
        keep = keep[: max(0, min(len(keep) - 1, MAX_SEGMENT - 17))]
    return f"{quote(keep, safe='-_.')}~{digest}"


def _files(fs: pafs.FileSystem, folder: str) -> list[str]:
    """Every file under ``folder`` that the writer owns (parts, and temp files a killed export left)."""
    infos = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True, recursive=True))
    # File systems differ on a leading "/" (fsspec adds one, S3 has none): name files as we do.
    return [
        f"{folder}/{posixpath.relpath(i.path.lstrip('/'), folder.lstrip('/'))}"
        for i in infos
        if i.type == pafs.FileType.File and (i.path.endswith(".parquet") or i.path.endswith(".parquet.tmp"))
    ]


def _stored_hash(fs: pafs.FileSystem, path: str) -> str | None:
    try:
        meta = pq.read_metadata(path, filesystem=fs).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return None
    if meta.get(KEY_VERSION) != SCHEMA_VERSION.encode():
        return None
    value = meta.get(KEY_HASH)
    return value.decode() if value else None


def _prune_empty(fs: pafs.FileSystem, folder: str) -> None:
    infos = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True, recursive=True))
    dirs = sorted(
        (
            f"{folder}/{posixpath.relpath(i.path.lstrip('/'), folder.lstrip('/'))}"
            for i in infos
            if i.type == pafs.FileType.Directory
        ),
        key=len,
        reverse=True,
    )
    for d in dirs:
        if not fs.get_file_info(pafs.FileSelector(d, recursive=False)):
            fs.delete_dir(d)


# -- reading back ---------------------------------------------------------------------------------


def _tables_present(fs: pafs.FileSystem, base: str) -> dict[str, bool]:
    info = fs.get_file_info(base)
    if info.type != pafs.FileType.Directory:
        raise SessiongraphError(f"no dataset at {base}: run `sessiongraph export parquet --out {base}`", path=base)
    present = {name: bool(_parts(fs, f"{base}/{name}")) for name in TABLES}
    if not any(present.values()) and not any(
        fs.get_file_info(f"{base}/{name}").type == pafs.FileType.Directory for name in TABLES
    ):
        raise SessiongraphError(f"{base} is not a sessiongraph dataset (no {', '.join(TABLES)} folders)", path=base)
    return present


def _parts(fs: pafs.FileSystem, folder: str) -> list[str]:
    return [p for p in _files(fs, folder) if p.endswith(".parquet")]


def _empty(name: str, privacy: str = "metadata_only") -> pa.Table:
    sch = arrow_schema(name, privacy)
    return (
        sch.empty_table()
        .append_column("harness", pa.array([], pa.string()))
        .append_column("month", pa.array([], pa.string()))
    )


def read_table(dataset_uri: str | os.PathLike, name: str) -> pa.Table:
    """One table of a dataset as Arrow, with its ``harness`` and ``month`` partition columns."""
    fs, base = filesystem(dataset_uri)
    ds = _dataset(fs, base, name)
    return _empty(name) if ds is None else ds.to_table()


def _dataset(fs: pafs.FileSystem, base: str, name: str) -> pads.Dataset | None:
    """A table's files as a pyarrow dataset with its Hive partition columns; None when it has none."""
    files = _parts(fs, f"{base}/{name}")
    if not files:
        return None
    _check_version(fs, files[0])
    part = pads.partitioning(pa.schema([("harness", pa.string()), ("month", pa.string())]), flavor="hive")
    return pads.dataset(files, filesystem=fs, format="parquet", partitioning=part, partition_base_dir=f"{base}/{name}")


def _check_version(fs: pafs.FileSystem, path: str) -> None:
    meta = pq.read_metadata(path, filesystem=fs).metadata or {}
    version = (meta.get(KEY_VERSION) or b"?").decode()
    if version != SCHEMA_VERSION:
        raise SessiongraphError(
            f"{path} has dataset schema version {version}, this sessiongraph reads {SCHEMA_VERSION}; "
            "export the dataset again",
            path=path,
        )


def query(sql: str, *, parquet: str | os.PathLike) -> pl.DataFrame:
    """Run ``sql`` with DuckDB over a dataset: one view per table (partition columns included).

    The same sandbox as a store's reader: each table is a pyarrow dataset of its own files that
    DuckDB scans, and DuckDB itself may touch no file and load no extension (a shared ``--file``
    query cannot COPY, read_csv, ATTACH or INSTALL), with its configuration locked."""
    fs, base = filesystem(parquet)
    present = _tables_present(fs, base)
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        for name, has_files in present.items():
            if not has_files:
                con.register(f"_{name}_empty", _empty(name))
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM _{name}_empty")
            else:  # pyarrow reads the files (through ``fs``: local or an object store), not DuckDB
                con.register(name, _dataset(fs, base, name))
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        rel = con.sql(sql)
        # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
        return pl.DataFrame() if rel is None else cast(pl.DataFrame, pl.from_arrow(rel.to_arrow_table()))
    except duckdb.Error as exc:
        text = str(exc).strip().splitlines()
        raise SessiongraphError(f"query failed: {text[0] if text else type(exc).__name__}") from None
    finally:
        con.close()


# -- loading into a store ----------------------------------------------------------------------


@dataclass
class LoadSummary:
    db: str
    dataset: str
    rows: dict[str, int] = field(default_factory=dict)  # store table -> rows loaded

    def to_dict(self) -> dict:
        return asdict(self)


def load(dataset_uri: str | os.PathLike, *, db: str | None = None) -> LoadSummary:
    """Load a dataset into a new (empty) store so ``runs``, ``show``, ``sessions`` and ``query`` work.

    The dataset holds no tool calls or file events (nor, under ``metadata_only``, any text), so the
    store cannot re-run inference from it: its frame tables get what the dataset has (``sessions``
    from ``attempts``, which keeps every session column; ``usage``; ``outcomes``), and its inference
    tables (``runs``, ``run_sessions``, ``edges``/``lineage``, ``artifacts``) are loaded as exported.
    ``steps`` and ``commits`` come back too; ``calls``, ``file_events``, ``launches``, ``diagnostics``, ``documents`` and
    ``texts`` stay empty. Ingesting logs into
    such a store later re-runs inference from its frames alone, which drops the loaded edges that
    need calls or file events: load into a store of its own.
    """
    from sessiongraph.inference import edges as inf
    from sessiongraph.ingest.frames import COMMITS, OUTCOMES, SESSIONS, STEPS, USAGE

    fs, base = filesystem(dataset_uri)
    _tables_present(fs, base)
    # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
    read = {name: cast(pl.DataFrame, pl.from_arrow(read_table(dataset_uri, name))) for name in TABLES}
    sessions = read["attempts"].with_columns(pl.col("harness").replace(dataset.UNKNOWN, None))
    frames = {
        "sessions": _fit(sessions, SESSIONS),
        # a request is a null scope in the store (the frames contract), "request" in the dataset
        "usage": _fit(read["usage"], USAGE).with_columns(
            pl.when(pl.col("scope") == "request").then(None).otherwise(pl.col("scope")).alias("scope")
        ),
        "outcomes": _fit(read["outcomes"], OUTCOMES),
        "steps": _fit(read["steps"], STEPS),
        "commits": _fit(read["commits"], COMMITS),
    }
    inferred = inf.Inferred(
        edges=_fit(read["edges"], inf.EDGES),
        runs=_fit(read["runs"], inf.RUNS),
        run_sessions=_fit(read["sessions"].filter(pl.col("run_id").is_not_null()), inf.RUN_SESSIONS),
        artifacts=_fit(read["artifacts"], inf.ARTIFACTS),
    )
    with Store(db) as store:
        if store.con.execute("SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM runs)").fetchall()[0][0]:
            raise SessiongraphError(
                f"store {store.path} already holds sessions or runs; load into a new --db file", path=str(store.path)
            )
        summary = LoadSummary(db=str(store.path), dataset=os.fspath(dataset_uri))
        ingest_id = store.begin_ingest([os.fspath(dataset_uri)])
        con = store.con
        con.execute("BEGIN TRANSACTION")
        try:
            for name, df in frames.items():
                if df.height:
                    con.register("loaded_rows", df.to_arrow())
                    con.execute(f"INSERT INTO {name} BY NAME SELECT *, {ingest_id} AS ingest_id FROM loaded_rows")
                    con.unregister("loaded_rows")
                summary.rows[name] = df.height
            con.execute("INSERT OR REPLACE INTO sessiongraph_meta VALUES ('loaded_from', ?)", [os.fspath(dataset_uri)])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        store.write_inference(inferred)
        costs.reprice(store)  # the requests priced as an ingest prices them
        store.finish_ingest(ingest_id, read=0, unchanged=0, skipped=0)
        for name in ("runs", "run_sessions", "edges", "lineage", "artifacts"):
            summary.rows[name] = int(con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0])
    return summary


def _fit(df: pl.DataFrame, schema: pl.Schema) -> pl.DataFrame:
    """The columns of ``schema`` that ``df`` has, typed; the others null."""
    return df.select([pl.col(c).cast(t) if c in df.columns else pl.lit(None, t).alias(c) for c, t in schema.items()])
