"""Steps: what an agent did, one row per event of a session, in the session's own order.

Every adapter describes its records with one vocabulary (``ROLES``, ``STEP_KINDS``) through a
:class:`StepLog`, which numbers the steps (``seq``, 0-based per session), measures and hashes their
text (``n_bytes``, ``content_sha256``) and, only when the ingest keeps text (``--privacy full``),
keeps that text for the ``texts`` frame with its credentials masked and cut to ``max_text_chars``.

What is measured and hashed is the step's content as compact JSON, not the decoded text: a text
as its JSON string literal (:func:`literal`: UTF-8, as JSON.stringify, serde_json and orjson write
it), a tool input as the JSON object it is (:func:`json_content`). A tool output logged as one
JSON string is then hashed straight from the log's bytes, without decoding and encoding it again
(for tool outputs, half of a transcript's bytes, that was a fifth of the ingest). Claude Code and
Codex write their logs that way, so the literal read from a log is the literal any other path
would write for the same text (tests/test_fast_decode.py checks it on every sample and corpus file).

- ``prompt``: what a person asked (role ``user``); ``interrupt``: a person stopped the turn.
- ``context``: text the harness put in front of the model (instructions, environment, reminders,
  injected file contents), role ``system``.
- ``text``, ``thinking``, ``tool_call``: the model's answer, reasoning and tool calls (role
  ``assistant``); a tool call's text is its input as JSON.
- ``tool_result``: a tool's answer (role ``tool``), with the call's ``call_id``, ``tool`` and
  ``is_error``.
- ``compaction``: a summary that replaced the history before it (role ``system``).

A response's token counts go on its first step (:meth:`StepLog.tokens`). Where the log is a tree
(Claude ``parentUuid``, pi/omp entry ids) ``parent_seq`` names the step each step follows, so a
branched session keeps its branches; in a linear log it is null (the order says it).

Copied history (a fork's replay of its parent, a hand-off's copy) belongs to the session that
wrote it: the adapters mark it (ingest.copies, issue 13) and the steps follow that one marking,
either by never adding a copied record (Codex, pi: the record is skipped as it is read) or, where a
copy is known only later (a Claude hand-off), through :meth:`StepLog.finish`'s ``copied(line)``.
``copying`` is the same switch for a stretch being read; ``copied`` counts what was left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import orjson

from sessiongraph.ingest.frames import STEPS, Columns, Frames
from sessiongraph.ingest.secrets import mask

ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
STEP_KINDS: tuple[str, ...] = (
    "prompt",
    "context",
    "text",
    "thinking",
    "tool_call",
    "tool_result",
    "compaction",
    "interrupt",
)
TOKEN_COLUMNS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "reasoning_tokens",
)
DEFAULT_MAX_TEXT_CHARS = 20_000
STATE_MARK = "__steps__"
# 3: texts as columns (2: texts as row dicts; 1: rows as dicts); a checkpoint of another version
# is not resumed (ingest.resume reads the file whole)
STATE_VERSION = 3
MASK_MARGIN = 8192  # longer than any credential ingest.secrets knows (a PEM private key included)

# A step row is a list in the steps frame's column order, its file's source_path left out (one
# per file): a list is made, changed, pickled into a checkpoint and turned into columns faster
# than a dict per step, and there are more steps than rows of any other frame.
FIELDS: tuple[str, ...] = tuple(c for c in STEPS if c != "source_path")
_SESSION, _SEQ, _KIND = FIELDS.index("session_id"), FIELDS.index("seq"), FIELDS.index("kind")
_CALL, _TOOL, _ERROR = FIELDS.index("call_id"), FIELDS.index("tool"), FIELDS.index("is_error")
_PARENT, _LINE = FIELDS.index("parent_seq"), FIELDS.index("line")
_ATTEMPT = FIELDS.index("attempt")
_TOKENS = slice(FIELDS.index(TOKEN_COLUMNS[0]), FIELDS.index(TOKEN_COLUMNS[-1]) + 1)
# The texts are kept as columns, one list per field (the texts frame's, its source_path left out):
# appended to as they are read, pickled into every checkpoint of a large file (a list of strings
# pickles far faster than a dict per text) and handed over as the frame's Columns as they are.
TEXT_FIELDS: tuple[str, ...] = ("session_id", "attempt", "seq", "text", "n_chars", "cut_chars")
_T_SESSION, _T_ATTEMPT, _T_SEQ = (TEXT_FIELDS.index(c) for c in ("session_id", "attempt", "seq"))

# What the parse in this process keeps: set by the pipeline around each parse (text_policy).
_keep_text = False
_max_chars = DEFAULT_MAX_TEXT_CHARS


@contextmanager
def text_policy(keep: bool, max_chars: int = DEFAULT_MAX_TEXT_CHARS) -> Iterator[None]:
    """Within this block, StepLogs keep step text (``keep``), each cut to ``max_chars``."""
    global _keep_text, _max_chars
    saved = _keep_text, _max_chars
    _keep_text, _max_chars = keep, max_chars
    try:
        yield
    finally:
        _keep_text, _max_chars = saved


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def literal(text: str) -> bytes:
    """``text`` as a compact JSON string literal, UTF-8: quotes, backslashes and control characters
    escaped (``\\n``, ``\\u001b``), everything else as it is."""
    try:
        return orjson.dumps(text)
    except orjson.JSONEncodeError:  # a lone surrogate, which JSON.stringify writes as an escape
        out = json.dumps(text, ensure_ascii=False)
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out).encode()


def json_content(value: object) -> bytes | None:
    """A tool input as a step's content: a string as its JSON literal, anything else as compact
    JSON (keys in the logged order); None when there is none or it cannot be written."""
    if value is None:
        return None
    if isinstance(value, str):
        return literal(value)
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _readable(content: bytes | memoryview) -> str:
    """The text of a step's content: a JSON string decoded, any other JSON as it is written."""
    if bytes(content[:1]) == b'"':
        return orjson.loads(content)
    return bytes(content).decode()


