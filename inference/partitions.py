"""Partitions: the stored files the passes must see together, so that an ingest re-infers only
what its changed files can reach, one partition group at a time.

Every pass relates sessions only through a few kinds of key, and each file's keys are kept in
the store (``partition_keys``, written with its frames):

- ``s:<session id>`` and ``s:<harness>:<native id>`` for every session a file mentions, and the
  same form for the ids it points at: a recorded parent (spawn), a fork, continuation, cause or
  dependency (continuation), an id printed into a launching call's output (launch), so a
  child, its parent and its launcher share a key; a child session a spawn call names where the
  child records no parent (oh-my-opencode, spawn.NAMED_BY_CALL), in each form that session may
  be logged under;
- ``g:<slug>``: Claude sessions of one slug continue each other;
- ``r:<run id>``: a run document's run id, and the run id each session would give a run it
  roots (an imported document of our own export is skipped against it);
- ``l:<harness>|<cwd>``: a launch of that harness's CLI in that cwd (active) and the top-level
  sessions of that harness in that cwd (inactive);
- ``o:<sha256>``: a top-level session's final answer (active) and a shell call's captured output
  (inactive): the launch pass ties the two when they hash the same, in any cwd;
- ``p:<path>``: a file written (active) or read (inactive);
- ``x:<cwd>``: a Codex review or guardian session (active) and the Codex sessions it may serve
  (inactive).

An inactive key links its holders only when some file holds it actively: reads of a file no
session wrote, or sessions in a folder nothing launches from, stay apart. Two files are in one
partition when a chain of linking keys joins them (connected components), so no pass ever pairs
rows of two partitions, and the passes over a group of partitions give exactly the rows they
give over each one alone: a cold ingest infers every partition, a later one only those its
changed files were or are now in. A partition's id is a hash of its first file's path, so the
same files always give the same partitions.
"""

from __future__ import annotations

import hashlib
import traceback
from collections.abc import Callable, Iterable

import polars as pl

from sessiongraph.inference.edges import INFERENCE_DIAGNOSTICS, NOT_NULL, Inferred, conform
from sessiongraph.inference.spawn import NAMED_BY_CALL
from sessiongraph.ingest.frames import NOT_INFERRED, SCHEMAS, Frames

KEYS = pl.Schema({"source_path": pl.String, "key": pl.String, "active": pl.Boolean})
FILE_PARTITIONS = pl.Schema({"source_path": pl.String, "partition_id": pl.String})
SESSION_PARTITIONS = pl.Schema({"session_id": pl.String, "partition_id": pl.String})
# inference_diagnostics as stored: each row says which partition's passes wrote it (a failed
# pass or a skipped document names no session).
STORED_DIAGNOSTICS = pl.Schema([*INFERENCE_DIAGNOSTICS.items(), ("partition_id", pl.String())])
# Tables with a session_id column: every session a file mentions gets its identity key. Steps and
# texts name only sessions of their own file's sessions rows: scanning them (the largest tables,
# a row per event) would add no key.
_WITH_SESSIONS = tuple(name for name, schema in SCHEMAS.items() if "session_id" in schema and name not in NOT_INFERRED)


