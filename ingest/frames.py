"""The frames contract: the one boundary between adapters and inference passes.

Every adapter's ``parse(path)`` returns a :class:`Frames` whose frames have exactly the schemas
below (an empty frame still carries its schema). ``launches`` and the heuristic shell rows of
``file_events`` are not the adapters' work: ``ingest.shell_facts`` derives them from every
adapter's shell calls, in the worker that read the file. ``sql/schema.sql`` mirrors these
columns; ``tests/test_schema.py`` fails when the two disagree.

Token columns mean the same thing for every harness:
``input_tokens`` is *uncached* input, ``cache_read_tokens`` input served from cache,
``cache_creation_5m_tokens``/``cache_creation_1h_tokens`` the two cache-write buckets (their sum
is ``cache_creation_tokens``), ``output_tokens`` all generated tokens and ``reasoning_tokens``
the part of them spent on reasoning (already included in ``output_tokens``).

A usage row is one API request (``scope`` ``request``, or null) or, where a harness keeps only
totals, a session's (``session``: Crush's sessions table, Factory Droid's ``tokenUsage``, a
Copilot CLI run's shutdown metrics, an imported OCP attempt's cost). Tokens and dollars count a
session row once; only request rows count as requests (the ``n_requests`` macro of
``sql/views/costs.sql``). A token column left null is one the harness does not record (no
total is invented); ``reported_usd`` is the harness's own dollar figure for the row, kept beside
ours (``usd``, priced by ``sessiongraph.costs``) and never added to it.

Outcomes are optional: a log that records how work ended (a Prickle task's state, evidence and
verdicts) fills the ``state``/``waiting_on``/``status``/``outcome_tier`` columns of ``sessions``
and the ``outcomes`` frame, in OCP's own vocabularies; every other adapter leaves them null and
empty, and the OCP writer then says only what a bare log can (``settled_unverified``).

``steps`` is what the agent did, one row per event in the session's order, in one vocabulary for
every harness (``ingest.steps``): no text, only its length and sha256.

No prompt, completion or tool-output text is held here but in ``texts``, which the adapters fill
only when the ingest keeps text (``--privacy full``, credentials masked, cut to a size cap). Two
columns hold log text, ``calls.command`` and ``calls.description``: the adapters fill them, and the
ingest privacy profile (``ingest.privacy``) empties them, or masks the secrets in them, before the
store sees them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal, get_args

import polars as pl
import pyarrow as pa
from polars.datatypes import DataTypeClass

# Annotated so that a schema mixing dtype classes (pl.String) and these instances type-checks.
TS: pl.DataType | DataTypeClass = pl.Datetime("us", "UTC")
STRS: pl.DataType | DataTypeClass = pl.List(pl.String)

# Each vocabulary once, as a Literal for the type checker; the tuple is derived from it.
CallKind = Literal["spawn", "shell", "read", "write", "edit", "patch", "other"]
FileOp = Literal["read", "write", "delete"]
# What a usage row stands for (see the module doc): one request, or a session's totals.
UsageScope = Literal["request", "session"]
# Evidence tiers of an edge, strongest first (inference/tiers.py ranks them).
Tier = Literal["verified", "heuristic", "reported"]
# Privacy profiles (ingest/privacy.py): metadata_only keeps no log text; full keeps it, secrets masked.
Profile = Literal["metadata_only", "full"]
# main: a top-level transcript; subagent: spawned by a tool call (a Claude teammate too);
# workflow: a session of a Claude workflow run (its journal, or one of the agents it ran); the
# rest share a subagent's layout but are not spawns (their tokens are still real spend).
SessionKind = Literal[
    "main",
    "subagent",
    "compaction",
    "warmup",
    "workflow",
    "review",
    "guardian",  # Codex's approval reviewer: judges one planned action of the session it serves
    "helper",  # a background helper a harness ran for a session (Gemini skill extraction)
    "imported",  # a node of an imported run document: its lineage is the document's, not inferred
]

CALL_KINDS: tuple[CallKind, ...] = get_args(CallKind)
FILE_OPS: tuple[FileOp, ...] = get_args(FileOp)
TIERS: tuple[Tier, ...] = get_args(Tier)
PROFILES: tuple[Profile, ...] = get_args(Profile)
SESSION_KINDS: tuple[SessionKind, ...] = get_args(SessionKind)
USAGE_SCOPES: tuple[UsageScope, ...] = get_args(UsageScope)
SESSION_SCOPE: UsageScope = "session"  # the scope of a session's totals (adapters set only this one)

# OCP 0.3 vocabularies (shared/specs/ocp-0.3-digest.md section 5): node state (recommended),
# attempt status (closed; the last six are terminal) and outcome tier (closed).
NODE_STATES: tuple[str, ...] = (
    "queued",
    "working",
    "review",
    "blocked",
    "done",
    "failed",
    "rejected",
    "canceled",
    "settled_unverified",
)
ATTEMPT_STATUSES: tuple[str, ...] = (
    "queued",
    "working",
    "done",
    "failed",
    "rejected",
    "canceled",
    "settled_unverified",
    "lost",
)
TERMINAL_STATUSES: tuple[str, ...] = ATTEMPT_STATUSES[2:]
# Strongest first: checked mechanically, stated by another party, inferred, claimed by the worker.
OUTCOME_TIERS: tuple[str, ...] = ("verified", "reported", "heuristic", "asserted")
# state: one step of a session's state history; evidence: one item offered for an attempt's
# result; verdict: one acceptance criterion judged.
OUTCOME_KINDS: tuple[str, ...] = ("state", "evidence", "verdict")
# How a session's own log ends (sessions.end_status): its last turn finished with an answer, an
# error, or a person's interrupt; unknown while it waits on a tool or a model (still running, or
# cut off), and for logs whose adapter does not tell.
END_STATUSES: tuple[str, ...] = ("completed", "error", "interrupted", "unknown")

SESSIONS = pl.Schema(
    {
        "session_id": pl.String,  # "<harness>:<native id>", a Claude subagent "<...>/<agentId>"
        # 1-based try at this session within its file: a resumed agent that keeps writing to the
        # same transcript (oh-my-pi) is a second attempt. Null means 1.
        "attempt": pl.Int32,
        "harness": pl.String,
        "native_id": pl.String,  # the harness's own session/thread id
        "agent_id": pl.String,  # Claude subagent id (file agent-<id>), null for main transcripts
        "session_kind": pl.String,  # one of SESSION_KINDS
        # how the log is stored: main | inline | flat | nested | workflow | journal | rollout
        "layout": pl.String,
        "harness_version": pl.String,
        "source_path": pl.String,
        "source_bytes": pl.Int64,
        "cwd": pl.String,  # canonical (ingest.paths): what the passes compare
        "cwd_as_written": pl.String,  # the cwd as the log spelled it (C:\\Users\\me, /c/Users/me ...)
        "git_branch": pl.String,
        "git_commit": pl.String,
        "git_repo": pl.String,
        "started_at": TS,
        "ended_at": TS,
        "model": pl.String,  # raw label of the model that did most of the work
        "entrypoint": pl.String,  # cli | sdk-cli | exec | vscode | mcp | subagent ...
        "originator": pl.String,  # Codex originator (codex-tui, codex_exec, Codex Desktop ...)
        "slug": pl.String,
        # Parent hints exactly as the log records them; the spawn pass turns them into edges.
        "parent_native_id": pl.String,  # Claude: sessionId of the parent; Codex: parent_thread_id
        # meta.json parentAgentId (nested Claude spawns); for a workflow agent, the wf_<runId> folder
        # it lies in (the agent id of the run's journal session)
        "parent_agent_id": pl.String,
        "parent_tool_use_id": pl.String,  # meta.json toolUseId
        "spawn_depth": pl.Int32,
        "agent_type": pl.String,  # meta.json agentType / Codex agent_role
        # Claude agent teams: a teammate's name (meta.json name, else its agentType, which 2.1.8x
        # sets to the name) and the team a session worked in (the records' teamName, meta.json
        # teamName); the spawn pass pairs a teammate with the lead's Agent call that named it.
        "agent_name": pl.String,
        "team_name": pl.String,
        "forked_from_id": pl.String,  # Codex forked_from_id; Claude snake-case session_id ancestor
        "root_native_id": pl.String,  # Codex session_id (root thread of a spawn tree)
        # Claude: the earlier session a plan hand-off or /clear continued (its copied tail
        # record, or the transcript path the first prompt cites).
        "continued_from_id": pl.String,
        "caused_by_id": pl.String,  # native id of the session/task whose outcome started this one
        "depends_on": STRS,  # native ids this one waits for (Prickle packet.depends_on)
        # sha256 of the first user prompt: lets the passes match a child to the call that
        # passed the same prompt without any prompt text leaving the logs.
        "first_prompt_hash": pl.String,
        # sha256 of the session's final answer (its last assistant text, ``jsonl.answer_hash``):
        # the launch pass ties a print-mode run to the shell call whose output hashes the same.
        "final_answer_hash": pl.String,
        "n_records": pl.Int64,  # the session's own records (copies not included)
        # Records copied from another session (a forked thread's replay of its parent, a Claude
        # hand-off's copy of the old transcript): recognised and kept out of every other frame.
        "n_copied": pl.Int64,
        # How the work stands, when the log records it (null otherwise). Same on every attempt row
        # of a session: its current state, OCP node vocabulary (NODE_STATES), and what it waits on
        # when blocked, as the harness names it (Prickle waiting_on).
        "state": pl.String,
        "waiting_on": pl.String,
        # This attempt's status, OCP attempt vocabulary (ATTEMPT_STATUSES), and how its outcome is
        # known (OUTCOME_TIERS); null when the log does not say.
        "status": pl.String,
        "outcome_tier": pl.String,
        # How the session's own log ends (END_STATUSES), and the line of the record that says so
        # (null for unknown). Claude Code and Codex fill them; other adapters leave them null.
        "end_status": pl.String,
        "end_line": pl.Int64,
    }
)

CALLS = pl.Schema(
    {
        "session_id": pl.String,
        "call_id": pl.String,  # the harness's own tool-use id
        "tool": pl.String,  # raw tool name
        "kind": pl.String,  # one of CALL_KINDS
        "started_at": TS,
        "ended_at": TS,  # from its result, null while unanswered
        "cwd": pl.String,  # effective working directory of the call, canonical (ingest.paths)
        "command": pl.String,  # shell command text (shell calls only); log text, see ingest.privacy
        "paths": STRS,  # target paths named by the call, normalised
        "subagent_type": pl.String,
        "description": pl.String,  # a spawn's task description; log text, see ingest.privacy
        "run_in_background": pl.Boolean,
        "agent_name": pl.String,  # the teammate an Agent call spawned: its input name ...
        "team_name": pl.String,  # ... and team_name
        "prompt_hash": pl.String,  # sha256 of the prompt a spawn call passed (see sessions)
        # child id the result names (agentId / new_thread_id; a teammate's agent_id <name>@<team>,
        # a Workflow run's runId)
        "result_agent_id": pl.String,
        # child id tied by later records: Claude's agent_progress, an oh-my-opencode
        # background_output of the task id the call launched
        "progress_agent_id": pl.String,
        "output_ids": STRS,  # session ids printed into captured output (launch evidence)
        "output_hash": pl.String,  # a shell call's captured output, ``jsonl.answer_hash`` (launch evidence)
        "exit_code": pl.Int32,
        "is_error": pl.Boolean,
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

FILE_EVENTS = pl.Schema(
    {
        "session_id": pl.String,
        "call_id": pl.String,
        "ts": TS,
        "path": pl.String,  # absolute, normalised
        "op": pl.String,  # one of FILE_OPS
        "how": pl.String,  # tool name, or the shell construct (">", "tee", "sed -i" ...) for heuristic rows
        "tier": pl.String,  # one of TIERS
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# One row per agent-CLI run found in a shell call's command (ingest.shell): what the launch pass
# needs, so that it never reads the command itself.
LAUNCHES = pl.Schema(
    {
        "session_id": pl.String,  # the session whose shell ran it
        "call_id": pl.String,
        "segment": pl.Int32,  # index of the launch within the command
        "ts": TS,  # the call's start
        "harness": pl.String,  # the launched harness ("codex", "claude-code", ...)
        "print_mode": pl.Boolean,  # a non-interactive run (codex exec, claude -p, opencode run ...)
        "resume": pl.Boolean,  # continues an existing session
        "background": pl.Boolean,  # `&`, nohup, setsid, disown, or the call ran in the background
        "looped": pl.Boolean,  # in a loop, xargs, parallel, find -exec: may start several sessions
        # effective working dir, canonical: the launch's own (`cd`, codex -C), else the call's,
        # else the session's
        "cwd": pl.String,
        "output_file": pl.String,  # codex exec -o FILE, normalised
        "script": pl.String,  # the workspace script the command ran that runs the CLI; null if direct
        "review": pl.Boolean,  # the command says "review" (the roles step names the child a reviewer)
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

USAGE = pl.Schema(
    {
        "session_id": pl.String,
        "attempt": pl.Int32,  # as in sessions; null means 1
        "ts": TS,
        "model": pl.String,
        "message_id": pl.String,  # de-duplication key within a session
        "request_id": pl.String,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "cache_read_tokens": pl.Int64,
        "cache_creation_tokens": pl.Int64,
        "cache_creation_5m_tokens": pl.Int64,
        "cache_creation_1h_tokens": pl.Int64,
        "reasoning_tokens": pl.Int64,
        "scope": pl.String,  # one of USAGE_SCOPES; null means request
        # the harness's own dollars for this row (Crush's session cost), never summed with ours
        "reported_usd": pl.Float64,
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# The usage table's token counts, in its column order (what reports, datasets and costs sum).
USAGE_TOKENS: tuple[str, ...] = tuple(c for c in USAGE if c.endswith("_tokens"))

DIAGNOSTICS = pl.Schema(
    {
        "source_path": pl.String,
        "line": pl.Int64,  # null for whole-file problems
        "code": pl.String,  # stable machine code, see DIAGNOSTIC_CODES
        "detail": pl.String,  # field names and values we own, never log text
        "harness": pl.String,
        "count": pl.Int64,  # problems this row stands for: repeats of a code past the first few are folded in
    }
)

# What a log records about how work went, one row per fact (Prickle: a task's state history,
# its result evidence and verdicts). Metadata only: never a summary, note or evidence text.
OUTCOMES = pl.Schema(
    {
        "session_id": pl.String,
        "attempt": pl.Int32,  # the attempt it concerns, as in sessions; null means 1
        "ts": TS,  # when it was observed
        "kind": pl.String,  # one of OUTCOME_KINDS
        "native_state": pl.String,  # state: the harness's own state name (Prickle: one of its 11)
        "waiting_on": pl.String,  # state: what a waiting state waits on
        "evidence_kind": pl.String,  # evidence: what it is (Prickle: test_output, commit, note ...)
        "verifier": pl.String,  # evidence: who vouches for it (Prickle: ci, assignee, requester, person);
        # verdict: who decided it, as an OCP signal source kind (user, judge, orchestrator)
        "criterion": pl.Int32,  # verdict: the 0-based acceptance criterion judged
        "accepted": pl.Boolean,  # verdict: whether that criterion was met
        "tier": pl.String,  # evidence, verdict: one of OUTCOME_TIERS
        "ref": pl.String,  # evidence: the link or artifact it names (url, sha256:<hex>, git:<sha>);
        # verdict: the decider's id (a person's handle, an agent id)
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# One row per event of a session (ingest.steps): what happened, in order, without its text.
STEPS = pl.Schema(
    {
        "session_id": pl.String,
        "attempt": pl.Int32,  # as in sessions; null means 1
        "seq": pl.Int64,  # 0-based position in the session (in its file)
        "ts": TS,
        "role": pl.String,  # one of steps.ROLES
        "kind": pl.String,  # one of steps.STEP_KINDS
        "call_id": pl.String,  # tool_call / tool_result: the harness's tool-use id
        "tool": pl.String,
        "is_error": pl.Boolean,  # tool_result: the tool failed
        "model": pl.String,
        "request_id": pl.String,
        # The response's tokens, on its first step (usage's columns; null on the others).
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "cache_read_tokens": pl.Int64,
        "cache_creation_tokens": pl.Int64,
        "reasoning_tokens": pl.Int64,
        "n_bytes": pl.Int64,  # bytes of the step's content as compact JSON (ingest/steps.py)
        "content_sha256": pl.String,  # sha256 of those bytes
        "parent_seq": pl.Int64,  # tree logs: the step this one follows (branches share a parent)
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# The text of a step, only under the full privacy profile: masked, cut to max_text_chars.
TEXTS = pl.Schema(
    {
        "session_id": pl.String,
        "attempt": pl.Int32,
        "seq": pl.Int64,
        "text": pl.String,
        "n_chars": pl.Int64,  # length after masking (the head the cap keeps), before the cut
        "cut_chars": pl.Int64,  # characters the cap cut off the end
        "source_path": pl.String,
    }
)

# Run documents other producers wrote (OCP), kept whole: their graph is theirs to state.
DOCUMENTS = pl.Schema(
    {
        "source_path": pl.String,
        "run_id": pl.String,  # the document's run.id
        "producer": pl.String,
        "ocp_version": pl.String,  # as read; the stored document is converted to 0.3
        "document": pl.String,  # canonical JSON of the 0.3 document
    }
)

# One row per commit, pull request or pushed branch a session's log shows it made (ingest.commits):
# hashes, branches and URLs, never a message or title. Verified rows come from the log; heuristic
# ones (and in_branch) only from `ingest --git` (sessiongraph.gitlog).
COMMITS = pl.Schema(
    {
        "session_id": pl.String,
        "call_id": pl.String,  # the shell call that made it; null for a pr-link record
        "ts": TS,  # the call's answer (else start), the record's time, a heuristic commit's own time
        "kind": pl.String,  # one of ingest.commits.COMMIT_KINDS: commit | pr | push
        "tier": pl.String,  # one of TIERS
        "evidence": pl.String,  # one of ingest.commits.EVIDENCE
        "repo": pl.String,  # owner/name (a PR URL's, pr-link's prRepository), else null
        "branch": pl.String,
        "commit_hash": pl.String,  # as printed (abbreviated by git commit), full for heuristic rows
        "pr_url": pl.String,
        "pr_number": pl.Int64,
        "in_branch": pl.Boolean,  # still reachable from its branch; null unless --git read the repository
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# Every code an adapter or the pipeline may emit, with what it means (README lists them too).
DIAGNOSTIC_CODES: dict[str, str] = {
    "truncated_line": "last line has no newline and does not parse: a transcript still being written",
    "line_too_long": "a line longer than files.MAX_LINE_BYTES: read past, never held",
    "invalid_json": "a line that is not JSON",
    "not_object": "a JSON line that is not an object",
    "invalid_utf8": "a line with invalid UTF-8, read with replacement characters",
    "unknown_record_type": "a record type this adapter does not know; kept out of the frames",
    "bad_timestamp": "a record whose timestamp is missing or unparseable",
    "wrong_type": "a field with an unexpected JSON type; the field was ignored",
    "bad_arguments": "tool-call arguments that are not a JSON object",
    "unmatched_result": "a tool result whose call is not in the same file",
    "foreign_record": "records copied from another session (hand-off copy, fork replay); not counted here",
    "bad_sidecar": "an agent-<id>.meta.json that cannot be read or is not an object",
    "internal_error": "the adapter failed on this file (a sessiongraph bug: please report it)",
    "empty_file": "a file with no records",
    "unreadable_file": "a file or folder that cannot be opened or read",
    "symlink_loop": "a symlinked folder that leads back into a folder already walked; not walked again",
    "special_file": "a FIFO, socket or device (or a link to one) among the logs: never opened",
    "unknown_format": "a log file that belongs to no known harness",
    "no_session": "a file with records but no session identity (no session_meta / sessionId)",
    "missing_session_id": "records without a session id (sessionId / session_meta): the id is the file's name",
    "late_session_meta": "a Codex session_meta after other records: its cwd is given to the calls before it",
    "script_not_followed": "a shell call ran a script that was not read (detail: missing, outside_workspace, "
    "unresolvable, too_large, not_regular, binary, not_shell, too_deep)",
    "time_from_mtime": "a log without record times: the session's ended_at is its file's mtime, other times are null",
    "no_token_counts": "a log that records no token counts (nor model): the session has no usage rows, or one "
    "with the harness's own dollars only (reported_usd)",
    "bad_document": "a run document that is not valid enough to import (detail names what is missing)",
    "unnamed_child": "a spawn call answered without naming its child session (a background launch no later "
    "report names, an error): the spawn stays dangling",
}

SCHEMAS: dict[str, pl.Schema] = {
    "sessions": SESSIONS,
    "calls": CALLS,
    "file_events": FILE_EVENTS,
    "launches": LAUNCHES,
    "usage": USAGE,
    "diagnostics": DIAGNOSTICS,
    "documents": DOCUMENTS,
    "outcomes": OUTCOMES,
    "steps": STEPS,
    "texts": TEXTS,
    "commits": COMMITS,
}
# Frames the inference passes never read (Store.load_frames leaves them out).
NOT_INFERRED: frozenset[str] = frozenset({"steps", "texts", "commits"})


class Columns:
    """A table as columns of equal length (a column left out is null): how a parser that makes
    many rows of one table hands them over without a dict per row (``ingest.steps``). Plain data,
    not changed once handed over."""

    __slots__ = ("data", "n")

    def __init__(self, data: dict[str, list], n: int):
        self.data = data
        self.n = n

    def __len__(self) -> int:
        return self.n

    def column(self, name: str) -> list:
        values = self.data.get(name)
        return [None] * self.n if values is None else values

    def dicts(self) -> list[dict]:
        names = list(self.data)
        return [dict(zip(names, row, strict=True)) for row in zip(*self.data.values(), strict=True)]

    @classmethod
    def join(cls, parts: list[Columns | list[dict]], schema: pl.Schema) -> Columns:
        """One table of these parts in order (row dicts among them taken column by column)."""
        cols = [p if isinstance(p, Columns) else Columns.of_rows(p, schema) for p in parts if len(p)]
        names = [c for c in schema if any(c in p.data for p in cols)]
        return cls({c: [v for p in cols for v in p.column(c)] for c in names}, sum(p.n for p in cols))

    @classmethod
    def of_rows(cls, rows: list[dict], schema: pl.Schema) -> Columns:
        return cls({c: [row.get(c) for row in rows] for c in schema}, len(rows))


class Frames:
    """The frames one parse produces: one table per entry of :data:`SCHEMAS` (``documents`` only
    from run-document sources, ``outcomes`` only from logs that record outcomes).

    Adapters hand over plain row dicts (:meth:`from_rows`), or a table's :class:`Columns`; the
    polars frames are built only when a table is first read, and :meth:`concat` joins unbuilt
    parts before building, so an ingest builds a handful of frames per batch of files instead of
    several per file (building a small polars frame costs far more than parsing a small log).
    """

    __slots__ = ("_rows", "_tables")

    # One per table of SCHEMAS, the built polars frame (properties set below the class); declared here
    # so that the type checker knows them (tests/test_schema.py holds the two lists equal).
    sessions: pl.DataFrame
    calls: pl.DataFrame
    file_events: pl.DataFrame
    launches: pl.DataFrame
    usage: pl.DataFrame
    diagnostics: pl.DataFrame
    documents: pl.DataFrame
    outcomes: pl.DataFrame
    steps: pl.DataFrame
    texts: pl.DataFrame
    commits: pl.DataFrame

    def __init__(self, **tables: pl.DataFrame):
        _check_names(tables)
        self._rows: dict[str, list[dict] | Columns] = {}
        self._tables: dict[str, pl.DataFrame] = {
            name: tables[name] if name in tables else pl.DataFrame(schema=schema) for name, schema in SCHEMAS.items()
        }

    @classmethod
    def empty(cls) -> Frames:
        return cls.from_rows()

    @classmethod
    def from_rows(cls, **rows: list[dict] | Columns) -> Frames:
        """Frames from lists of row dicts (or Columns); missing tables are empty, missing keys null."""
        _check_rows(rows)
        return cls._of_rows({name: _own(rows.get(name)) for name in SCHEMAS})

    @classmethod
    def _of_rows(cls, rows: dict[str, list[dict] | Columns]) -> Frames:
        """Frames of rows already checked (a table of every name)."""
        out = cls.__new__(cls)
        out._rows = rows
        out._tables = {}
        return out

    def table(self, name: str) -> pl.DataFrame:
        df = self._tables.get(name)
        if df is None:
            rows = self._rows.pop(name, [])
            schema = SCHEMAS[name]
            df = self._tables[name] = _build(
                rows if isinstance(rows, Columns) else Columns.of_rows(rows, schema), schema
            )
        return df

    def height(self, name: str) -> int:
        """Rows in one table, without building it."""
        return len(self._rows[name]) if name in self._rows else self._tables[name].height

    def values(self, name: str, column: str) -> list:
        """One column of one table as a list, without building the table."""
        rows = self._rows.get(name)
        if rows is None:
            return self._tables[name][column].to_list()
        return [row.get(column) for row in rows] if isinstance(rows, list) else rows.column(column)

    def rows(self, name: str) -> list[dict]:
        """One table as row dicts, without building it (the list is the frames' own: do not
        change it; make new rows and :meth:`replace`). A Columns table is made into dicts."""
        rows = self._rows.get(name)
        if rows is None:
            return self._tables[name].to_dicts()
        return rows if isinstance(rows, list) else rows.dicts()

    def replace(self, **rows: list[dict] | Columns) -> Frames:
        """New frames with these tables' rows replaced and the others kept."""
        _check_rows(rows)  # only the new rows: the kept ones were checked when they came in
        return Frames._of_rows({name: _own(rows[name] if name in rows else self._kept(name)) for name in SCHEMAS})

    def _kept(self, name: str) -> list[dict] | Columns:
        """A table's unbuilt rows as they are (Columns are not made into dicts), else its dicts."""
        return self._rows[name] if name in self._rows else self.rows(name)

    @classmethod
    def concat(cls, parts: list[Frames]) -> Frames:
        if all(not p._tables for p in parts):  # all unbuilt: join the rows, build once later
            return cls._of_rows({name: _join([p._rows[name] for p in parts], SCHEMAS[name]) for name in SCHEMAS})
        return cls(**{name: pl.concat([p.table(name) for p in parts], how="vertical") for name in SCHEMAS})

    def tables(self) -> dict[str, pl.DataFrame]:
        return {name: self.table(name) for name in SCHEMAS}


