"""Each session's steps as a conversation a trainer loads directly: the ``messages`` (and counts)
of the dataset's ``trajectories`` table, which ``sessiongraph.dataset.trajectories`` writes as
training splits; its module docstring says how steps map onto messages (one leading system
message, user and assistant alternating, tool messages inside the turn that called them)."""

from __future__ import annotations

import hashlib
from typing import Any

import polars as pl

from sessiongraph.inference.tiers import RANK, rank
from sessiongraph.ingest.frames import END_STATUSES
from sessiongraph.store import Store, batches
from sessiongraph.store.batches import restricted

# A conversation message as Hugging Face datasets and TRL read it (tool calls OpenAI-style).
TOOL_CALL = pl.Struct(
    {"id": pl.String, "type": pl.String, "function": pl.Struct({"name": pl.String, "arguments": pl.String})}
)
MESSAGE = pl.Struct(
    {
        "role": pl.String,
        "content": pl.String,
        "reasoning_content": pl.String,
        "tool_calls": pl.List(TOOL_CALL),
        "tool_call_id": pl.String,
        "name": pl.String,
    }
)
MESSAGES = pl.List(MESSAGE)

# Sessions whose every file holds text (ingested under full).
_WITH_TEXT = """
SELECT s.session_id FROM sessions s JOIN ingested_files f USING (source_path)
GROUP BY s.session_id HAVING bool_and(f.privacy = 'full')
"""

# The sessions ``build`` gives a row: those with text and at least one step (no text read).
CONVERSED = f"SELECT DISTINCT session_id FROM steps WHERE session_id IN ({_WITH_TEXT})"

# {steps_rows} and {texts_rows}: conditions on the two tables' rowid that let DuckDB read only a
# group's blocks (batches.RowIndex); TRUE reads them whole.
_STEPS = """
SELECT s.session_id, s.role, s.kind, s.call_id, s.tool, s.is_error, s.content_sha256, t.text, t.cut_chars
FROM (SELECT * FROM steps WHERE {steps_rows}) s
LEFT JOIN (SELECT * FROM texts WHERE {texts_rows}) t USING (source_path, session_id, seq)
LEFT JOIN (SELECT source_path, min(started_at) AS started_at FROM sessions GROUP BY source_path) f USING (source_path)
WHERE s.session_id IN ({with_text}){only}
ORDER BY s.session_id, f.started_at NULLS LAST, s.source_path, s.seq
"""

# The tables a group's conversations are read from (batches.RowIndex of them: ``row_index``).
STEP_TABLES = ("steps", "texts")


def row_index(store: Store) -> batches.RowIndex:
    """Where each session's steps and texts lie: read once, then each group reads its own blocks."""
    return batches.RowIndex(store, STEP_TABLES)


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


# A shell command that runs a test suite, by the runner's name (RE2, as DuckDB matches it).
TEST_COMMAND = (
    r"(^|[\s;&|(/])("
    r"pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest"
    r"|python[0-9.]*\s+-m\s+(pytest|unittest)"
    r"|(npm|pnpm|yarn|bun)\s+(run\s+)?test"
    r"|(go|cargo|dotnet|mix|deno|swift|zig)\s+test"
    r"|make\s+(test|check)|\.?/?gradlew?\s+test|mvn\s+test"
    r")($|[\s;&|)])"
)

# Per session: its test commands with an exit code, and the last one's (by start, then log line).
_TESTS = """
SELECT session_id, count(*) AS n_test_runs,
       last(exit_code ORDER BY started_at NULLS FIRST, line) = 0 AS tests_passed,
       max(coalesce(ended_at, started_at)) AS _last_test_at
FROM calls
WHERE kind = 'shell' AND exit_code IS NOT NULL AND regexp_matches(command, ?)
GROUP BY 1
"""


# The commits and PRs each session made (the store's commits; a pushed branch is neither), one
# key per commit hash or PR URL: a PR both gh pr create and a pr-link record name is one PR.
_MADE = """
SELECT c.session_id, coalesce(m.run_id, c.session_id) AS run_id, c.tier, c.in_branch,
       CASE c.kind WHEN 'commit' THEN 'commit:' || c.commit_hash ELSE 'pr:' || c.pr_url END AS made
FROM commits c LEFT JOIN run_sessions m USING (session_id)
WHERE c.kind IN ('commit', 'pr')
"""


