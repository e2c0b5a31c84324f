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
from sessiongraph.store import Store
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
) -> TrajectorySummary:
    """Write the store's trajectories under ``out`` as splits (see the module doc)."""
    if fmt not in FORMATS:
        raise SessiongraphError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if by not in BY:
        raise SessiongraphError(f"unknown --by {by!r}; use one of {', '.join(BY)}")
    fractions = parse_split(split)
    with Store(db, read_only=True) as store:
        n_steps, n_texts = store.con.execute(
            "SELECT (SELECT count(*) FROM steps), (SELECT count(*) FROM texts)"
        ).fetchall()[0]
        if n_steps and not n_texts:
            raise SessiongraphError(
                f"store {store.path} holds no step text: ingest with --privacy full to export trajectories",
                path=str(store.path),
            )
        sessions, attempts, _ = dataset.session_tables(store)
        rows = messages.build(store, sessions, attempts)
        with_text = rows.height
        all_sessions = store.con.execute("SELECT count(DISTINCT session_id) FROM steps").fetchall()[0][0]
        runs = None
        if by == "run":
            rows = rows.with_columns(pl.col("started_at", "ended_at").cast(dataset.TS))
            runs = run_trajectories.build(store, rows)
    summary = TrajectorySummary(out=os.fspath(out), format=fmt, split=fractions, seed=seed, by=by)
    summary.without_text = int(all_sessions) - with_text
    if runs is not None:
        _export_runs(runs, out, summary, fmt, since=since, until=until, harnesses=harnesses, min_steps=min_steps)
        return summary
    rows = rows.with_columns(pl.col("started_at", "ended_at").cast(dataset.TS), harness=pl.col("_harness"))
    keep = _kept(since, until, harnesses, min_steps)
    kept = rows.filter(keep)
    summary.filtered = rows.height - kept.height
    kept = kept.sort("run_id", "started_at", "session_id", nulls_last=True)
    unique = kept.unique("trajectory_sha256", keep="first", maintain_order=True)
    summary.duplicates = kept.height - unique.height
    key = pl.coalesce("run_id", "session_id")
    unique = unique.with_columns(_split=key.map_elements(lambda k: assign(k, fractions, seed), return_dtype=pl.String))
    columns = [*TRAJECTORIES]
    columns.insert(columns.index("model"), "harness")
    os.makedirs(out, exist_ok=True)
    for name in fractions:
        part = unique.filter(pl.col("_split") == name).sort("run_id", "started_at", "session_id", nulls_last=True)
        part = part.select(*[pl.col(c).cast(TRAJECTORIES.get(c, pl.String)) for c in columns])
        path = os.path.join(out, f"{name}.{fmt}")
        _write(part, path, fmt)
        summary.rows[name] = part.height
        summary.runs[name] = part["run_id"].n_unique()
        summary.files.append(os.path.basename(path))
    _manifest(out, summary)
    return summary


def _export_runs(
    runs: pl.DataFrame,
    out: str | os.PathLike,
    summary: TrajectorySummary,
    fmt: str,
    *,
    since: datetime | None,
    until: datetime | None,
    harnesses: tuple[str, ...],
    min_steps: int,
) -> None:
    """One row per run (run_trajectories); the filters keep or leave a run whole."""
    keep = _kept(since, until, harnesses, min_steps)
    kept = runs.filter(keep)
    summary.filtered = runs.height - kept.height
    kept = kept.with_columns(
        _split=pl.col("run_id").map_elements(lambda k: assign(k, summary.split, summary.seed), return_dtype=pl.String)
    )
    os.makedirs(out, exist_ok=True)
    for name in summary.split:
        part = kept.filter(pl.col("_split") == name).sort("started_at", "run_id", nulls_last=True)
        part = part.select(*run_trajectories.RUN_TRAJECTORIES)
        path = os.path.join(out, f"{name}.{fmt}")
        _write(part, path, fmt, table="run_trajectories")
        summary.rows[name] = summary.runs[name] = part.height
        summary.files.append(os.path.basename(path))
    _manifest(out, summary)


def _write(df: pl.DataFrame, path: str, fmt: str, table: str = "trajectories") -> None:
    tmp = path + ".tmp"
    if fmt == "jsonl":
        with open(tmp, "wb") as fh:
            for row in df.iter_rows(named=True):
                fh.write(orjson.dumps(row, option=orjson.OPT_UTC_Z) + b"\n")
    else:
        import pyarrow as pa

        sch = pa.schema([pa.field(c, arrow_type(t)) for c, t in df.schema.items()])
        table = (
            df.to_arrow()
            .cast(sch)
            .replace_schema_metadata(
                {
                    b"sessiongraph.schema_version": SCHEMA_VERSION.encode(),
                    b"sessiongraph.table": table.encode(),
                    b"sessiongraph.producer": f"sessiongraph {__version__}".encode(),
                }
            )
        )
        pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)  # a reader never sees half a file


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
