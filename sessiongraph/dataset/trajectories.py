"""Trajectories: each session's steps as a conversation a trainer loads directly.

``messages.build`` turns the store's ``steps`` and ``texts`` (a ``--privacy full`` ingest) into one row per
session: ``messages`` in the conversational format Hugging Face ``datasets`` and TRL read
(``role``, ``content``, assistant ``tool_calls`` with ``id``/``type``/``function{name,
arguments}``, tool messages with ``tool_call_id``), and labels beside it (run, parent and the
spawning call, role, model, tokens, dollars, errors, outcome). Steps map onto messages so that
every conversation is one a chat template accepts (tests/test_chat_templates.py renders them all):

- system-role steps (``context``, ``compaction``) before the first user or assistant message ->
  one leading ``system`` message; later ones (Codex environment and developer messages, notices,
  compaction summaries) -> user-side text ``<kind>\ntext\n</kind>`` (``<context>``, ``<compaction>``);
- ``prompt``, ``interrupt`` and ``context`` user steps -> ``user``; consecutive user-side steps -> one
  ``user`` message, their texts joined by a blank line;
- consecutive ``text``/``thinking``/``tool_call`` steps -> one ``assistant`` message (``content``,
  ``reasoning_content``, ``tool_calls``); an assistant message before any user message gets an empty
  ``user`` message before it (a forked or resumed session whose prompt is not in its own log);
- ``tool_result`` -> ``tool`` (``tool_call_id``, ``name``) while the assistant turn that called it
  goes on; a result after that turn ended (a user message came between) -> user-side
  ``<tool_result call_id="...">``; the result of a command a person ran (no assistant call names
  it) and that command -> ``user``.

The steps keep the raw order and roles (``steps``: one row per step, ``seq``).

Messages follow ``seq``: a branched session (pi, oh-my-pi, Claude rewinds) keeps its branches one
after the other; ``steps.parent_seq`` tells them apart. Only sessions whose every file was
ingested under ``full`` have text; the others are counted, never written with empty content.

``export_trajectories`` writes the rows as splits (``DIR/<split>.parquet`` or ``.jsonl`` and
``DIR/manifest.json``): a run's sessions all land in one split, chosen from a hash of the seed and
the run id, so no run leaks across splits through its subagents; identical trajectories (same
``trajectory_sha256``) are written once. ``by="run"`` writes a row per run instead
(``run_trajectories``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime

import orjson
import polars as pl
import pyarrow.parquet as pq

from sessiongraph.dataset import messages, run_trajectories
from sessiongraph.dataset import tables as dataset
from sessiongraph.dataset.tables import SCHEMA_VERSION, TRAJECTORIES, arrow_type
from sessiongraph.errors import SessiongraphError
from sessiongraph.store import Store, batches
from sessiongraph.version import __version__

DEFAULT_SPLIT = "train=0.9,validation=0.05,test=0.05"
FORMATS = ("parquet", "jsonl")
BY = ("session", "run")  # a row per session, or per run (run_trajectories)
MANIFEST = "manifest.json"

# -- export trajectories --------------------------------------------------------------------------


@dataclass
class TrajectorySummary:
    out: str
    format: str
    split: dict[str, float]
    seed: int
    by: str = "session"  # a row per session or per run
    rows: dict[str, int] = field(default_factory=dict)  # split -> trajectories written
    runs: dict[str, int] = field(default_factory=dict)  # split -> runs
    duplicates: int = 0  # trajectories equal to one already written (same trajectory_sha256)
    filtered: int = 0  # left out by --since/--until/--harness/--min-steps
    without_text: int = 0  # sessions of files ingested under metadata_only
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_split(text: str) -> dict[str, float]:
    """``train=0.9,validation=0.05,test=0.05`` -> fractions that sum to 1."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        try:
            frac = float(value)
        except ValueError:
            frac = -1.0
        if not name or not name.replace("_", "").replace("-", "").isalnum() or frac < 0 or name in out:
            raise SessiongraphError(f"bad --split {text!r}: use name=fraction,... (e.g. {DEFAULT_SPLIT})")
        out[name] = frac
    if abs(sum(out.values()) - 1.0) > 1e-6:
        raise SessiongraphError(f"bad --split {text!r}: the fractions add up to {sum(out.values()):g}, not 1")
    return out


def assign(key: str, split: dict[str, float], seed: int) -> str:
    """The split of a run: a point in [0, 1) from sha256(seed, run id), placed on the fractions."""
    digest = hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    edge = 0.0
    names = list(split)
    for name in names:
        edge += split[name]
        if point < edge:
            return name
    return names[-1]


# Step text read from the store per group of whole runs (its messages, a few times this size, are
# what an export holds at once): peak memory is the largest of a run and this, plus the sessions'
# labels and DuckDB's capped cache (batches.EXPORT_MEMORY_MB), not the store.
BATCH_BYTES = 8_000_000


