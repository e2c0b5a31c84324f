"""Trajectories: each session's steps as a conversation a trainer loads directly.

``build`` turns the store's ``steps`` and ``texts`` (a ``--privacy full`` ingest) into one row per
session: ``messages`` in the conversational format Hugging Face ``datasets`` and TRL read
(``role``, ``content``, assistant ``tool_calls`` with ``id``/``type``/``function{name,
arguments}``, tool messages with ``tool_call_id``), and labels beside it (run, parent and the
spawning call, role, model, tokens, dollars, errors, outcome). Steps map onto messages as:

- ``prompt`` and ``interrupt`` -> ``user``; ``context`` and ``compaction`` -> ``system``;
- consecutive ``text``/``thinking``/``tool_call`` steps -> one ``assistant`` message (``content``,
  ``reasoning_content``, ``tool_calls``);
- ``tool_result`` -> ``tool`` (``tool_call_id``, ``name``); the result of a command a person ran
  (no assistant call names it) and that command -> ``user``.

Messages follow ``seq``: a branched session (pi, oh-my-pi, Claude rewinds) keeps its branches one
after the other; ``steps.parent_seq`` tells them apart. Only sessions whose every file was
ingested under ``full`` have text; the others are counted, never written with empty content.

``export`` writes the rows as splits (``DIR/<split>.parquet`` or ``.jsonl`` and
``DIR/manifest.json``): a run's sessions all land in one split, chosen from a hash of the seed and
the run id, so no run leaks across splits through its subagents; identical trajectories (same
``trajectory_sha256``) are written once.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import orjson
import polars as pl
import pyarrow.parquet as pq

from sessiongraph import __version__, dataset
from sessiongraph.dataset import MESSAGE, SCHEMA_VERSION, TRAJECTORIES, arrow_type
from sessiongraph.errors import SessiongraphError
from sessiongraph.store import Store

DEFAULT_SPLIT = "train=0.9,validation=0.05,test=0.05"
FORMATS = ("parquet", "jsonl")
MESSAGES = pl.List(MESSAGE)
MANIFEST = "manifest.json"

# Sessions whose every file holds text (ingested under full).
_WITH_TEXT = """
SELECT s.session_id FROM sessions s JOIN ingested_files f USING (source_path)
GROUP BY s.session_id HAVING bool_and(f.privacy = 'full')
"""

_STEPS = """
SELECT s.session_id, s.role, s.kind, s.call_id, s.tool, s.is_error, s.content_sha256, t.text, t.cut_chars
FROM steps s
LEFT JOIN texts t USING (source_path, session_id, seq)
LEFT JOIN (SELECT source_path, min(started_at) AS started_at FROM sessions GROUP BY source_path) f USING (source_path)
WHERE s.session_id IN ({with_text})
ORDER BY s.session_id, f.started_at NULLS LAST, s.source_path, s.seq
"""

# The call that spawned or launched each session, and that call's step in its parent.
_SPAWNS = """
WITH sp AS (
    SELECT m.session_id, m.parent_session_id, min(e.src_call_id) AS spawn_call_id
    FROM run_sessions m
    JOIN all_edges e ON e.dst = m.session_id AND e.src = m.parent_session_id AND e.kind = m.via
    WHERE e.src_call_id IS NOT NULL
    GROUP BY ALL
)
SELECT sp.session_id, sp.spawn_call_id, min(p.seq) AS spawn_seq
FROM sp LEFT JOIN steps p
       ON p.session_id = sp.parent_session_id AND p.call_id = sp.spawn_call_id AND p.kind = 'tool_call'