class StepLog:
    """The steps (and, under ``full``, texts) of one file's sessions.

    ``rows`` are lists in :data:`FIELDS` order whose ``session_id`` is the adapter's own session
    key until :meth:`finish`, which hands them over as the steps frame's :class:`Columns`;
    ``texts`` one list per :data:`TEXT_FIELDS` column. They are plain data, so a parser keeps its
    StepLog in its checkpoint state (``state``/``restore``)."""

    __slots__ = ("rows", "texts", "keep", "cap", "next_seq", "nodes", "copying", "copied", "_last")

    def __init__(self) -> None:
        self.rows: list[list] = []
        self.texts: list[list] = [[] for _ in TEXT_FIELDS]
        self.keep = _keep_text
        self.cap = _max_chars
        self.next_seq: dict[object, int] = {}
        self.nodes: dict[str, int | None] = {}  # tree node id -> seq of its last step
        self.copying = False
        self.copied = 0
        self._last: tuple | None = None  # (session, node, seq) of the last step

    def add(
        self,
        session: object,
        line: int | None,
        ts: datetime | None,
        role: str,
        kind: str,
        text: str | bytes | memoryview | None = None,
        *,
        call_id: str | None = None,
        tool: str | None = None,
        is_error: bool | None = None,
        model: str | None = None,
        request_id: str | None = None,
        attempt: int | None = None,
        node: str | None = None,
        parent: str | None = None,
    ) -> int | None:
        """Record one step; returns its index in ``rows`` (None when it is copied history, or a
        tree record seen before: a resumed transcript's copy). ``text``: the step's text, or its
        content as JSON bytes (a string's literal as the log holds it, a tool input's object).
        ``node``/``parent``: the record's tree ids; the steps of one record are added one after
        the other."""
        if self.copying:
            self.copied += 1
            return None
        last = self._last
        if node is not None and node in self.nodes and (last is None or last[1] != node):
            return None
        seq = self.next_seq.get(session, 0)
        self.next_seq[session] = seq + 1
        parent_seq = None
        if node is not None:
            # Several steps of one record follow each other; the first follows its parent record.
            if last is not None and last[0] == session and last[1] == node:
                parent_seq = last[2]
            elif parent is not None:
                parent_seq = self.nodes.get(parent)
            self.nodes[node] = seq
            self._last = (session, node, seq)
        n_bytes = digest = None
        if text is not None:
            # Bytes are the content's JSON as logged or written; a text is written as its literal.
            content = literal(text) if isinstance(text, str) else text
            n_bytes = len(content)
            digest = hashlib.sha256(content).hexdigest()
            if self.keep:
                readable = text if isinstance(text, str) else _readable(content)
                self._text(session, attempt, seq, readable)
        # In FIELDS order (tests/test_steps.py holds the two equal); the token counts come later.
        self.rows.append(
            [
                session, attempt, seq, ts, role, kind, call_id, tool, is_error, model, request_id,
                None, None, None, None, None, n_bytes, digest, parent_seq, line,
            ]
        )  # fmt: skip
        return len(self.rows) - 1

    def _text(self, session: object, attempt: int | None, seq: int, text: str) -> None:
        """Add a texts row: masked, then cut to the cap. Only the head the cap keeps is masked (masking
        is slow on long tool outputs), with a margin longer than any credential, so that one
        crossing the cut is still recognised and masked, never kept in part."""
        head = text[: self.cap + MASK_MARGIN]
        kept = mask(head) or ""
        if len(head) < len(text):  # what the cap drops is counted, not masked
            n_chars = len(kept) + len(text) - len(head)
        else:
            n_chars = len(kept)
        sessions, attempts, seqs, texts, chars, cut = self.texts  # TEXT_FIELDS
        sessions.append(session)
        attempts.append(attempt)
        seqs.append(seq)
        texts.append(kept[: self.cap])
        chars.append(n_chars)
        cut.append(n_chars - min(len(kept), self.cap))

    def link(self, node: str | None, parent: str | None) -> None:
        """A tree record that made no step: its children follow its parent's last step."""
        if node is not None and node not in self.nodes:
            self.nodes[node] = self.nodes.get(parent) if parent is not None else None

    def tokens(self, index: int | None, usage: dict) -> None:
        """Put a response's token counts (a usage row) on its first step."""
        if index is None:
            return
        self.rows[index][_TOKENS] = [usage.get(col) or 0 for col in TOKEN_COLUMNS]

    def pair_results(self, calls: dict[str, tuple[str | None, bool | None]]) -> None:
        """Tool results learn their tool and error flag from their call (``calls``: call id ->
        (tool, is_error)): for logs whose results name only the call."""
        for r in self.rows:
            if r[_KIND] == "tool_result":
                call = calls.get(r[_CALL])
                if call is not None:
                    r[_TOOL], r[_ERROR] = call

    def finish(self, ids, source_path: str, copied=None) -> tuple[Columns, Columns | list[dict]]:
        """(steps, texts) with final session ids: ``ids`` maps the adapter's session keys
        (a dict, or one id for every key). ``copied(line)``: the adapter's test for copied history
        known only once the file is read (a hand-off's copy): those steps are left out and the
        others numbered again from 0."""
        if copied is not None and any(copied(r[_LINE]) for r in self.rows if r[_LINE] is not None):
            self._drop(copied)
        get = ids.get if isinstance(ids, dict) else (lambda _k: ids)
        n = len(self.rows)
        data: dict[str, list] = {}
        if n:
            data = {name: list(values) for name, values in zip(FIELDS, zip(*self.rows, strict=True), strict=True)}
            data["session_id"] = [get(k) for k in data["session_id"]]
            data["source_path"] = [source_path] * n
        n_texts = len(self.texts[_T_SEQ])
        if not n_texts:  # no text kept (metadata_only): no table
            return Columns(data, n), []
        texts = dict(zip(TEXT_FIELDS, self.texts, strict=True))
        texts["session_id"] = [get(k) for k in texts["session_id"]]
        texts["source_path"] = [source_path] * n_texts
        return Columns(data, n), Columns(texts, n_texts)

    def no_attempts(self) -> None:
        """Every step and text of one run: no attempt numbers."""
        for step in self.rows:
            step[_ATTEMPT] = None
        self.texts[_T_ATTEMPT] = [None] * len(self.texts[_T_ATTEMPT])

    def frames(self, ids, source_path: str, copied=None, **tables: list[dict] | Columns) -> Frames:
        """The file's frames: ``tables`` (row dicts by frame name) with these steps and texts
        (:meth:`finish`)."""
        steps, texts = self.finish(ids, source_path, copied)
        return Frames.from_rows(steps=steps, texts=texts, **tables)

    def _drop(self, copied) -> None:
        renumber: dict[tuple, int] = {}  # (session, old seq) -> new seq
        rows: list[list] = []
        next_seq: dict[object, int] = {}
        for r in self.rows:
            if r[_LINE] is not None and copied(r[_LINE]):
                self.copied += 1
                continue
            key = r[_SESSION]
            new = next_seq.get(key, 0)
            next_seq[key] = new + 1
            renumber[(key, r[_SEQ])] = new
            r[_SEQ] = new
            if r[_PARENT] is not None:
                r[_PARENT] = renumber.get((key, r[_PARENT]))  # a copied parent: none
            rows.append(r)
        self.rows = rows
        sessions, seqs = self.texts[_T_SESSION], self.texts[_T_SEQ]
        new_seqs = [renumber.get(key) for key in zip(sessions, seqs, strict=True)]
        keep = [i for i, s in enumerate(new_seqs) if s is not None]
        self.texts = [[column[i] for i in keep] for column in self.texts]
        self.texts[_T_SEQ] = [new_seqs[i] for i in keep]

    # -- checkpoint state (ingest.resume) ---------------------------------------------------------

    def state(self) -> dict:
        # Marked so that ingest.privacy.scrub_state need not walk every row (only texts hold text).
        return {STATE_MARK: STATE_VERSION, **{k: getattr(self, k) for k in self.__slots__}}

    @classmethod
    def restore(cls, state: dict) -> StepLog:
        if state.get(STATE_MARK) != STATE_VERSION:
            raise ValueError("checkpoint of steps in another layout")  # ingest.resume reads the file whole
        if state["keep"] != _keep_text or state["cap"] != _max_chars:
            # Texts kept under another policy cannot be completed: ingest.resume reads the file whole.
            raise ValueError("checkpoint taken under another text policy")
        log = cls.__new__(cls)
        for k in cls.__slots__:
            setattr(log, k, state[k])
        return log
