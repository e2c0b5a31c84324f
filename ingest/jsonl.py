"""Reading JSON Lines logs defensively: every line either yields a record or a diagnostic."""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

import msgspec
import orjson

from sessiongraph.ingest.files import MAX_LINE_BYTES, TOO_LONG, lines, open_regular, read_bounded

# Rows kept per diagnostics code and file: the first ones are examples (their lines), every later
# one is counted into the last example's ``count``, so a file of ten million junk lines costs a
# few rows, not ten million.
EXAMPLES_PER_CODE = 20


@dataclass(slots=True)
class Diagnostics:
    """Collects diagnostics rows for one file (the ``diagnostics`` frame's columns)."""

    source_path: str
    harness: str | None = None
    rows: list[dict] = field(default_factory=list)
    # code -> its rows so far and the last; rebuilt when ``rows`` is replaced (a restored state)
    _by_code: dict[str, tuple[int, dict]] = field(default_factory=dict)
    _of: list[dict] | None = None

    def add(self, code: str, line: int | None = None, detail: str = "") -> None:
        if self._of is not self.rows:
            self._by_code = {}
            for row in self.rows:
                n, _ = self._by_code.get(row["code"], (0, row))
                self._by_code[row["code"]] = (n + 1, row)
            self._of = self.rows
        n, last = self._by_code.get(code, (0, None))
        if last is not None and n >= EXAMPLES_PER_CODE:
            last["count"] = (last.get("count") or 1) + 1
            return
        row = {
            "source_path": self.source_path,
            "line": line,
            "code": code,
            "detail": detail[:200],
            "harness": self.harness,
            "count": 1,
        }
        self.rows.append(row)
        self._by_code[code] = (n + 1, row)


def read_records(path: str, diags: Diagnostics) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for every JSON-object line of ``path`` (1-based lines).

    Bad lines become diagnostics and are skipped; a file that cannot be opened yields nothing
    and records ``unreadable_file``. Lines are read as bytes so invalid UTF-8 is caught per line.
    """
    try:
        fh = open_regular(path)
    except OSError as exc:
        diags.add("unreadable_file", None, type(exc).__name__)
        return
    n = 0
    any_content = False
    with fh:
        try:
            for n, raw in enumerate(lines(fh), start=1):
                if not raw.strip():
                    continue
                any_content = True
                if raw is TOO_LONG:
                    diags.add("line_too_long", n, f"longer than {MAX_LINE_BYTES} bytes; skipped")
                    continue
                record = decode_line(raw, n, diags)
                if record is not None:
                    yield n, record
        except OSError as exc:
            diags.add("unreadable_file", n + 1, type(exc).__name__)
            return
    if not any_content:
        diags.add("empty_file", None, "no records")


def decode_line(raw: bytes, n: int, diags: Diagnostics) -> dict | None:
    """One line's JSON object, or None with a diagnostic (repairing invalid UTF-8 if it can)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            # Repair rather than drop: the rest of the record is usually intact.
            try:
                obj = orjson.loads(raw.decode("utf-8", errors="replace"))
            except orjson.JSONDecodeError:
                diags.add("invalid_utf8", n, "line has invalid UTF-8 and is not JSON")
                return None
            diags.add("invalid_utf8", n, "invalid bytes replaced with U+FFFD")
        else:
            if not raw.endswith(b"\n"):
                diags.add("truncated_line", n, f"{len(raw)} bytes without a newline")
            else:
                diags.add("invalid_json", n, f"{len(raw)} bytes")
            return None
    if not isinstance(obj, dict):
        diags.add("not_object", n, type(obj).__name__)
        return None
    return obj


# -- typed decoding (msgspec): only the fields an adapter reads -----------------------------------
# An adapter describes the fields it reads as msgspec types; fields it never reads are skipped
# unallocated, bodies it reads rarely are kept as msgspec.Raw and decoded by raw_value when
# needed. Fields whose JSON type the adapter reports when unexpected are typed strictly, so such
# a line fails the typed decoder and goes through decode_line: diagnostics are those of the
# plain path. SESSIONGRAPH_DECODE=plain sends every line through decode_line.

DECODE = os.environ.get("SESSIONGRAPH_DECODE", "fast")
_UTF8_SLICE = 1 << 16
ORJSON_MAX_DEPTH = 1024
# msgspec nests through Py_EnterRecursiveCall, bounded by sys.getrecursionlimit() up to 3.11 (from
# 3.12 by a separate C limit).
_NESTING_BY_RECURSION_LIMIT = sys.version_info < (3, 12)