def export_trajectories(
    out: str | os.PathLike,
    *,
    db: str | None = None,
    split: str = DEFAULT_SPLIT,
    seed: int = 0,
    fmt: str = "parquet",
    since: datetime | None = None,
    until: datetime | None = None,
    harnesses: tuple[str, ...] = (),
    min_steps: int = 0,
    by: str = "session",
    batch_bytes: int = BATCH_BYTES,
) -> TrajectorySummary:
    """Write the store's trajectories under ``out`` as splits (see the module doc).

    The store is read in groups of whole runs of about ``batch_bytes`` of step text, in the order
    the splits are written (each split file is appended to group by group): the same rows and
    order as one read of everything, in the memory of one group."""
    if fmt not in FORMATS:
        raise SessiongraphError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if by not in BY:
        raise SessiongraphError(f"unknown --by {by!r}; use one of {', '.join(BY)}")
    fractions = parse_split(split)
    summary = TrajectorySummary(out=os.fspath(out), format=fmt, split=fractions, seed=seed, by=by)
    keep = _kept(since, until, harnesses, min_steps)
    with Store(db, read_only=True) as store, store.capped(batches.EXPORT_MEMORY_MB):
        n_steps, n_texts = store.con.execute(
            "SELECT (SELECT count(*) FROM steps), (SELECT count(*) FROM texts)"
        ).fetchall()[0]
        if n_steps and not n_texts:
            raise SessiongraphError(
                f"store {store.path} holds no step text: ingest with --privacy full to export trajectories",
                path=str(store.path),
            )
        weights = batches.text_bytes(store)
        sessions, attempts = dataset.session_tables(store)
        all_sessions = store.con.execute("SELECT count(DISTINCT session_id) FROM steps").fetchall()[0][0]
        keys, members = _run_order(store, sessions, by)
        labels = messages.labels(store, attempts)
        ctx = run_trajectories.context(store) if by == "run" else None
        index = messages.row_index(store)
        os.makedirs(out, exist_ok=True)
        if by == "run":
            schema = run_trajectories.RUN_TRAJECTORIES
        else:
            columns = [*TRAJECTORIES]
            columns.insert(columns.index("model"), "harness")
            schema = pl.Schema({c: TRAJECTORIES.get(c, pl.String) for c in columns})
        writers = {name: _Writer(os.path.join(out, f"{name}.{fmt}"), fmt, schema, by) for name in fractions}
        try:
            seen: set[str] = set()  # trajectory hashes written: a duplicate in a later group is dropped too
            run_ids: dict[str, set] = {name: set() for name in fractions}
            with_text = 0
            for group in batches.groups(keys, weights, batch_bytes):
                only = [sid for key in group for sid in members[key]]
                rows = messages.build(store, sessions, attempts, only=only, context=labels, rows=index)
                with_text += rows.height
                rows = rows.with_columns(pl.col("started_at", "ended_at").cast(dataset.TS))
                if by == "run":
                    _runs_group(store, rows, ctx, keep, writers, summary)
                else:
                    _sessions_group(rows, keep, writers, summary, seen, run_ids)
                del rows
            for w in writers.values():
                w.close()
        except BaseException:
            for w in writers.values():
                w.abort()
            raise
    summary.without_text = int(all_sessions) - with_text
    for name, w in writers.items():
        summary.rows[name] = w.rows
        summary.runs[name] = w.rows if by == "run" else len(run_ids[name])
        summary.files.append(os.path.basename(w.path))
    _manifest(out, summary)
    return summary


def _run_order(store: Store, sessions: pl.DataFrame, by: str) -> tuple[list[str], dict[str, list[str]]]:
    """The run keys (run id, or session id of a session in no run) in the order the splits are
    written, and each key's sessions with a conversation: decided before any text is read."""
    conversed = store.query(messages.CONVERSED)
    if not conversed.height:
        return [], {}
    keyed = conversed.join(sessions.select("session_id", "run_id", "started_at"), on="session_id", how="left")
    keyed = keyed.with_columns(pl.col("started_at").cast(dataset.TS), _run=pl.coalesce("run_id", "session_id"))
    if by == "run":  # a run's row: its first conversation's start (run_trajectories), then its id
        order = keyed.group_by("_run").agg(pl.col("started_at").min()).sort("started_at", "_run", nulls_last=True)
    else:  # the session rows' own order, each run's sessions together
        order = keyed.sort("run_id", "started_at", "session_id", nulls_last=True).unique("_run", maintain_order=True)
    members = dict(keyed.group_by("_run").agg(pl.col("session_id")).iter_rows())
    return order["_run"].to_list(), members