def _table_property(name: str) -> property:
    return property(lambda self: self.table(name))


for _name in SCHEMAS:  # frames.sessions, frames.calls, ...: the built polars frame
    setattr(Frames, _name, _table_property(_name))


def _own(rows: list[dict] | Columns | None) -> list[dict] | Columns:
    """A table's rows as the frames keep them: a list of their own (the caller's may change), or
    the Columns as they are."""
    return rows if isinstance(rows, Columns) else list(rows or ())


def _join(tables: list[list[dict] | Columns], schema: pl.Schema) -> list[dict] | Columns:
    lists = [t for t in tables if isinstance(t, list)]
    if len(lists) < len(tables):
        return Columns.join(tables, schema)
    return [r for t in lists for r in t]


def _check_rows(rows: dict[str, list[dict] | Columns]) -> None:
    _check_names(rows)
    for name, table in rows.items():
        # polars would drop keys the schema lacks; refuse them so the contract cannot drift quietly.
        if isinstance(table, Columns):
            keys = set(table.data)
            if any(len(v) != table.n for v in table.data.values()):
                raise ValueError(f"{name}: columns of unequal length")
        else:
            keys = set().union(*table) if table else set()  # every row's keys, in C
        if not _COLUMNS[name].issuperset(keys):
            raise ValueError(f"{name}: columns {sorted(keys - _COLUMNS[name])} are not in the frames contract")