def decode_typed(
    raw: bytes, n: int, diags: Diagnostics, decoder: msgspec.json.Decoder, finish: Callable[[dict], dict] | None = None
) -> dict | None:
    """``raw`` decoded by ``decoder`` (then ``finish``), or by ``decode_line`` when the typed
    decoder does not take it as it is (see above)."""
    # msgspec checks UTF-8 only in the strings it decodes; orjson rejects (or repairs) any line
    # with invalid UTF-8, so such a line takes the plain path. So does one msgspec might read
    # although it nests deeper than orjson reads.
    if (raw.isascii() or utf8_ok(raw)) and not_too_deep(raw):
        try:
            rec = decoder.decode(raw)
            return finish(rec) if finish is not None else rec
        except (msgspec.DecodeError, RecursionError, orjson.JSONDecodeError):  # incl. ValidationError
            pass
    return decode_line(raw, n, diags)


def not_too_deep(raw: bytes) -> bool:
    """True when msgspec cannot read this line if orjson rejects it as nested past 1024 levels:
    on 3.11 msgspec stops at a recursion limit below that, or the line has too few brackets."""
    if _NESTING_BY_RECURSION_LIMIT and sys.getrecursionlimit() <= ORJSON_MAX_DEPTH:
        return True
    return raw.count(b"[") + raw.count(b"{") <= ORJSON_MAX_DEPTH


def utf8_ok(raw: bytes) -> bool:
    """Whether ``raw`` is valid UTF-8."""
    if len(raw) <= _UTF8_SLICE:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    # In slices: each decoded slice is small and freed at once (decoding a long line whole
    # allocates, and faults in, up to four times its size).
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    try:
        for i in range(0, len(raw), _UTF8_SLICE):
            decoder.decode(view[i : i + _UTF8_SLICE])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def raw_value(value: object, decoder: msgspec.json.Decoder | None = None) -> object:
    """A field as the plain path has it: a Raw left by a typed decoder is decoded now, by
    ``decoder`` (the keys the adapter reads) when it is an object, else whole by orjson."""
    if type(value) is not msgspec.Raw:
        return value
    view = memoryview(value)
    if decoder is not None:
        try:
            return decoder.decode(view)
        except (msgspec.ValidationError, RecursionError):
            pass  # not an object (the adapter reports or ignores the value), or deep for this stack
    try:
        return orjson.loads(view)
    except orjson.JSONDecodeError:
        # Only a number orjson cannot hold (beyond a double) gets here: msgspec skipped it.
        return None


def string_literal(value: object) -> memoryview | None:
    """A Raw field's bytes when they are a JSON string (quotes included, as logged), else None."""
    if type(value) is msgspec.Raw:
        view = memoryview(value)
        if view[:1].tobytes() == b'"':
            return view
    return None


def head_records(head: bytes, limit: int) -> Iterator[object]:
    """The first ``limit`` JSON values of a file's ``head`` (what a detector reads): blank lines
    and lines that do not decode (the head may end mid-line) passed over."""
    seen = 0
    for raw in head.split(b"\n"):
        if seen == limit:
            return
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        seen += 1
        yield rec


def head_all(head: bytes, shaped: Callable[[object], bool], limit: int = 8) -> bool:
    """Whether the head holds a record and its first ``limit`` records are all ``shaped`` (a
    detector's test; never raises: detection must never break a scan)."""
    try:
        seen = False
        for rec in head_records(head, limit):
            if not shaped(rec):
                return False
            seen = True
        return seen
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def arguments(value: object, diags: Diagnostics, n: int | None, tool: str, said: str = "arguments are") -> dict:
    """A tool call's arguments as an object: none logged is ``{}``; anything but an object is a
    ``bad_arguments`` diagnostic (``said``: how the log's field is named in it) and ``{}`` too."""
    if isinstance(value, dict):
        return value
    if value is not None:
        diags.add("bad_arguments", n, f"{tool}: {said} a JSON {json_type(value)}")
    return {}


