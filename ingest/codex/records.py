"""Codex CLI rollouts (``$CODEX_HOME/sessions/**/rollout-*.jsonl``) -> frames.

One file is one thread. Both layouts parse here: envelope lines ``{timestamp, type, payload}``
(codex-rs >= ~0.39) and the older pre-envelope file (bare header line, ``record_type: state``
markers, bare response items without timestamps).

**Copied history.** A forked thread (a sub-agent spawned with a forked context, or ``codex fork``)
starts its rollout with its own ``session_meta``, then the parent's ``session_meta`` and a replay
of the parent's history up to the fork: messages, calls and outputs, ``token_count`` events
(cumulative totals that go on from the parent's), all re-stamped at the fork time or kept with
their old times. The replay is the parent's: :meth:`_Rollout.copied` is the one place that says
whether a record is part of it, and a copied record is counted (``sessions.n_copied``, one
``foreign_record`` diagnostic naming its lines) and kept out of every frame. Its ``token_count``
totals still set the baseline the child's own totals are counted from (unless the child's first
own count starts again from zero, as multi-agent v2 children's do). The replay starts at a ``session_meta``
naming another thread and ends at the first turn the child itself starts: a ``task_started`` or
``turn_context`` whose ``turn_id`` (a UUIDv7, like thread ids) is not older than the child's own
thread id. Without UUIDv7 ids to compare, a turn that starts at least ``REPLAY_GAP`` after the
last copied record ends it (a re-stamped replay is written in one burst).

Lines are decoded by msgspec into dicts of the fields the parser reads (``jsonl.decode_typed``):
reasoning, instructions and assistant text are skipped, message text and command output are kept
undecoded until read. ``SESSIONGRAPH_DECODE=plain`` decodes every line whole with orjson; the
frames are the same either way (tests/test_fast_decode.py).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, TypedDict
from uuid import UUID

import msgspec
import orjson

from sessiongraph.ingest import copies, jsonl, resume
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_int,
    as_str,
    decode_line,
    decode_typed,
    find_uuids,
    json_type,
    parse_ts,
    raw_value,
    string_literal,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.resume import Checkpoint
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "codex"

# RolloutItem kinds (codex-rs protocol.rs, late 2025), and those of the 0.14x multi-agent builds,
# read and ignored: inter-agent messages and world-state snapshots carry no call, token or file.
ENVELOPE_KINDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
IGNORED_KINDS = frozenset({"inter_agent_communication", "inter_agent_communication_metadata", "world_state"})
# response_item payload types: spec 2.4, codex-rs core/src/rollout/policy.rs (late 2025) and
# the corpus (0.125.0, 0.128.0-alpha.1).
KNOWN_RESPONSE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        # 0.12x-0.14x (rollout/src/policy.rs): tool discovery, image output, final answers as
        # their own item, context compaction and extra tool lists carry no call we count.
        "agent_message",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "context_compaction",
        "additional_tools",
    }
)
# event_msg payload types: spec 2.5, rollout/policy.rs (late 2025) and the corpus.
KNOWN_EVENTS = frozenset(
    {
        "task_started",
        "task_complete",
        "user_message",
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "token_count",
        "exec_command_end",
        "patch_apply_end",
        "web_search_end",
        "turn_aborted",
        "context_compacted",
        "entered_review_mode",
        "exited_review_mode",
        "undo_completed",
        "collab_agent_spawn_end",
        "collab_waiting_end",
        # 0.11x-0.14x. Read: sub_agent_activity (a spawn call's child). The others are known
        # and ignored: a rollback undoes turns but their tokens were spent (their token_count
        # events stay counted), a rename or a guardian verdict names no call, token or file.
        "sub_agent_activity",
        "item_completed",
        "thread_rolled_back",
        "thread_name_updated",
        "thread_settings_applied",
        "thread_goal_updated",
        "guardian_assessment",
        "guardian_warning",
        "collab_agent_interaction_end",
        "collab_close_end",
        "collab_resume_end",
        "mcp_tool_call_end",
        "image_generation_end",
        "view_image_tool_call",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "warning",
        "error",
    }
)
# SessionSource strings (codex-rs protocol.rs) -> entrypoint.
SOURCE_ENTRYPOINTS = {"cli": "cli", "exec": "exec", "vscode": "vscode", "mcp": "mcp"}
# Rollouts older than `source` (< ~0.4x) only name the originator.
ORIGINATOR_ENTRYPOINTS = {"codex_cli_rs": "cli", "codex-tui": "cli", "codex_exec": "exec"}
# SubAgentSource helpers that are not tool spawns: {"subagent": "review" | "compact"} and
# {"subagent": {"other": "guardian"}} (the approval reviewer judging one planned action).
SUBAGENT_KINDS = {"review": "review", "compact": "compaction"}
OTHER_SUBAGENT_KINDS = {"guardian": "guardian"}
# Tool -> call kind. Shell tools by era: shell (<= 0.4x), shell_command (~0.5x-0.6x),
# exec_command (unified exec, 0.1xx); local_shell_call is the older built-in shell item.
TOOL_KINDS = {
    "shell": "shell",
    "shell_command": "shell",
    "exec_command": "shell",
    "local_shell_call": "shell",
    "apply_patch": "patch",
    "spawn_agent": "spawn",
}
# argv[0] of `[sh, -lc, SCRIPT]` wrappers whose script is the real command.
WRAPPER_SHELLS = frozenset({"bash", "zsh", "sh"})
# Keys of a spawn_agent output object naming the child thread, first found wins (0.12x-0.14x).
SPAWN_RESULT_KEYS = ("agent_id", "new_thread_id", "thread_id")
# patch_apply_end change type (codex-rs FileChange) -> file op.
CHANGE_OPS = {"add": "write", "update": "write", "delete": "delete"}
# apply_patch text headers (codex apply-patch grammar) -> file op; "Move to" renames.
PATCH_OPS = {"Add File": "write", "Update File": "write", "Delete File": "delete"}

# Output headers: "Exit code: N" (shell_command, unified exec) / "Process exited with code N".
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)", re.M)
_PROC = re.compile(r"^Process running with session ID (\d+)", re.M)
_PROC_TEXT = "Process running with session ID "
_PATCH_LINE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
_META_TYPE = re.compile(rb'"type"\s*:\s*"session_meta"')
_META_PAYLOAD = re.compile(rb'"payload"\s*:\s*\{')
_LEGACY_HEAD = re.compile(rb'^\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"instructions"\s*:')
_MAX_IDS = 20
REPLAY_GAP = timedelta(milliseconds=250)


def detect(path: str, head: bytes) -> bool:
    """True when ``head`` starts like a Codex rollout (envelope or pre-envelope header)."""
    try:
        return _detect(head)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def _detect(head: bytes) -> bool:
    first, newline, rest = head.removeprefix(b"\xef\xbb\xbf").lstrip().partition(b"\n")
    if not first.startswith(b"{"):
        return False
    if newline:
        try:
            obj = orjson.loads(first)
        except orjson.JSONDecodeError:
            obj = None  # e.g. invalid UTF-8 in the header: fall back to the byte checks
        if isinstance(obj, dict):
            if obj.get("type") == "session_meta":
                return isinstance(obj.get("payload"), dict)
            if obj.get("type") in ENVELOPE_KINDS and isinstance(obj.get("payload"), dict) and "timestamp" in obj:
                return True  # session_meta missing or later in the file (trimmed, exported)
            legacy = "type" not in obj and isinstance(obj.get("id"), str) and "timestamp" in obj
            return legacy and ("instructions" in obj or b'"record_type"' in rest[:200])
    # The header did not fit in head (long base_instructions): look at its opening bytes.
    prefix = first[:1024]
    kind, payload = _META_TYPE.search(prefix), _META_PAYLOAD.search(prefix)
    if kind and payload and kind.start() < payload.start():
        return True
    return bool(_LEGACY_HEAD.match(prefix))


def parse(path: str) -> Frames:
    """Parse one rollout; bad input becomes diagnostics rows, never an exception."""
    return parse_from(path)[0]


def parse_from(path: str, checkpoint: Checkpoint | None = None, scrub=None) -> tuple[Frames, Checkpoint | None]:
    """The frames of ``path``, read from ``checkpoint`` when the file only grew since (``ingest.resume``)."""
    decode = decode_line if DECODE == "plain" else decode_fast
    return resume.parse(path, _Rollout, _Rollout.restore, checkpoint, scrub, decode)


# -- decoding --------------------------------------------------------------------------------
# What the parser reads, as msgspec types (jsonl.decode_typed). A field whose JSON type the parser
# may report is typed strictly (another type sends the line to the plain path) or kept Raw and
# decoded by orjson when read, as are numbers it checks by type (spawn depth, token counts):
# msgspec keeps an integer past 64 bits an int where orjson makes it a float.

DECODE = jsonl.DECODE  # "plain" (SESSIONGRAPH_DECODE=plain): every line through orjson


class _Fields(TypedDict, total=False):
    """Payload keys (and the top-level keys of pre-envelope headers and bare items)."""

    type: str | None
    id: str | None
    timestamp: str | None
    cwd: Any
    model: Any
    role: Any
    content: msgspec.Raw  # read for the first user message and for steps
    summary: msgspec.Raw  # reasoning summary: a step's text
    name: Any
    arguments: str | None
    call_id: Any
    output: msgspec.Raw  # a step's text, hashed as logged; decoded for the output facts
    input: str | None
    action: msgspec.Raw  # local_shell_call: read through _ACTION; any call's step text
    message: msgspec.Raw  # read for the first user_message only, and a compaction's text
    info: msgspec.Raw
    exit_code: Any  # _exit_code keeps only exit codes (a number past 64 bits is no exit code either way)
    aggregated_output: msgspec.Raw  # scanned for ids when the call may own them
    stdout: msgspec.Raw
    stderr: msgspec.Raw
    parsed_cmd: msgspec.Raw
    success: Any
    changes: msgspec.Raw
    new_thread_id: Any
    turn_id: Any  # turn_context / task_started: where a forked child's own history begins
    kind: Any  # sub_agent_activity
    event_id: Any
    agent_thread_id: Any
    # session_meta and the pre-envelope header
    git: Any
    source: msgspec.Raw
    originator: Any
    cli_version: Any
    parent_thread_id: Any
    agent_role: Any
    forked_from_id: Any
    session_id: Any


class _Record(_Fields, total=False):
    payload: _Fields | None
    record_type: Any


_RECORD = msgspec.json.Decoder(_Record)


def decode_fast(raw: bytes, n: int, diags: Diagnostics) -> dict | None:
    """``decode_line``'s record cut down to the fields the parser reads."""
    return decode_typed(raw, n, diags, _RECORD)