def commit_labels(store: Store, by: str) -> pl.DataFrame:
    """Per ``by`` (``session_id``, or ``run_id``: a session in no run is its own): ``n_commits``
    (commits and PRs made), ``commits_tier`` (the strongest tier among them) and
    ``commits_in_branch``: whether every commit among them that ``ingest --git`` checked is still
    in its branch (null when none was checked: no --git, or its repository was not on disk)."""
    return (
        store.query(_MADE)
        .group_by(by)
        .agg(
            n_commits=pl.col("made").n_unique().cast(pl.Int64),
            _rank=rank("tier").min(),
            # in_branch is set on commit rows only (a PR or push row keeps null)
            commits_in_branch=pl.when(pl.col("in_branch").count() > 0).then(pl.col("in_branch").all()),
        )
        .with_columns(
            commits_tier=pl.col("_rank").replace_strict(
                {i: t for t, i in RANK.items()}, default=None, return_dtype=pl.String
            ),
        )
        .select(by, "n_commits", "commits_tier", "commits_in_branch")
    )


def build(
    store: Store,
    sessions: pl.DataFrame,
    attempts: pl.DataFrame,
    *,
    only: list[str] | None = None,
    context: tuple[pl.DataFrame, ...] | None = None,
    rows: batches.RowIndex | None = None,
) -> pl.DataFrame:
    """One row per session with text: labels (from ``dataset.session_tables``) and messages, with
    the ``_harness`` partition key. ``only``: just these sessions (one group of an export that
    reads the store run group by run group); ``context``: :func:`labels`, read once for all groups;
    ``rows``: :func:`row_index`, so that a group reads only its sessions' blocks."""
    if only is None:
        steps = store.query(_STEPS.format(with_text=_WITH_TEXT, only="", steps_rows="TRUE", texts_rows="TRUE"))
    else:
        where = {t: rows.where(t, only) if rows is not None else "TRUE" for t in STEP_TABLES}
        with restricted(store, "_only_sessions", "session_id", only):
            steps = store.query(
                _STEPS.format(
                    with_text=_WITH_TEXT,
                    only=" AND s.session_id IN (SELECT session_id FROM _only_sessions)",
                    steps_rows=where["steps"],
                    texts_rows=where["texts"],
                )
            )
    convo = _conversations(steps)
    del steps  # the step text is in the messages now: hold it once
    status, spawns, tests, made = context if context is not None else labels(store, attempts)
    return (
        convo.join(sessions, on="session_id", how="left")
        .join(status, on="session_id", how="left")
        .join(spawns, on="session_id", how="left")
        .join(tests, on="session_id", how="left")
        .join(made, on="session_id", how="left")
        .with_columns(pl.col("n_test_runs", "n_commits").fill_null(0), *_harness_end_state())
        .drop("end_status")
    )


# Step text read at once by :func:`build_grouped` (its messages are a few times this size).
BATCH_BYTES = 8_000_000


def build_grouped(
    store: Store, sessions: pl.DataFrame, attempts: pl.DataFrame, batch_bytes: int = BATCH_BYTES
) -> pl.DataFrame:
    """``build`` of every session, read in groups of whole runs of about ``batch_bytes`` of step
    text: only the finished rows of all groups are held, not every step's text as well."""
    conversed = store.query(CONVERSED)
    keyed = conversed.join(sessions.select("session_id", "run_id"), on="session_id", how="left")
    keyed = keyed.with_columns(_run=pl.coalesce("run_id", "session_id"))
    members = dict(keyed.group_by("_run").agg(pl.col("session_id")).sort("_run").iter_rows())
    context = labels(store, attempts)
    rows = row_index(store)
    parts = [
        build(
            store, sessions, attempts, only=[sid for key in group for sid in members[key]], context=context, rows=rows
        )
        for group in batches.groups(members, batches.text_bytes(store), batch_bytes)
    ]
    return pl.concat(parts) if parts else build(store, sessions, attempts, only=[], context=context)


def labels(store: Store, attempts: pl.DataFrame) -> tuple[pl.DataFrame, ...]:
    """Per session, no text: its last attempt's status, the call that started it, its test runs,
    the commits and PRs it made."""
    status = (
        attempts.sort("session_id", "n")
        .group_by("session_id", maintain_order=True)
        .agg(pl.col("status").last(), pl.col("outcome_tier").last(), pl.col("end_status").last())
    )
    spawns = store.query(_SPAWNS)
    tests = store.query(_TESTS, [TEST_COMMAND]).with_columns(
        tests_tier=pl.lit("heuristic"), _last_test_at=pl.col("_last_test_at").cast(pl.Datetime("us", "UTC"))
    )
    return status, spawns, tests, commit_labels(store, "session_id")


