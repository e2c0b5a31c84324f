"""Rendering query results and summaries for the terminal, CSV, JSON and JSON lines.

Every value a store query can give has one rendering in every format (``tests/test_output.py``
runs each format over every table and view): DECIMAL and HUGEINT are exact numbers (JSON numbers
in JSON, their digits elsewhere), times are ISO 8601, BLOBs are hex, lists, structs and maps are
JSON (inside one CSV or table cell), NULL is ``null`` in JSON and empty elsewhere. Types polars
cannot hold (INTERVAL, UNION, BIT, BIGNUM) reach here as DuckDB's text (``Store.query``).
Log values are untrusted: what reaches a terminal goes through :func:`printable`, JSON carries
control and bidi characters as ``\\u`` escapes, and a CSV text cell that a spreadsheet would run
as a formula starts with ``'``.
"""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Literal

import orjson
import polars as pl

Format = Literal["table", "csv", "json", "jsonl"]
FORMATS: tuple[str, ...] = ("table", "csv", "json", "jsonl")
MAX_CELL = 60
_JSON = orjson.OPT_NON_STR_KEYS  # map keys may be numbers or dates

# Characters a terminal acts on instead of showing: C0 controls but newline and tab (ESC starts
# colour, cursor and OSC sequences, CR overwrites the line, BEL rings), DEL, C1 controls (0x9b is
# a one-byte CSI) and the bidirectional overrides, marks and isolates that reorder what is shown
# (Trojan Source). Log values are untrusted: every one the CLI prints shows these as escapes.
_CONTROLS = [
    *(c for c in range(0x20) if c not in (0x09, 0x0A)),
    *range(0x7F, 0xA0),
    0x061C,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
]
_PRINTABLE = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _CONTROLS}
# In JSON the same characters (orjson escapes C0 already) become \u escapes: the same JSON value,
# nothing for a terminal to act on. U+2028/2029 too, which some JSON readers take for line ends.
_JSON_SAFE = {c: f"\\u{c:04x}" for c in (*_CONTROLS, 0x2028, 0x2029) if c >= 0x7F}
# A CSV cell starting with one of these is a formula to a spreadsheet (OWASP CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def printable(text: str) -> str:
    """``text`` with every control character a terminal would act on shown as ``\\x1b``/``\\u202e``."""
    return text.translate(_PRINTABLE)


def _decimal(value: Decimal) -> str:
    # format(, "f"): HUGEINT arrives as Decimal(38, 0), whose str() would be 1.7E+38
    return format(value, "f")


def _default(value: object) -> object:
    """What orjson cannot write by itself."""
    if isinstance(value, Decimal):
        return orjson.Fragment(_decimal(value))  # an exact JSON number, not a rounded float
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, pl.Series):
        return value.to_list()
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def json_value(value: object) -> str:
    return orjson.dumps(value, default=_default, option=_JSON).decode()


def text(value: object) -> str:
    """One value as plain text (a CSV field): never cut."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, list | dict | tuple | pl.Series):
        return json_value(list(value) if isinstance(value, tuple) else value)
    return str(value)


def _cell(value: object) -> str:
    """One value in a table: lists as comma-separated items, long text cut to MAX_CELL."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        out = value.strftime("%Y-%m-%d %H:%M:%S")
    elif isinstance(value, list):
        out = ", ".join(_cell(v) for v in value)
    else:
        out = text(value)
    out = out.replace("\n", " ")
    return out if len(out) <= MAX_CELL else out[: MAX_CELL - 1] + "…"


def table(df: pl.DataFrame, *, wide: bool = False) -> str:
    """A plain aligned text table: no box drawing, so it pastes and greps cleanly. Long cells are
    cut to MAX_CELL, except ids (``*_id`` columns: they are there to be copied); ``wide`` cuts none."""
    headers = df.columns
    numeric = [df.schema[c].is_numeric() for c in headers]
    df, _ = _exact(df)

    def whole(v: object) -> str:
        return ", ".join(map(text, v)) if isinstance(v, list) else text(v).replace("\n", " ")

    cells = [whole if wide or c == "id" or c.endswith("_id") else _cell for c in headers]
    rows = [[cell(v) for cell, v in zip(cells, row, strict=True)] for row in df.iter_rows()]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]
    out.append(f"({df.height} row{'s' if df.height != 1 else ''})")
    return "\n".join(out)


def _exact(df: pl.DataFrame) -> tuple[pl.DataFrame, set[str]]:
    """DECIMAL columns as their exact digits: polars hands HUGEINT's 39-digit values to Python
    rounded to 38, its cast to text keeps them all."""
    names = {c for c, t in df.schema.items() if isinstance(t, pl.Decimal)}
    return (df.with_columns(pl.col(sorted(names)).cast(pl.String)) if names else df), names


def render(df: pl.DataFrame, fmt: Format, *, wide: bool = False) -> str:
    if fmt in ("json", "jsonl"):
        exact, names = _exact(df)
        rows = [
            {k: orjson.Fragment(v) if k in names and v is not None else v for k, v in row.items()}
            for row in exact.iter_rows(named=True)
        ]
        if fmt == "jsonl":
            return "\n".join(json_value(row) for row in rows).translate(_JSON_SAFE)
        return orjson.dumps(rows, default=_default, option=_JSON | orjson.OPT_INDENT_2).decode().translate(_JSON_SAFE)
    if fmt == "csv":
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow(df.columns)
        # A text cell a spreadsheet would run as a formula gets a leading ' (shown, not run);
        # numbers keep their sign.
        texts = [t == pl.String for t in df.schema.values()]
        out.writerows(
            [_unformula(text(v)) if is_text else text(v) for v, is_text in zip(row, texts, strict=True)]
            for row in _exact(df)[0].iter_rows()
        )
        return buf.getvalue().rstrip("\n")
    return table(df, wide=wide)


def _unformula(cell: str) -> str:
    return "'" + cell if cell.startswith(FORMULA_PREFIXES) else cell


def dumps(obj: object) -> str:
    return orjson.dumps(obj, default=_default, option=orjson.OPT_SORT_KEYS | _JSON).decode().translate(_JSON_SAFE)