_ROLLOUT_ID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$")


def _id_from_name(path: str) -> str:
    """A rollout's thread id from its name (``rollout-<time>-<id>.jsonl``), else the stem."""
    name = os.path.basename(path)
    m = _ROLLOUT_ID.search(name)
    return m.group(1).lower() if m else name.removesuffix(".jsonl")


def _texts(value: object) -> str | None:
    """A string, or the joined ``text`` of content items ``[{type, text}, ...]``."""
    if isinstance(value, list):
        return "\n".join(i["text"] for i in value if isinstance(i, dict) and isinstance(i.get("text"), str))
    return value if isinstance(value, str) else None


def _command_text(value: object) -> str | None:
    """Shell command text of an argv list (the script of `sh -lc SCRIPT`) or a string."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    wrapped = len(value) == 3 and value[1] in ("-lc", "-c")
    if wrapped and os.path.basename(value[0]) in WRAPPER_SHELLS:
        return value[2]
    return " ".join(value)


def _patch_ops(text: str, cwd: str | None) -> list[tuple[str, str]]:
    """(path, op) pairs an apply_patch text names; a move deletes the old path."""
    ops: list[tuple[str, str]] = []
    for m in _PATCH_LINE.finditer(text):
        path = normalise(m.group(2), cwd)
        if path and m.group(1) == "Move to":
            if ops:  # the moved file is the one the preceding Update names
                ops[-1] = (ops[-1][0], "delete")
            ops.append((path, "write"))
        elif path:
            ops.append((path, PATCH_OPS[m.group(1)]))
    return ops


def _output_parts(value: object) -> tuple[str | None, dict | None]:
    """(text, JSON object) of a tool output: plain text, a JSON-encoded object or items."""
    obj = value if isinstance(value, dict) else None
    if isinstance(value, str) and value.startswith("{"):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            parsed = None
        obj = parsed if isinstance(parsed, dict) else None
    if obj is not None:  # {"output": ..., "metadata": {"exit_code": ...}} and agent ids
        return _texts(obj.get("output", obj.get("content"))), obj
    return _texts(value), None


def _header(text: str) -> str:
    """What precedes a unified-exec output's ``Output:`` line (all of it when there is none)."""
    cut = text.find("\nOutput:")
    return text if cut < 0 else text[:cut]