def json_arguments(raw: object, diags: Diagnostics, n: int | None, tool: str) -> object:
    """Arguments logged as JSON text, decoded (blank text: none, ``{}``); text that is not JSON is
    a ``bad_arguments`` diagnostic and None. Any other value is returned as it is."""
    if not isinstance(raw, str):
        return raw
    try:
        return orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        diags.add("bad_arguments", n, f"{tool}: arguments are not JSON")
        return None


def parse_ts(value: object) -> datetime | None:
    """Parse an ISO-8601 timestamp (``...Z`` or with offset) into an aware UTC datetime."""
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None  # a naive stamp cannot be placed in UTC; callers report it
    return dt


def record_ts(value: object, diags: Diagnostics, n: int) -> datetime | None:
    """A record's ISO time (:func:`parse_ts`), or None with a ``bad_timestamp`` diagnostic
    naming what the log has instead."""
    ts = parse_ts(value)
    if ts is None:
        diags.add("bad_timestamp", n, f"timestamp: {json_type(value)}")
    return ts


def spawn_fields(args: dict, type_key: str = "subagent_type") -> dict:
    """What a spawn call's arguments say of its child, as ``calls`` columns: the agent type (under
    ``type_key``), the task's description and a hash of its prompt (:func:`text_hash`)."""
    prompt = as_str(args.get("prompt"))
    return {
        "subagent_type": as_str(args.get(type_key)),
        "description": as_str(args.get("description")),
        "prompt_hash": text_hash(prompt) if prompt is not None else None,
    }


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_dict(value: object) -> dict:
    """A JSON object, or an empty one for anything else (null, a string, a list...)."""
    return value if isinstance(value, dict) else {}


def as_int(value: object) -> int:
    """A token count: ints (and whole floats) in the store's BIGINT range pass; everything else
    (null, strings, fractions, out-of-range numbers) counts as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and -(2**63) <= value < 2**63:  # the store's BIGINT range
        return value
    return 0


def json_type(value: object) -> str:
    """JSON type name of a decoded value, for diagnostic details (never the value itself)."""
    names = {bool: "bool", int: "int", float: "float", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def text_hash(text: str) -> str:
    """sha256 of a prompt, the same in every adapter so a child matches the call that spawned it
    across files and harnesses without any prompt text leaving the logs."""
    return hashlib.sha256(text.strip().encode("utf-8", "replace")).hexdigest()


def answer_hash(text: object) -> str | None:
    """sha256 of an answer as a print-mode run prints it and its caller captures it: line ends
    made ``\n`` (a Windows console writes ``\r\n``), surrounding blanks stripped. A shell call's
    output and a session's final answer hash alike, so the launch pass can tie them without any
    text leaving the logs; None for no text or only blanks (an empty output ties nothing)."""
    if not isinstance(text, str):
        return None
    text = text.replace("\r\n", "\n").strip()
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest() if text else None


def file_size(path: str) -> int | None:
    """The file's size in bytes (``sessions.source_bytes``), None when it cannot be read."""
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def read_document(path: str, diags: Diagnostics, max_bytes: int) -> bytes | None:
    """A whole-file JSON document's bytes (BOM and leading blanks removed), or None with a
    diagnostic: too big, unreadable or empty."""
    try:
        raw = read_bounded(path, max_bytes)
        if raw is None:
            diags.add("unreadable_file", None, f"larger than {max_bytes} bytes")
            return None
    except OSError as exc:
        diags.add("unreadable_file", None, type(exc).__name__)
        return None
    text = raw.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text:
        diags.add("empty_file", None, "no records")
        return None
    return text


# A UUID is searched for by its first hyphen and the hex groups after it: a pattern that starts
# with a literal lets the regex engine skip ahead with a fast scan, about 6x faster over large
# tool outputs than a pattern that starts with a character class (tried at every position).
_UUID_TAIL = re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = frozenset("0123456789abcdefABCDEF")


def find_uuids(text: str, *, bounded: bool = False) -> list[str]:
    """Every UUID in ``text`` in order, as ``re.findall`` of the plain UUID pattern gives them
    (``bounded``: of that pattern between ``\\b`` word boundaries)."""
    out: list[str] = []
    last_end = 0
    for m in _UUID_TAIL.finditer(text):
        start, end = m.start() - 8, m.end()
        if start < last_end or not all(c in _HEX for c in text[start : m.start()]):
            continue
        if bounded and ((start > 0 and _word(text[start - 1])) or (end < len(text) and _word(text[end]))):
            continue
        out.append(text[start:end])
        last_end = end
    return out


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"
