"""The ingest privacy profile: what log text a store may hold (``sessiongraph ingest --privacy``).

The profiles are OCP's (``privacy.profile``):

- ``metadata_only`` (the default): no log text at all. The text columns of the frames are emptied,
  and an imported run document whose producer wrote it under ``full`` loses its ``ext`` payloads,
  the only place OCP lets text go. What the inference passes need from a shell command was already
  drawn out as metadata (``ingest.shell_facts``), so the graph is the same under both profiles.
- ``full``: shell commands and spawn descriptions are kept, with their secrets masked
  (``ingest.secrets``).

``apply`` is the one step between a parse and the store: every frame the store writes went
through it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import orjson
import polars as pl

from ingest.frames import Frames
from ingest.secrets import mask
from sessiongraph.errors import SessiongraphError

Profile = Literal["metadata_only", "full"]
PROFILES: tuple[str, ...] = ("metadata_only", "full")
DEFAULT: Profile = "metadata_only"
# The frame columns that hold log text (everything else is ids, times, counts, names and paths).
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {"calls": ("command", "description")}


def check(profile: str) -> None:
    if profile not in PROFILES:
        raise SessiongraphError(f"unknown privacy profile {profile!r}; use one of {', '.join(PROFILES)}")


def apply(frames: Frames, profile: str = DEFAULT) -> Frames:
    """``frames`` as ``profile`` lets the store keep them."""
    check(profile)
    changed: dict[str, pl.DataFrame] = {}
    for name, columns in TEXT_COLUMNS.items():
        df = getattr(frames, name)
        if profile == "full":
            text = [pl.col(c).map_elements(mask, return_dtype=pl.String) for c in columns]
        else:
            text = [pl.lit(None, pl.String).alias(c) for c in columns]
        changed[name] = df.with_columns(text) if df.height else df
    docs = frames.documents
    if docs.height:
        changed["documents"] = docs.with_columns(
            pl.col("document").map_elements(lambda d: _document(d, profile), return_dtype=pl.String)
        )
    return replace(frames, **changed)


def _document(text: str, profile: str) -> str:
    doc = orjson.loads(text)
    privacy = doc.get("privacy") if isinstance(doc.get("privacy"), dict) else {}
    if profile != "full" and privacy.get("profile") == "full":
        doc = _without_ext(doc)
        doc["privacy"] = {"profile": "metadata_only", "note": "ext removed on import: a metadata_only store"}
    return orjson.dumps(_masked(doc), option=orjson.OPT_SORT_KEYS).decode()


def _without_ext(value):
    if isinstance(value, dict):
        return {k: _without_ext(v) for k, v in value.items() if k != "ext"}
    if isinstance(value, list):
        return [_without_ext(v) for v in value]
    return value


def _masked(value):
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return mask(value) if isinstance(value, str) else value
