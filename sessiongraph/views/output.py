"""Rendering query results and summaries for the terminal, CSV and JSON."""

from __future__ import annotations

import io
from datetime import datetime
from typing import Literal

import orjson
import polars as pl

Format = Literal["table", "csv", "json"]
MAX_CELL = 60


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
        return orjson.dumps(df.to_dicts(), option=orjson.OPT_INDENT_2).decode()
    if fmt == "csv":
        buf = io.StringIO()
        # CSV has no list type: lists become JSON arrays in one cell.
        flat = df.with_columns(
            pl.col(c).map_elements(lambda v: orjson.dumps(list(v)).decode(), return_dtype=pl.String)
            for c, t in df.schema.items()
            if isinstance(t, pl.List)
        )
        flat.write_csv(buf)
        return buf.getvalue().rstrip("\n")
    return table(df)


def dumps(obj: object) -> str:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