def key_sql(table: Callable[[str], str]) -> str:
    """DuckDB SQL giving (source_path, key, active) for every file of the frame tables named by
    ``table(frame name)`` (the rows of one write, or stored rows): see the module docstring."""
    t = {name: table(name) for name in SCHEMAS}
    own = [f"SELECT source_path, 's:' || session_id AS key, true AS active FROM {t[n]}" for n in _WITH_SESSIONS]
    refs = [
        f"SELECT source_path, 's:' || harness || ':' || {col}, true FROM {t['sessions']}"
        for col in ("native_id", "parent_native_id", "forked_from_id", "continued_from_id", "caused_by_id")
    ]
    # spawn._named_by_call: the parent's call names the child, which names no parent
    named = [
        f"SELECT source_path, 's:{logged}:' || {col}, true FROM {t['calls']}"
        f" WHERE kind = 'spawn' AND starts_with(session_id, '{harness}:')"
        for harness, (logged_by, routes) in NAMED_BY_CALL.items()
        for logged in logged_by
        for col in routes
    ]
    parts = [
        *own,
        *refs,
        *named,
        f"SELECT source_path, 's:' || harness || ':' || unnest(depends_on), true FROM {t['sessions']}",
        f"SELECT source_path, 'g:' || slug, true FROM {t['sessions']}",
        # the id runs.py gives a run this session roots: stable_id("run_", session_id)
        f"SELECT source_path, 'r:run_' || sha256(session_id)[1:16], true FROM {t['sessions']}",
        f"SELECT source_path, 'r:' || run_id, true FROM {t['documents']}",
        f"SELECT source_path, 'l:' || harness || '|' || rtrim(cwd, '/'), false FROM {t['sessions']}"
        " WHERE session_kind = 'main'",
        f"SELECT source_path, 'l:' || harness || '|' || rtrim(cwd, '/'), true FROM {t['launches']}",
        f"SELECT l.source_path, 's:' || l.harness || ':' || unnest(c.output_ids), true FROM {t['launches']} l"
        f" JOIN {t['calls']} c ON c.session_id = l.session_id AND c.call_id = l.call_id"
        " AND c.source_path = l.source_path AND c.line IS NOT DISTINCT FROM l.line",
        f"SELECT source_path, 'o:' || final_answer_hash, true FROM {t['sessions']} WHERE session_kind = 'main'",
        f"SELECT source_path, 'o:' || output_hash, false FROM {t['calls']} WHERE kind = 'shell'",
        f"SELECT source_path, 'p:' || path, op = 'write' FROM {t['file_events']} WHERE op IN ('read', 'write')",
        # runs._codex_reviewers: a Codex review/guardian session with no parent id serves a Codex
        # session of its cwd
        f"SELECT source_path, 'x:' || cwd, session_kind IN ('review', 'guardian') FROM {t['sessions']}"
        " WHERE harness = 'codex'",
    ]
    union = "\nUNION ALL ".join(parts)
    return (
        f"SELECT source_path, key, bool_or(active) AS active FROM ({union}) AS k(source_path, key, active)"
        " WHERE key IS NOT NULL AND source_path IS NOT NULL GROUP BY source_path, key"
    )