def _harness_end_state() -> tuple[pl.Expr, pl.Expr]:
    """The harness's own word on how the session ended (``sessions.end_status``: an answer that
    finished its turn, an API error, an interrupt) wins over what the last step suggests; where the
    adapter does not tell (``unknown`` or null), the step-based guess stays."""
    told = pl.col("end_status").is_in(_TOLD_END)
    return (
        pl.when(told).then(pl.col("end_status")).otherwise(pl.col("end_state")).alias("end_state"),
        pl.when(told).then(pl.lit("reported")).otherwise(pl.col("end_state_tier")).alias("end_state_tier"),
    )


# The end statuses a harness writes itself (frames.END_STATUSES without "unknown").
_TOLD_END = [s for s in END_STATUSES if s != "unknown"]


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
        "end_state": pl.String,
        "end_state_tier": pl.String,
    }
    return pl.DataFrame(rows, schema=pl.Schema(cols), orient="row")


class _Conversation:
    """Messages of one session, built step by step."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.messages: list[dict] = []
        self.calls: set[str] = set()  # call ids an assistant message named
        self.open_calls: set[str] = set()  # the calls of the assistant turn going on (its results are tool messages)
        self.hash = hashlib.sha256()
        self.n_steps = self.n_calls = self.n_errors = self.cut = 0
        self.last: tuple[str, str] = ("", "")  # role and kind of the last step

    def add(self, step: dict) -> None:
        role, kind, text = step["role"], step["kind"], step["text"]
        self.n_steps += 1
        self.cut += step["cut_chars"] or 0
        self.last = (role, kind)
        self.hash.update(f"{role}\x1f{kind}\x1f{step['tool'] or ''}\x1f{step['content_sha256'] or ''}\n".encode())
        if role == "assistant":
            self._assistant(step)
        elif kind == "tool_result" and step["call_id"] in self.open_calls:
            self.n_errors += bool(step["is_error"])
            self._append("tool", text, tool_call_id=step["call_id"], name=step["tool"])
        elif kind == "tool_result":  # a command a person ran, or a result after its turn ended
            self.n_errors += bool(step["is_error"])
            if step["call_id"] in self.calls:
                text = _wrap("tool_result", text, call_id=step["call_id"])
            self._user(text)
        elif role == "system" and not self._spoken():
            self._system(text)
        elif role == "system":  # injected mid-session: user-side context, in its own tag
            self._user(_wrap(kind, text))
        else:
            self._user(text)

    def _spoken(self) -> bool:
        """Whether a user or assistant message has been written (a system message must come before)."""
        return any(m["role"] != "system" for m in self.messages)

    def _system(self, text: str | None) -> None:
        if self.messages:  # the leading context steps are one system message
            self.messages[0]["content"] = _join(self.messages[0]["content"], text, "\n\n")
        else:
            self._append("system", text)

    def _user(self, text: str | None) -> None:
        last = self.messages[-1] if self.messages else None
        self.open_calls = set()  # a user message ends the assistant's turn
        if last is not None and last["role"] == "user":  # consecutive user steps are one user message
            last["content"] = _join(last["content"], text, "\n\n")
        else:
            self._append("user", text or "")

    def _assistant(self, step: dict) -> None:
        last = self.messages[-1] if self.messages else None
        if not self._spoken():  # no user message before the first answer: a placeholder one
            self._append("user", "")
            last = None
        if last is None or last["role"] != "assistant":
            last = self._append("assistant", None)
            self.open_calls = set()
        text = step["text"]
        if step["kind"] == "tool_call":
            self.n_calls += 1
            call_id = step["call_id"] or f"{self.session_id}#{self.n_steps}"
            self.calls.add(call_id)
            self.open_calls.add(call_id)
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
            *self._end_state(),
        )

    def _end_state(self) -> tuple[str, str]:
        """How the session ended, from its last step: an interrupt the harness recorded (Codex
        ``turn_aborted``, Claude's "[Request interrupted by user]"), a final answer, or neither
        (a call or result last: the log stops mid-turn)."""
        role, kind = self.last
        if kind == "interrupt":
            return "interrupted", "reported"
        if role == "assistant" and kind in ("text", "thinking"):
            return "completed", "heuristic"
        return "unfinished", "heuristic"


def _join(a: str | None, b: str | None, sep: str = "\n") -> str | None:
    if a is None:
        return b
    return a if b is None else f"{a}{sep}{b}"


def _wrap(tag: str, text: str | None, **attrs: str) -> str:
    """Context a harness injected mid-session, as user-side text: ``<tag attr="v">\\ntext\\n</tag>``."""
    head = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f"<{tag}{head}>\n{text or ''}\n</{tag}>"