def _sessions_group(
    rows: pl.DataFrame, keep: pl.Expr, writers: dict, summary: TrajectorySummary, seen: set[str], run_ids: dict
) -> None:
    rows = rows.with_columns(harness=pl.col("_harness"))
    kept = rows.filter(keep)
    summary.filtered += rows.height - kept.height
    kept = kept.sort("run_id", "started_at", "session_id", nulls_last=True)
    unique = kept.unique("trajectory_sha256", keep="first", maintain_order=True)
    unique = unique.filter(~pl.col("trajectory_sha256").is_in(list(seen)))
    summary.duplicates += kept.height - unique.height
    seen.update(unique["trajectory_sha256"].to_list())
    key = pl.coalesce("run_id", "session_id")
    unique = unique.with_columns(
        _split=key.map_elements(lambda k: assign(k, summary.split, summary.seed), return_dtype=pl.String)
    )
    for name, w in writers.items():
        part = unique.filter(pl.col("_split") == name)
        run_ids[name].update(part["run_id"].to_list())
        w.write(part.select(*[pl.col(c).cast(t) for c, t in w.schema.items()]))


def _runs_group(
    store: Store, rows: pl.DataFrame, ctx, keep: pl.Expr, writers: dict, summary: TrajectorySummary
) -> None:
    """One row per run (run_trajectories); the filters keep or leave a run whole."""
    runs = run_trajectories.build(store, rows, ctx)
    kept = runs.filter(keep)
    summary.filtered += runs.height - kept.height
    kept = kept.with_columns(
        _split=pl.col("run_id").map_elements(lambda k: assign(k, summary.split, summary.seed), return_dtype=pl.String)
    )
    for name, w in writers.items():
        part = kept.filter(pl.col("_split") == name).sort("started_at", "run_id", nulls_last=True)
        w.write(part.select(*run_trajectories.RUN_TRAJECTORIES))


class _Writer:
    """One split file, appended to group by group (a Parquet row group each), renamed into place
    when complete: a reader never sees half a file."""

    def __init__(self, path: str, fmt: str, schema: pl.Schema, by: str) -> None:
        self.path, self.fmt, self.schema, self.rows = path, fmt, schema, 0
        self.tmp = path + ".tmp"
        if fmt == "jsonl":
            self._fh = open(self.tmp, "wb")
            return
        import pyarrow as pa

        table = "run_trajectories" if by == "run" else "trajectories"
        self.arrow = pa.schema(
            [pa.field(c, arrow_type(t)) for c, t in schema.items()],
            metadata={
                b"sessiongraph.schema_version": SCHEMA_VERSION.encode(),
                b"sessiongraph.table": table.encode(),
                b"sessiongraph.producer": f"sessiongraph {__version__}".encode(),
            },
        )
        self._pq = pq.ParquetWriter(self.tmp, self.arrow, compression="zstd")

    def write(self, df: pl.DataFrame) -> None:
        if not df.height:
            return
        self.rows += df.height
        if self.fmt == "jsonl":
            for row in df.iter_rows(named=True):
                self._fh.write(orjson.dumps(row, option=orjson.OPT_UTC_Z) + b"\n")
        else:
            self._pq.write_table(df.to_arrow().cast(self.arrow))

    def close(self) -> None:
        if self.fmt == "jsonl":
            self._fh.close()
        else:
            self._pq.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        try:
            if self.fmt == "jsonl":
                self._fh.close()
            else:
                self._pq.close()
        except Exception:  # noqa: BLE001 (already failing: the first error is the one raised)
            pass
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


def _manifest(out: str | os.PathLike, summary: TrajectorySummary) -> None:
    """What the export wrote (no times: exporting the same store again gives the same bytes);
    files of an earlier export that this one did not write are removed."""
    path = os.path.join(out, MANIFEST)
    try:
        with open(path, "rb") as fh:
            before = orjson.loads(fh.read()).get("files", [])
    except (OSError, orjson.JSONDecodeError, AttributeError):
        before = []
    for stale in set(before) - set(summary.files):
        if isinstance(stale, str) and os.path.basename(stale) == stale:
            try:
                os.remove(os.path.join(out, stale))
            except FileNotFoundError:
                pass
    doc = {"schema_version": SCHEMA_VERSION, **{k: v for k, v in summary.to_dict().items() if k != "out"}}
    with open(path + ".tmp", "wb") as fh:
        fh.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    os.replace(path + ".tmp", path)


def _kept(since, until, harnesses, min_steps) -> pl.Expr:
    """The rows (sessions or runs) the export's --since/--until/--harness/--min-steps keep."""
    keep = pl.lit(True)
    if since is not None:
        keep &= pl.col("ended_at").is_null() | (pl.col("ended_at") >= since)
    if until is not None:
        keep &= pl.col("started_at").is_null() | (pl.col("started_at") <= until)
    if harnesses:
        keep &= pl.col("harness").is_in(list(harnesses))
    if min_steps:
        keep &= pl.col("n_steps") >= min_steps
    return keep