GROUP BY ALL
"""


def build(store: Store, sessions: pl.DataFrame, attempts: pl.DataFrame) -> pl.DataFrame:
    """One row per session with text: labels (from ``dataset.session_tables``) and messages, with
    the ``_harness`` partition key."""
    steps = store.query(_STEPS.format(with_text=_WITH_TEXT))
    convo = _conversations(steps)
    status = (
        attempts.sort("session_id", "n")
        .group_by("session_id", maintain_order=True)
        .agg(pl.col("status").last(), pl.col("outcome_tier").last())
    )
    spawns = store.query(_SPAWNS)
    return (
        convo.join(sessions, on="session_id", how="left")
        .join(status, on="session_id", how="left")
        .join(spawns, on="session_id", how="left")
    )


def _conversations(steps: pl.DataFrame) -> pl.DataFrame:
    rows = []
    acc: _Conversation | None = None
    for step in steps.iter_rows(named=True):
        if acc is None or step["session_id"] != acc.session_id:
            if acc is not None:
                rows.append(acc.row())
            acc = _Conversation(step["session_id"])
        acc.add(step)
    if acc is not None:
        rows.append(acc.row())
    cols: dict[str, Any] = {
        "session_id": pl.String,
        "n_steps": pl.Int64,
        "n_tool_calls": pl.Int64,
        "n_errors": pl.Int64,
        "cut_chars": pl.Int64,
        "trajectory_sha256": pl.String,
        "messages": MESSAGES,
    }
    return pl.DataFrame(rows, schema=pl.Schema(cols), orient="row")


class _Conversation:
    """Messages of one session, built step by step."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.messages: list[dict] = []
        self.calls: set[str] = set()  # call ids an assistant message named
        self.hash = hashlib.sha256()
        self.n_steps = self.n_calls = self.n_errors = self.cut = 0

    def add(self, step: dict) -> None:
        role, kind, text = step["role"], step["kind"], step["text"]
        self.n_steps += 1
        self.cut += step["cut_chars"] or 0
        self.hash.update(f"{role}\x1f{kind}\x1f{step['tool'] or ''}\x1f{step['content_sha256'] or ''}\n".encode())
        if role == "assistant":
            self._assistant(step)
        elif kind == "tool_result" and step["call_id"] in self.calls:
            self.n_errors += bool(step["is_error"])
            self._append("tool", text, tool_call_id=step["call_id"], name=step["tool"])
        elif kind == "tool_result":  # a command a person ran: its output is theirs to show
            self.n_errors += bool(step["is_error"])
            self._append("user", text)
        else:
            self._append("system" if role == "system" else "user", text)

    def _assistant(self, step: dict) -> None:
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant":
            last = self._append("assistant", None)
        text = step["text"]
        if step["kind"] == "tool_call":
            self.n_calls += 1
            call_id = step["call_id"] or f"{self.session_id}#{self.n_steps}"
            self.calls.add(call_id)
            call = {"id": call_id, "type": "function", "function": {"name": step["tool"], "arguments": text}}
            last["tool_calls"] = [*(last["tool_calls"] or []), call]
        elif step["kind"] == "thinking":
            last["reasoning_content"] = _join(last["reasoning_content"], text)
        else:
            last["content"] = _join(last["content"], text)

    def _append(self, role: str, content: str | None, **extra) -> dict:
        msg = {
            "role": role,
            "content": content,
            "reasoning_content": None,
            "tool_calls": None,
            "tool_call_id": None,
            "name": None,
        }
        msg.update(extra)
        self.messages.append(msg)
        return msg

    def row(self) -> tuple:
        return (
            self.session_id,
            self.n_steps,
            self.n_calls,
            self.n_errors,
            self.cut,
            self.hash.hexdigest(),
            self.messages,
        )


def _join(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    return a if b is None else f"{a}\n{b}"


# -- export trajectories --------------------------------------------------------------------------


@dataclass
class TrajectorySummary:
    out: str
    format: str
    split: dict[str, float]
    seed: int
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


def export(
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
) -> TrajectorySummary:
    """Write the store's trajectories under ``out`` as splits (see the module doc)."""
    if fmt not in FORMATS:
        raise SessiongraphError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
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
        rows = build(store, sessions, attempts)
        with_text = rows.height
        all_sessions = store.con.execute("SELECT count(DISTINCT session_id) FROM steps").fetchall()[0][0]
    summary = TrajectorySummary(out=os.fspath(out), format=fmt, split=fractions, seed=seed)
    summary.without_text = int(all_sessions) - with_text
    rows = rows.with_columns(pl.col("started_at", "ended_at").cast(dataset.TS), harness=pl.col("_harness"))
    keep = pl.lit(True)
    if since is not None:
        keep &= pl.col("ended_at").is_null() | (pl.col("ended_at") >= since)
    if until is not None:
        keep &= pl.col("started_at").is_null() | (pl.col("started_at") <= until)
    if harnesses:
        keep &= pl.col("harness").is_in(list(harnesses))
    if min_steps:
        keep &= pl.col("n_steps") >= min_steps
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


def _write(df: pl.DataFrame, path: str, fmt: str) -> None:
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
                    b"sessiongraph.table": b"trajectories",
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