def _exit_from(text: str | None, obj: dict | None) -> int | None:
    meta = obj.get("metadata") if obj else None
    if isinstance(meta, dict) and (code := _exit_code(meta.get("exit_code"))) is not None:
        return code
    m = _EXIT.search(_header(text)[:1000]) if text else None
    return int(m.group(1)) if m else None


def _exit_code(value: object) -> int | None:
    """An exit code: an integer in the store's INTEGER range (anything else is none)."""
    return value if type(value) is int and -(2**31) <= value < 2**31 else None


def _first_ids(texts: list[str]) -> list[str]:
    """The first _MAX_IDS distinct UUIDs (lowercased) in ``texts``. A call keeps the first
    _MAX_IDS of all its outputs' ids, so an id past that in any one text can never count."""
    found: dict[str, None] = {}
    for text in texts:
        for uuid in find_uuids(text, bounded=True):
            found[uuid.lower()] = None
            if len(found) == _MAX_IDS:
                return list(found)
    return list(found)


def _change_facts(raw: object) -> list[tuple] | str | None:
    """patch_apply_end ``changes`` without the diffs: (path, op or None, JSON type of the change
    ``type``, move path) per change; the JSON type of ``changes`` when it is not an object."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return json_type(raw)  # reported when the event is paired with its call
    facts = []
    for key, val in raw.items():
        kind = val.get("type") if isinstance(val, dict) else None
        move = val.get("move_path") if isinstance(val, dict) else None
        op = CHANGE_OPS.get(kind) if isinstance(kind, str) else None
        facts.append((key, op, json_type(kind), as_str(move)))
    return facts


def _v7_ms(value: str | None) -> int | None:
    """The millisecond timestamp a UUIDv7 carries (thread and turn ids), else None."""
    try:
        u = UUID(value) if value else None
    except ValueError:
        return None
    return u.int >> 80 if u is not None and u.version == 7 else None


def _identity(m: dict) -> dict:
    """The session fields a header (session_meta payload or pre-envelope header line) gives,
    as plain values: the header's instructions text is not kept."""
    git = g if isinstance(g := m.get("git"), dict) else {}
    source, originator = raw_value(m.get("source")), as_str(m.get("originator"))
    entry, kind, bad_source = None, "main", None
    spawn: dict = {}
    if isinstance(source, str):
        entry = SOURCE_ENTRYPOINTS.get(source, source)
    elif isinstance(source, dict) and "subagent" in source:
        entry, sub = "subagent", source["subagent"]
        kind = SUBAGENT_KINDS.get(sub, "subagent") if isinstance(sub, str) else "subagent"
        given = sub.get("thread_spawn") if isinstance(sub, dict) else None
        spawn = given if isinstance(given, dict) else {}
        other = sub.get("other") if isinstance(sub, dict) else None
        if isinstance(other, str):
            kind = OTHER_SUBAGENT_KINDS.get(other, "subagent")
    elif source is None:
        entry = ORIGINATOR_ENTRYPOINTS.get(originator or "")
    else:
        bad_source = json_type(source)  # reported with the session row
    depth = spawn.get("depth")
    return {
        "native_id": as_str(m.get("id")),
        "cwd": as_str(m.get("cwd")),
        "harness_version": as_str(m.get("cli_version")),
        "git_branch": as_str(git.get("branch")),
        "git_commit": as_str(git.get("commit_hash")),
        "git_repo": as_str(git.get("repository_url")),
        "started_at": parse_ts(m.get("timestamp")),
        "entrypoint": entry,
        "originator": originator,
        "session_kind": kind,
        "parent_native_id": as_str(spawn.get("parent_thread_id")) or as_str(m.get("parent_thread_id")),
        "spawn_depth": depth if type(depth) is int else None,
        "agent_type": as_str(spawn.get("agent_role")) or as_str(m.get("agent_role")) or as_str(spawn.get("agent_path")),
        "forked_from_id": as_str(m.get("forked_from_id")),
        "root_native_id": as_str(m.get("session_id")),
        "bad_source": bad_source,
    }