_COLUMNS = {name: frozenset(schema) for name, schema in SCHEMAS.items()}
_NAMES = frozenset(SCHEMAS)


def _check_names(tables: dict) -> None:
    if _NAMES.issuperset(tables):
        return
    unknown = set(tables) - _NAMES
    if unknown:
        raise ValueError(f"unknown frame(s) {sorted(unknown)}; expected {list(SCHEMAS)}")


def _build(table: Columns, schema: pl.Schema) -> pl.DataFrame:
    # Column lists build faster than a list of dicts, and keep the declared types exactly.
    columns: dict[str, list | pl.Series] = {}
    for col, dtype in schema.items():
        values = table.column(col)
        if dtype == TS:
            columns[col] = _timestamps(col, values)
        elif dtype == STRS:
            columns[col] = _string_lists(col, values)
        else:
            columns[col] = values
    return pl.DataFrame(columns, schema=schema)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def _timestamps(name: str, values: list) -> pl.Series | list:
    """A UTC microsecond column from datetimes (naive ones taken as UTC, as polars takes them),
    by integer arithmetic: polars converts aware datetimes one Python call at a time, five times
    slower. Anything else is left to polars (the list back)."""
    try:
        micros = [
            None if v is None else ((v if v.tzinfo is not None else v.replace(tzinfo=UTC)) - _EPOCH) // _US
            for v in values
        ]
    except (TypeError, AttributeError):
        return values
    return pl.Series(name, micros, dtype=pl.Int64).cast(TS)