def components(rows: pl.DataFrame) -> pl.DataFrame:
    """``source_path -> partition_id`` for every file of ``rows`` (the keys of a set of files
    closed under linking keys: see :func:`Store.inference_plan`)."""
    files = rows["source_path"].unique().sort()
    index = {p: i for i, p in enumerate(files.to_list())}
    parent = list(range(len(index)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linking = (
        rows.group_by("key")
        .agg(pl.col("active").any(), holders=pl.col("source_path"))
        .filter(pl.col("active") & (pl.col("holders").list.len() > 1))
    )
    for holders in linking["holders"].to_list():
        first = find(index[holders[0]])
        for p in holders[1:]:
            other = find(index[p])
            if other != first:
                # the smaller index (earlier path) stays the root: the root is the first file
                first, other = min(first, other), max(first, other)
                parent[other] = first
    roots = [find(i) for i in range(len(parent))]
    names = files.to_list()
    ids = {r: "p_" + hashlib.sha256(names[r].encode("utf-8", "replace")).hexdigest()[:16] for r in set(roots)}
    return pl.DataFrame({"source_path": names, "partition_id": [ids[r] for r in roots]}, schema=FILE_PARTITIONS)


def groups(parts: pl.DataFrame, max_files: int) -> list[pl.DataFrame]:
    """Whole partitions packed, in path order, into groups of about ``max_files`` files (a
    partition larger than that is a group of its own): the passes run once per group."""
    sizes = parts.group_by("partition_id").agg(pl.len(), first=pl.col("source_path").min()).sort("first")
    out: list[list[str]] = [[]]
    n = 0
    for pid, size in zip(sizes["partition_id"], sizes["len"], strict=True):
        if n and n + size > max_files:
            out.append([])
            n = 0
        out[-1].append(pid)
        n += size
    return [parts.filter(pl.col("partition_id").is_in(ids)) for ids in out if ids]


def infer_group(frames: Frames, files: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The passes over one group of whole partitions (``files``: source_path, partition_id),
    as the tables the store keeps: ``edges`` (lineage included), ``runs``, ``run_sessions``,
    ``artifacts``, ``inference_diagnostics`` (with ``partition_id``), ``session_partitions``."""
    from sessiongraph.inference import infer

    sessions = _sessions(frames, files)
    done = infer(frames)
    diags = _attribute(done.diagnostics, sessions)
    if diags["partition_id"].is_null().any() and files["partition_id"].n_unique() > 1:
        # A row no session names (a failed pass, a skipped document): run each partition alone
        # so that every row is known to be its own.
        parts = [infer_group(_select(frames, f), f) for f in files.partition_by("partition_id")]
        return {name: pl.concat([p[name] for p in parts]) for name in parts[0]}
    if diags["partition_id"].is_null().any():
        unnamed = pl.col("partition_id").is_null() & (pl.col("code") == "pass_failed")
        diags = diags.with_columns(
            detail=pl.when(unnamed).then(pl.col("detail") + f" in {_files(files)}").otherwise("detail"),
            partition_id=pl.lit(files["partition_id"][0]),
        )
    tables = done.tables()
    tables["inference_diagnostics"] = diags
    tables["session_partitions"] = sessions
    tables["file_partitions"] = files.cast(FILE_PARTITIONS)
    return tables


def _sessions(frames: Frames, files: pl.DataFrame) -> pl.DataFrame:
    ids = pl.concat([frames.table(n).select("source_path", "session_id") for n in _WITH_SESSIONS])
    return (
        ids.join(files, on="source_path")
        .select("session_id", "partition_id")
        .drop_nulls()
        .unique(maintain_order=True)
        .sort("session_id")
        .cast(SESSION_PARTITIONS)
    )


def _attribute(diags: pl.DataFrame, sessions: pl.DataFrame) -> pl.DataFrame:
    return conform(diags.join(sessions, on="session_id", how="left", maintain_order="left"), STORED_DIAGNOSTICS)


def _select(frames: Frames, files: pl.DataFrame) -> Frames:
    paths = files["source_path"].implode()
    return Frames(**{n: df.filter(pl.col("source_path").is_in(paths)) for n, df in frames.tables().items()})


class Unstorable(ValueError):
    """The passes gave a row the store cannot hold (a null in a NOT NULL column)."""


def _check(tables: dict[str, pl.DataFrame]) -> None:
    for name, columns in NOT_NULL.items():
        df = tables[name]
        for col in columns:
            if df[col].null_count():
                raise Unstorable(f"{name}.{col} null")


def _files(files: pl.DataFrame, most: int = 3) -> str:
    paths = files["source_path"].unique().sort().to_list()
    more = f" and {len(paths) - most} more" if len(paths) > most else ""
    return ", ".join(paths[:most]) + more


def infer_safely(frames: Frames, files: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """:func:`infer_group`, with every failure kept to the partition that caused it: a group that
    raises, or gives rows the store cannot hold, is run again one partition at a time, and a
    partition that still fails stores no inference rows, only a ``pass_failed`` diagnostic naming
    its files (its frames stay stored; every other partition is inferred as usual)."""
    try:
        tables = infer_group(frames, files)
        _check(tables)
        return tables
    except Exception as exc:  # noqa: BLE001 - one failing partition must not lose the others
        if files["partition_id"].n_unique() > 1:
            return concat(infer_safely(_select(frames, f), f) for f in files.partition_by("partition_id"))
        where = traceback.extract_tb(exc.__traceback__)[-1]
        # Our own message names only a table and column; another exception's may quote log text.
        what = str(exc) if isinstance(exc, Unstorable) else f"{type(exc).__name__} at {where.name}:{where.lineno}"
        diags = (
            files.select("partition_id")
            .unique()
            .select(
                pl.lit("partitions").alias("pass"),
                pl.lit("pass_failed").alias("code"),
                pl.lit(None, pl.String).alias("session_id"),
                pl.lit(None, pl.String).alias("call_id"),
                pl.lit(f"{what}; no runs or edges inferred for {_files(files)}").alias("detail"),
                pl.lit(1, pl.Int64).alias("count"),
                "partition_id",
            )
        )
        tables = Inferred().tables()
        tables["inference_diagnostics"] = conform(diags, STORED_DIAGNOSTICS)
        tables["session_partitions"] = _sessions(frames, files)
        tables["file_partitions"] = files.cast(FILE_PARTITIONS)
        return tables


def concat(results: Iterable[dict[str, pl.DataFrame]]) -> dict[str, pl.DataFrame]:
    out: dict[str, list[pl.DataFrame]] = {}
    for r in results:
        for name, df in r.items():
            out.setdefault(name, []).append(df)
    return {name: pl.concat(dfs) for name, dfs in out.items()}
