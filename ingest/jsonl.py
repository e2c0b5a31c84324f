"""Reading JSON Lines logs defensively: every line either yields a record or a diagnostic."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import orjson


@dataclass(slots=True)
class Diagnostics:
    """Collects diagnostics rows for one file (the ``diagnostics`` frame's columns)."""

    source_path: str
    harness: str | None = None
    rows: list[dict] = field(default_factory=list)

    def add(self, code: str, line: int | None = None, detail: str = "") -> None:
        self.rows.append(
            {
                "source_path": self.source_path,
                "line": line,
                "code": code,
                "detail": detail[:200],
                "harness": self.harness,
            }
        )


def read_records(path: str, diags: Diagnostics) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for every JSON-object line of ``path`` (1-based lines).

    Bad lines become diagnostics and are skipped; a file that cannot be opened yields nothing
    and records ``unreadable_file``. Lines are read as bytes so invalid UTF-8 is caught per line.
    """
    try:
        fh = open(path, "rb")
    except OSError as exc:
        diags.add("unreadable_file", None, type(exc).__name__)
        return
    n = 0
    any_content = False
    with fh:
        try:
            for n, raw in enumerate(fh, start=1):  # noqa: B007 - n is read after the loop
                if not raw.strip():
                    continue
                any_content = True
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


def read_document(path: str, diags: Diagnostics, max_bytes: int) -> bytes | None:
    """A whole-file JSON document's bytes (BOM and leading blanks removed), or None with a
    diagnostic: too big, unreadable or empty."""
    try:
        if os.path.getsize(path) > max_bytes:
            diags.add("unreadable_file", None, f"larger than {max_bytes} bytes")
            return None
        with open(path, "rb") as fh:
            raw = fh.read()
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