class _Rollout:
    """One parse: identity, the current turn, calls keyed by call_id and what results said.

    Results are paired with their calls only in :meth:`frames` (an output may come before its
    call, end events override outputs), so each is kept as the few facts pairing needs, read
    when the record is: outputs are most of a rollout's bytes, and parser state may be stored.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.diags = Diagnostics(path, harness=NAME)
        self.meta: dict | None = None  # _identity of the header
        self.legacy = False
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.n_records = 0
        self.models: Counter[str] = Counter()
        self.model: str | None = None
        self.turn_cwd: str | None = None
        # Prompt hashes, never prompt text (state may be stored).
        self.prompt_hash: str | None = None  # first event_msg user_message; "" if it was empty
        self.item_prompt_hash: str | None = None  # first typed user message item (fallback)
        self.calls: list[dict] = []
        self.by_id: dict[str, int] = {}  # call_id -> index in calls (ids stay valid in state)
        self.patch_text: dict[int, list[tuple[str, str]]] = {}  # call index -> ops from its text
        self.stdin_proc: dict[str, str] = {}  # write_stdin call_id -> unified-exec process id
        self.outputs: list[tuple] = []  # _output_facts, in file order
        self.ends: list[tuple] = []  # _end_facts, paired after the outputs (they win)
        self.events: list[dict] = []
        self.usage: list[dict] = []
        self.max_total = 0
        self.prev = (0, 0, 0, 0)
        self.steps = StepLog()
        self.response_step: int | None = None  # first model step since the last token_count
        # Copied history (module doc): the thread whose replay is being read, how many records
        # were copied, the first copied line and the time of the last copied record.
        self.copy_of: str | None = None
        self.copy_runs: list[list] = []  # ingest.copies runs
        self.last_own = 0  # line of the last record of the thread's own
        self.n_copied = 0
        self.copy_last_ts: datetime | None = None
        self.fresh_counter = False  # the next own token_count is the first after a replay

    # -- state (ingest.resume) -----------------------------------------------------------------

    _STATE = (
        "meta",
        "legacy",
        "first_ts",
        "last_ts",
        "n_records",
        "models",
        "model",
        "turn_cwd",
        "prompt_hash",
        "item_prompt_hash",
        "calls",
        "by_id",
        "patch_text",
        "stdin_proc",
        "outputs",
        "ends",
        "events",
        "usage",
        "max_total",
        "prev",
        "response_step",
        "copy_of",
        "copy_runs",
        "last_own",
        "n_copied",
        "copy_last_ts",
        "fresh_counter",
    )

    def state(self) -> dict:
        return {**resume.save_fields(self, self._STATE), "steps": self.steps.state()}

    @classmethod
    def restore(cls, path: str, state: dict) -> _Rollout:
        parser = resume.load_fields(cls(path), cls._STATE, state)
        parser.steps = StepLog.restore(state["steps"])
        return parser

    # -- reading -------------------------------------------------------------------------------

    def frames(self) -> Frames:
        """The file's frames; called once, after the last record."""
        native = self.meta["native_id"] if self.meta else None
        if native is None and not self.legacy and (self.meta or self.calls or self.usage or self.first_ts):
            # Envelope records but no session_meta (a trimmed or exported rollout): the id is
            # the one in the file name (rollout-<time>-<id>.jsonl), else the file's stem.
            native = _id_from_name(self.path)
            self.diags.add("missing_session_id", None, "no session_meta: id from the file name")
        if native is None:
            if self.n_records:
                self.diags.add("no_session", None, f"{self.n_records} records, no session_meta id")
            return Frames.from_rows(diagnostics=self.diags.rows)
        copies.report(self.copy_runs, self.diags, "replayed from thread")
        self._pair()
        session = self._session_row(native)
        for row in (*self.calls, *self.events, *self.usage):
            row["session_id"] = session["session_id"]
        for row in self.calls:  # calls logged before a late session_meta named the cwd
            row["cwd"] = row["cwd"] or session["cwd"]
        for row in self.usage:  # a count before the first turn_context: the session's model
            row["model"] = row["model"] or session["model"]
        self.steps.pair_results({c["call_id"]: (c["tool"], c.get("is_error")) for c in self.calls if c["call_id"]})
        steps, texts = self.steps.finish(session["session_id"], self.path)
        return Frames.from_rows(
            sessions=[session],
            calls=self.calls,
            file_events=self.events,
            usage=self.usage,
            diagnostics=self.diags.rows,
            steps=steps,
            texts=texts,
        )

    def feed(self, n: int, rec: dict) -> None:
        self.n_records += 1
        if "record_type" in rec:  # pre-envelope state marker
            return
        kind = rec.get("type")
        if kind is None and self.meta is None and isinstance(rec.get("id"), str):
            self.legacy, self.meta = True, _identity(rec)  # pre-envelope header
            self._ts(rec, n)
            return
        if self.legacy and "payload" not in rec:
            self._item(rec, None, n)  # bare items carry no timestamp in this layout
            return
        p = rec.get("payload")
        if self.copied(kind, p, rec.get("timestamp")):
            self.n_copied += 1
            copies.note(self.copy_runs, n, self.copy_of, self.last_own)
            if kind == "event_msg" and isinstance(p, dict) and p.get("type") == "token_count":
                self._tokens(p, None, n, copied=True)
            return
        self.last_own = n
        ts = self._ts(rec, n)
        if isinstance(kind, str) and kind in IGNORED_KINDS:  # a list or object kind is not hashable
            return
        if not isinstance(kind, str) or kind not in ENVELOPE_KINDS:
            detail = kind if isinstance(kind, str) else f"type: {json_type(kind)}"
            self.diags.add("unknown_record_type", n, detail)
            return
        if not isinstance(p, dict):
            self.diags.add("wrong_type", n, f"{kind}.payload: {json_type(p)}")
        elif kind == "session_meta" and self.meta is None:
            if isinstance(p.get("id"), str):
                self.meta = _identity(p)
                if self.n_records > 1:  # records came before it: their cwd is filled in at the end
                    self.meta["late"] = True
                    self.diags.add("late_session_meta", n, f"session_meta after {self.n_records - 1} records")
            else:  # the id then comes from the file name (frames)
                self.diags.add("wrong_type", n, f"session_meta.id: {json_type(p.get('id'))}")
        elif kind == "session_meta":
            pass  # the thread's own header again (a resumed thread)
        elif kind == "turn_context":
            if isinstance(p.get("model"), str):
                self.model = p["model"]
                self.models[self.model] += 1
            self.turn_cwd = as_str(p.get("cwd")) or self.turn_cwd
        elif kind == "response_item":
            self._item(p, ts, n)
        elif kind == "event_msg":
            self._event(p, ts, n)
        elif kind == "compacted":
            self.steps.add(0, n, ts, "system", "compaction", as_str(raw_value(p.get("message"))))

    def copied(self, kind: object, p: object, raw_ts: object) -> bool:
        """Whether this envelope record is part of a replayed parent history (module doc): the
        single decision every frame row of this file goes through."""
        if self.meta is None or not isinstance(p, dict):
            return False
        if kind == "session_meta":
            other = as_str(p.get("id"))
            if other and other != self.meta["native_id"]:
                self.copy_of = other
                self.copy_last_ts = parse_ts(raw_ts)
                return True
            return self.copy_of is not None
        if self.copy_of is None:
            return False
        ts = parse_ts(raw_ts)
        starts_turn = kind == "turn_context" or (kind == "event_msg" and p.get("type") == "task_started")
        if starts_turn and self._own_turn(as_str(p.get("turn_id")), ts):
            self.copy_of = None
            self.fresh_counter = True
            return False
        if ts is not None:
            self.copy_last_ts = ts
        return True

    def _own_turn(self, turn_id: str | None, ts) -> bool:
        """Whether a turn starting in a replay is the thread's own first turn."""
        assert self.meta is not None  # copied() returns early without a header
        own, turn = _v7_ms(self.meta["native_id"]), _v7_ms(turn_id)
        if own is not None and turn is not None:
            return turn >= own
        return ts is not None and self.copy_last_ts is not None and ts - self.copy_last_ts >= REPLAY_GAP

    def _ts(self, rec: dict, n: int):
        raw = rec.get("timestamp")
        ts = parse_ts(raw)
        if ts is None:
            detail = "timestamp missing" if raw is None else f"timestamp: unparseable {json_type(raw)}"
            self.diags.add("bad_timestamp", n, detail)
            return None
        self.first_ts = self.first_ts or ts
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        return ts

    def _cwd(self) -> str | None:
        return self.turn_cwd or (self.meta["cwd"] if self.meta else None)

    def _item(self, p: dict, ts, n: int) -> None:
        t = p.get("type")
        if not isinstance(t, str) or t not in KNOWN_RESPONSE_ITEMS:
            name = t if isinstance(t, str) else json_type(t)
            self.diags.add("unknown_record_type", n, f"response_item:{name}")
            return
        self._item_step(p, t, ts, n)
        if t == "function_call":
            self._function_call(p, ts, n)
        elif t == "custom_tool_call":
            row, text = self._add_call(p, as_str(p.get("name")), ts, n), p.get("input")
            if not isinstance(text, str):
                self.diags.add("wrong_type", n, f"custom_tool_call.input: {json_type(text)}")
            elif row["kind"] == "patch":
                self._set_patch(row, text)
        elif t == "local_shell_call":
            action = raw_value(p.get("action"))
            if not isinstance(action, dict):
                self.diags.add("wrong_type", n, f"local_shell_call.action: {json_type(action)}")
                action = {}
            row = self._add_call(p, "local_shell_call", ts, n)
            self._shell(row, action.get("command"), action.get("working_directory"), n)
        elif t == "web_search_call":
            self._add_call(p, "web_search_call", ts, n, call_id=as_str(p.get("id")))
        elif t in ("function_call_output", "custom_tool_call_output"):
            self.outputs.append(self._output_facts(p, ts, n))
        elif t == "message" and p.get("role") == "user" and self.item_prompt_hash is None:
            # Injected context (<environment_context>, <user_instructions>, AGENTS.md) is not
            # the prompt; pre-envelope files have no user_message event to tell them apart.
            text = _texts(raw_value(p.get("content")))
            if text and not text.lstrip().startswith(("<", "# AGENTS.md")):
                self.item_prompt_hash = text_hash(text)

    def _item_step(self, p: dict, t: str, ts, n: int) -> None:
        """The step a response item is (the event_msg copies of messages are not steps)."""
        role, kind, call_id, tool = "assistant", None, None, None
        text: str | bytes | memoryview | None = None
        if t == "message":
            text, who = _texts(raw_value(p.get("content"))), p.get("role")
            if who == "assistant":
                kind = "text"
            elif who == "user" and not (text or "").lstrip().startswith(("<", "# AGENTS.md")):
                role, kind = "user", "prompt"
            else:  # developer/system instructions, injected environment and AGENTS.md
                role, kind = "system", "context"
        elif t == "reasoning":  # readable only as its summary (or raw content); else encrypted
            kind, text = "thinking", _texts(raw_value(p.get("summary"))) or _texts(raw_value(p.get("content")))
        elif t in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            kind, call_id = "tool_call", as_str(p.get("call_id"))
            tool = {"local_shell_call": t, "web_search_call": t}.get(t) or as_str(p.get("name"))
            raw = {"function_call": "arguments", "custom_tool_call": "input"}.get(t)
            text = json_content(p.get(raw) if raw else raw_value(p.get("action")))
            if t == "web_search_call":
                call_id = as_str(p.get("id"))
        elif t in ("function_call_output", "custom_tool_call_output"):
            role, kind, call_id = "tool", "tool_result", as_str(p.get("call_id"))
            value = p.get("output")
            text = None if self.steps.keep else string_literal(value)  # hashed as logged (ingest.steps)
            if text is None:
                value = raw_value(value)
                text = value if isinstance(value, str) else _output_parts(value)[0]
        elif t == "compaction":
            role, kind = "system", "compaction"
        if kind is None:
            return
        model = self.model if role == "assistant" else None
        idx = self.steps.add(0, n, ts, role, kind, text, call_id=call_id, tool=tool, model=model)
        if role == "assistant" and self.response_step is None:
            self.response_step = idx

    def _function_call(self, p: dict, ts, n: int) -> None:
        name, raw, args = as_str(p.get("name")), p.get("arguments"), {}
        if not isinstance(raw, str):
            self.diags.add("wrong_type", n, f"function_call.arguments: {json_type(raw)}")
        else:
            try:
                parsed = orjson.loads(raw)
            except orjson.JSONDecodeError:
                self.diags.add("bad_arguments", n, f"{name}: arguments are not JSON ({len(raw)} chars)")
            else:
                if isinstance(parsed, dict):
                    args = parsed
                else:
                    self.diags.add("bad_arguments", n, f"{name}: arguments are a JSON {json_type(parsed)}")
        row = self._add_call(p, name, ts, n)
        if name in ("shell", "shell_command"):
            self._shell(row, args.get("command"), args.get("workdir"), n)
        elif name == "exec_command":
            self._shell(row, args.get("cmd"), args.get("workdir"), n)
        elif name == "write_stdin" and row["call_id"] and args.get("session_id") is not None:
            self.stdin_proc[row["call_id"]] = str(args["session_id"])
        elif name == "apply_patch" and isinstance(args.get("input"), str):
            self._set_patch(row, args["input"])
        elif name == "spawn_agent":
            row["subagent_type"] = as_str(args.get("agent_type")) or as_str(args.get("agent_role"))
            row["description"] = as_str(args.get("task_name"))
            if isinstance(args.get("message"), str):  # becomes the child's first prompt
                row["prompt_hash"] = text_hash(args["message"])

    def _add_call(self, p: dict, tool: str | None, ts, n: int, *, call_id=None) -> dict:
        call_id = call_id or as_str(p.get("call_id"))
        row = {
            "call_id": call_id,
            "tool": tool,
            "kind": TOOL_KINDS.get(tool or "", "other"),
            "started_at": ts,
            "cwd": self._cwd(),
            "paths": [],
            "output_ids": [],
            "source_path": self.path,
            "line": n,
        }
        self.calls.append(row)
        if call_id:
            self.by_id.setdefault(call_id, len(self.calls) - 1)
        return row

    def _shell(self, row: dict, command: object, workdir: object, n: int) -> None:
        if isinstance(workdir, str) and workdir:
            row["cwd"] = normalise(workdir, self._cwd()) or workdir
        if isinstance(command, list) and command and command[0] in ("apply_patch", "applypatch"):
            # Codex runs an `apply_patch PATCH` argv itself (mid-2025 models called it via shell).
            row["kind"] = "patch"
            if len(command) == 2 and isinstance(command[1], str):
                self._set_patch(row, command[1])
            return
        row["command"] = _command_text(command)
        if row["command"] is None and command is not None:
            self.diags.add("wrong_type", n, f"{row['tool']}.command: {json_type(command)}")

    def _set_patch(self, row: dict, text: str) -> None:
        # Only ever for the call _add_call has just added: the last one.
        self.patch_text[len(self.calls) - 1] = ops = _patch_ops(text, row["cwd"])
        row["paths"] = list(dict.fromkeys(path for path, _ in ops))

    def _may_own_ids(self, call_id: str | None) -> bool:
        """Whether a result's UUIDs may end up in a call's output_ids. Only a call already known
        not to be a shell call (nor a write_stdin poll of one) rules that out; the scan is the
        costly part of reading an output."""
        i = self.by_id.get(call_id) if call_id else None
        return i is None or self.calls[i]["kind"] == "shell" or self.calls[i]["tool"] == "write_stdin"

    def _output_facts(self, p: dict, ts, n: int) -> tuple:
        """(call_id, ts, line, JSON type of an unusable output, exit code, unified-exec process
        ids, output ids, spawn agent ids or None when the output is no JSON object).

        Whose they are is settled when pairing, which may put them on a write_stdin poll's exec
        call."""
        call_id, value = as_str(p.get("call_id")), raw_value(p.get("output"))
        text, obj = _output_parts(value)
        bad = json_type(value) if text is None and obj is None else None
        # A substring test first: the anchored pattern would be tried at every line of the output.
        procs = [m.group(1) for m in _PROC.finditer(_header(text))] if text and _PROC_TEXT in text else []
        ids = _first_ids([text]) if text and self._may_own_ids(call_id) else []
        agents = None
        if obj:  # any JSON object answers a spawn, with or without an agent id
            agents = [obj[k] for k in SPAWN_RESULT_KEYS if isinstance(obj.get(k), str)][:1]
        return (call_id, ts, n, bad, _exit_from(text, obj), procs, ids, agents)

    def _end_facts(self, t: str, p: dict, ts, n: int) -> tuple:
        """(type, call_id, ts, line, a, b) with (a, b) = (exit code, output ids) for
        exec_command_end, (success, _change_facts) for patch_apply_end and (new thread id, None)
        for collab_agent_spawn_end."""
        call_id = as_str(p.get("call_id"))
        if t == "exec_command_end":
            code = _exit_code(p.get("exit_code"))
            ids = []
            if self._may_own_ids(call_id):
                outs = [raw_value(p.get(k)) for k in ("aggregated_output", "stdout", "stderr")]
                ids = _first_ids([o for o in outs if isinstance(o, str)])
            return (t, call_id, ts, n, code, ids)
        if t == "patch_apply_end":
            ok = p.get("success")
            changes = _change_facts(raw_value(p.get("changes")))
            return (t, call_id, ts, n, ok if isinstance(ok, bool) else None, changes)
        return (t, call_id, ts, n, as_str(p.get("new_thread_id")), None)

    def _event(self, p: dict, ts, n: int) -> None:
        t = p.get("type")
        if not isinstance(t, str) or t not in KNOWN_EVENTS:
            name = t if isinstance(t, str) else json_type(t)
            self.diags.add("unknown_record_type", n, f"event_msg:{name}")
        elif t == "token_count":
            self._tokens(p, ts, n)
        elif t == "turn_aborted":
            self.steps.add(0, n, ts, "user", "interrupt", None)
        elif t == "user_message" and self.prompt_hash is None and isinstance(msg := raw_value(p.get("message")), str):
            self.prompt_hash = text_hash(msg) if msg else ""
        elif t in ("exec_command_end", "patch_apply_end", "collab_agent_spawn_end"):
            self.ends.append(self._end_facts(t, p, ts, n))
            if t == "exec_command_end":
                self._reads(p, ts, n)
        elif t == "sub_agent_activity" and p.get("kind") == "started":
            # 0.14x multi-agent: the spawn_agent output names only a task path; this event ties
            # the call (event_id) to the child thread (agent_thread_id).
            self.ends.append((t, as_str(p.get("event_id")), ts, n, as_str(p.get("agent_thread_id")), None))

    def _reads(self, p: dict, ts, n: int) -> None:
        """The harness's own parse of the command: its `read` items are reported reads."""
        parsed = raw_value(p.get("parsed_cmd"))
        if parsed is not None and not isinstance(parsed, list):
            self.diags.add("wrong_type", n, f"exec_command_end.parsed_cmd: {json_type(parsed)}")
            return
        cwd, seen = as_str(p.get("cwd")) or self._cwd(), set()
        for item in parsed or []:
            if isinstance(item, dict) and item.get("type") == "read":
                path = normalise(item["path"], cwd) if isinstance(item.get("path"), str) else None
                if path and path not in seen:
                    seen.add(path)
                    self._file_event(as_str(p.get("call_id")), ts, path, "read", "parsed_cmd", "reported", n)

    def _file_event(self, call_id, ts, path, op, how, tier, line) -> None:
        self.events.append(
            {
                "call_id": call_id,
                "ts": ts,
                "path": path,
                "op": op,
                "how": how,
                "tier": tier,
                "source_path": self.path,
                "line": line,
            }
        )

    def _tokens(self, p: dict, ts, n: int, copied: bool = False) -> None:
        """A cumulative count becomes the difference from the last one. A copied count (a
        replayed parent's) only moves that baseline: the thread's own totals go on from it."""
        info = raw_value(p.get("info"))
        if info is None:  # a rate-limits-only update
            return
        if not isinstance(info, dict):
            if not copied:
                self.diags.add("wrong_type", n, f"token_count.info: {json_type(info)}")
            return
        total = info.get("total_token_usage")
        if not isinstance(total, dict):
            if not copied:
                self.diags.add("wrong_type", n, f"token_count.info.total_token_usage: {json_type(total)}")
            return
        grand = as_int(total.get("total_tokens"))
        if self.fresh_counter and not copied:
            # The first own count after a replay: multi-agent v2 children count from zero again
            # (their total is their last call's), older forks go on from the replayed totals.
            self.fresh_counter = False
            last = info.get("last_token_usage")
            if grand < self.max_total and isinstance(last, dict) and as_int(last.get("total_tokens")) == grand:
                self.prev, self.max_total = (0, 0, 0, 0), 0
        if grand <= self.max_total:  # cumulative totals: an equal or lower one is a re-emit/replay
            return
        cached = as_int(total.get("cached_input_tokens"))
        cur = (
            as_int(as_int(total.get("input_tokens")) - cached),
            cached,
            as_int(total.get("output_tokens")),
            as_int(total.get("reasoning_output_tokens")),
        )
        # as_int again: a difference of two counts near the BIGINT bounds may leave that range.
        inp, cache, out, reason = (as_int(c - q) for c, q in zip(cur, self.prev, strict=True))
        self.prev, self.max_total = cur, grand
        if copied:
            return
        # The response this count closes is the one whose first step came after the last count.
        self.steps.tokens(
            self.response_step,
            {
                "input_tokens": inp,
                "cache_read_tokens": cache,
                "output_tokens": out,
                "reasoning_tokens": reason,
                "cache_creation_tokens": 0,
            },
        )
        self.response_step = None
        self.usage.append(
            {
                "ts": ts,
                "model": self.model,
                "message_id": f"cum:{grand}",
                "input_tokens": inp,
                "cache_read_tokens": cache,
                "output_tokens": out,
                "reasoning_tokens": reason,
                "cache_creation_tokens": 0,
                "cache_creation_5m_tokens": 0,
                "cache_creation_1h_tokens": 0,
                "source_path": self.path,
                "line": n,
            }
        )

    # -- pairing results with calls --------------------------------------------------------------

    def _pair(self) -> None:
        ids: dict[int, list[str]] = {}  # call index -> ids its results printed
        running = self._pair_outputs(ids)
        applied = self._pair_ends(ids)
        for i, row in enumerate(self.calls):
            if row["kind"] == "shell":
                row["output_ids"] = list(dict.fromkeys(ids.get(i, [])))[:_MAX_IDS]
                # Its result came back with the process still running and no exit was ever
                # seen: it went on in the background (what it started may start later).
                if i in running and row.get("exit_code") is None:
                    row["run_in_background"] = True
            if row.get("is_error") is None and row.get("exit_code") is not None:
                row["is_error"] = row["exit_code"] != 0
            if row["kind"] == "patch":
                self._patch_events(i, applied.get(i))

    def _pair_outputs(self, ids: dict[int, list[str]]) -> set[int]:
        """Pairs outputs with calls; returns the shell calls an output left running."""
        procs: dict[str, int] = {}  # unified-exec process id -> index of the exec_command running it
        # File order, so process ids map correctly.
        for call_id, ts, n, bad, code, proc_ids, out_ids, agents in self.outputs:
            if bad is not None:
                self.diags.add("wrong_type", n, f"output: {bad}")
            i = self.by_id.get(call_id) if call_id else None
            if i is None:
                self.diags.add("unmatched_result", n, "output names no call of this file")
                continue
            row = self.calls[i]
            row["ended_at"] = ts
            owner: int | None = i
            if row["tool"] == "write_stdin":  # a poll reports on the exec call's process
                owner = procs.get(self.stdin_proc.get(call_id, ""))
            if owner is not None and (own := self.calls[owner])["kind"] in ("shell", "patch"):
                if code is not None:  # a write_stdin poll that saw the exit ends its exec call
                    own["exit_code"], own["ended_at"] = code, ts
                if own["kind"] == "shell":
                    ids.setdefault(owner, []).extend(out_ids)
                    for proc in proc_ids:
                        procs[proc] = owner
            if row["kind"] == "spawn" and agents is not None:
                row["result_agent_id"] = agents[0] if agents else None
        return set(procs.values())

    def _pair_ends(self, ids: dict[int, list[str]]) -> dict[int, tuple]:
        """End events override what outputs said; returns call index -> (ops, ts, line) of its
        last patch_apply_end."""
        applied: dict[int, tuple] = {}
        for t, call_id, ts, n, a, b in self.ends:
            i = self.by_id.get(call_id) if call_id else None
            if i is None:
                continue  # e.g. a user `!cmd` shell command: no model call to attach to
            row = self.calls[i]
            if t != "sub_agent_activity":  # the child starting is not the call ending
                row["ended_at"] = ts
            if t == "exec_command_end":
                if a is not None:
                    row["exit_code"] = a
                ids.setdefault(i, []).extend(b)
            elif t == "patch_apply_end":
                if a is not None:
                    row["is_error"] = not a
                applied[i] = (self._changes(b, row["cwd"], n), ts, n)
            elif a is not None:
                row["result_agent_id"] = a
        return applied

    def _changes(self, facts: list[tuple] | str | None, cwd: str | None, n: int) -> list[tuple[str, str]] | None:
        """(path, op) pairs of a patch_apply_end's _change_facts; a move deletes the old path."""
        if facts is None or isinstance(facts, str):
            if facts is not None:
                self.diags.add("wrong_type", n, f"patch_apply_end.changes: {facts}")
            return None
        ops: list[tuple[str, str]] = []
        for key, op, kind, move in facts:
            path = normalise(key, cwd)
            if op is None:
                self.diags.add("wrong_type", n, f"patch_apply_end.changes[].type: {kind}")
            move = normalise(move, cwd) if move is not None else None
            if op and path:
                ops += [(path, "delete"), (move, "write")] if move else [(path, op)]
        return ops

    def _patch_events(self, i: int, applied: tuple | None) -> None:
        row = self.calls[i]
        if applied is not None and applied[0] is not None:
            ops, ts, line = applied
            row["paths"] = list(dict.fromkeys(row["paths"] + [path for path, _ in ops]))
        else:
            ops, ts, line = self.patch_text.get(i, []), row["started_at"], row["line"]
        if not row.get("is_error"):  # a failed patch changed nothing we can vouch for
            for path, op in ops:
                self._file_event(row["call_id"], ts, path, op, "apply_patch", "verified", line)

    def _session_row(self, native: str) -> dict:
        ident = dict(self.meta or {})
        late = ident.pop("late", False)
        bad_source = ident.pop("bad_source", None)
        if bad_source is not None:
            self.diags.add("wrong_type", None, f"session_meta.source: {bad_source}")
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = None
        # An empty first user_message ("") gives way to the item prompt, as a missing one does.
        prompt = self.prompt_hash or self.item_prompt_hash
        return {
            **ident,
            "session_id": f"{NAME}:{native}",
            "harness": NAME,
            "layout": "rollout",
            "source_path": self.path,
            "source_bytes": size,
            "session_kind": ident.get("session_kind") or "main",  # no session_meta: a main thread
            "cwd": ident.get("cwd") or self.turn_cwd,
            # A late session_meta may be stamped after the records that preceded it.
            "started_at": min(t for t in (ident.get("started_at"), self.first_ts) if t)
            if late and self.first_ts
            else ident.get("started_at") or self.first_ts,
            "ended_at": self.last_ts,
            "model": self.models.most_common(1)[0][0] if self.models else None,
            "first_prompt_hash": prompt,
            "n_records": self.n_records - self.n_copied,
            "n_copied": self.n_copied,
        }