def _string_lists(name: str, values: list) -> pl.Series | list:
    """A list-of-strings column through Arrow (one flat string array and offsets): polars builds
    nested lists from Python far slower. Anything but lists of strings is left to polars."""
    offsets = [0]
    flat: list = []
    nulls = []
    try:
        for v in values:
            nulls.append(v is None)
            if v is not None:
                if isinstance(v, str):  # a string is not a list of its characters
                    return values
                flat.extend(v)
            offsets.append(len(flat))
        strings = pl.Series(flat, dtype=pl.String)
    except (TypeError, pl.exceptions.PolarsError):
        return values
    # Arrow arrays made by polars, not pa.array: that would import pandas (0.6 s) in every worker.
    # From buffers, not from_arrays(mask=...): that inverts the mask with pyarrow.compute, whose
    # import costs 0.2 s in every worker (so is the C interface below).
    values_arrow = strings.to_arrow(compat_level=pl.CompatLevel.oldest())
    valid = pl.Series([not n for n in nulls], dtype=pl.Boolean).to_arrow().buffers()[1]
    lists = pa.LargeListArray.from_buffers(
        pa.large_list(values_arrow.type),
        len(values),
        [valid, pl.Series(offsets, dtype=pl.Int64).to_arrow().buffers()[1]],
        children=[values_arrow],
    )
    # Handed over by the Arrow C interface: polars converting a pyarrow array imports
    # pyarrow.compute too.
    return pl.Series(_CArray(lists)).alias(name).cast(STRS)


