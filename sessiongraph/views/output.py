"""Rendering query results and summaries for the terminal, CSV and JSON."""

from __future__ import annotations

import io
from datetime import datetime
from typing import Literal

import orjson
import polars as pl

Format = Literal["table", "csv", "json"]
MAX_CELL = 60

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


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, list):
        text = ", ".join(_cell(v) for v in value)
    else:
        text = str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(df: pl.DataFrame) -> str:
    """A plain aligned text table: no box drawing, so it pastes and greps cleanly."""
    headers = df.columns
    rows = [[_cell(v) for v in row] for row in df.iter_rows()]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    numeric = [df.schema[c].is_numeric() for c in headers]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]
    out.append(f"({df.height} row{'s' if df.height != 1 else ''})")
    return "\n".join(out)


def render(df: pl.DataFrame, fmt: Format) -> str:
    if fmt == "json":
        return orjson.dumps(df.to_dicts(), option=orjson.OPT_INDENT_2).decode().translate(_JSON_SAFE)
    if fmt == "csv":
        buf = io.StringIO()
        # CSV has no list type: lists become JSON arrays in one cell.
        flat = df.with_columns(
            pl.col(c).map_elements(lambda v: orjson.dumps(list(v)).decode(), return_dtype=pl.String)
            for c, t in df.schema.items()
            if isinstance(t, pl.List)
        )
        # A text cell a spreadsheet would run as a formula gets a leading ' (shown, not run);
        # numbers keep their sign.
        flat = flat.with_columns(
            pl.when(_formula(pl.col(c))).then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
            for c, t in flat.schema.items()
            if t == pl.String
        )
        flat.write_csv(buf)
        return buf.getvalue().rstrip("\n")
    return table(df)


def _formula(col: pl.Expr) -> pl.Expr:
    return pl.any_horizontal(col.str.starts_with(p) for p in FORMULA_PREFIXES)


def dumps(obj: object) -> str:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode().translate(_JSON_SAFE)