class _CArray:
    """An Arrow array seen only through the Arrow PyCapsule interface."""

    __slots__ = ("array",)

    def __init__(self, array: pa.Array):
        self.array = array

    def __arrow_c_array__(self, requested_schema=None):
        return self.array.__arrow_c_array__(requested_schema)


def call_file_events(call: dict, op: str, source_path: str, ts: datetime | None) -> list[dict]:
    """The ``file_events`` rows of a file tool's call row (its ``paths``, already placed): the
    call asked the tool to touch them (``verified``), at ``ts``, by the tool's name."""
    return [
        {
            "session_id": call["session_id"],
            "call_id": call["call_id"],
            "ts": ts,
            "path": p,
            "op": op,
            "how": call["tool"],
            "tier": "verified",
            "source_path": source_path,
            "line": call["line"],
        }
        for p in call["paths"]
    ]


def split_cache_writes(total: int, five_min: int, one_hour: int, default: str = "5m") -> tuple[int, int, bool]:
    """The (5m, 1h) cache-write buckets of a response whose log gives a ``total`` and a split.

    The buckets must add up to ``cache_creation_tokens`` (OCP rejects a cost whose buckets do not,
    E170). When a logged split does not (a log saying 0 and 0 beside a non-zero total), the total
    wins: the other bucket keeps what it says, up to the total, and the rest goes to the harness's
    default lifetime (``default``, 5 minutes for Claude Code). The flag says a repair was needed.
    """
    if five_min + one_hour == total and five_min >= 0 and one_hour >= 0:
        return five_min, one_hour, False
    # Each bucket kept within [0, total] (total itself may be any BIGINT a log wrote): no bucket
    # goes negative, and none overflows BIGINT (a log's -2**63 minus a total would).
    if default == "5m":
        one_hour = max(0, min(one_hour, total))
        return total - one_hour, one_hour, True
    five_min = max(0, min(five_min, total))
    return five_min, total - five_min, True
