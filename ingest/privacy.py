"""The ingest privacy profile: what log text a store may hold (``sessiongraph ingest --privacy``).

The profiles are OCP's (``privacy.profile``):

- ``metadata_only`` (the default): no log text at all. The text columns of the frames are emptied,
  and an imported run document whose producer wrote it under ``full`` loses its ``ext`` payloads,
  the only place OCP lets text go. What the inference passes need from a shell command was already
  drawn out as metadata (``ingest.shell_facts``), so the graph is the same under both profiles.
- ``full``: shell commands and spawn descriptions are kept, with their secrets masked
  (``ingest.secrets``), and the adapters fill the ``texts`` frame (step text, masked and cut to
  ``--max-text-chars`` as it is read: ``ingest.steps``).

Under both profiles, the metadata a log's author fills freely (``MASKED_COLUMNS``: a remote URL
with a token in it, a branch or folder named ``API_KEY=...``) has its secrets masked too: no
credential reaches the store, a checkpoint or an export, whatever the profile.

``apply`` is the one step between a parse and the store: every frame the store writes went
through it.
"""

from __future__ import annotations

import orjson

from sessiongraph.ingest.errors import SessiongraphError
from sessiongraph.ingest.frames import PROFILES, Frames, Profile
from sessiongraph.ingest.secrets import mask
from sessiongraph.ingest.steps import STATE_MARK, TEXT_FIELDS

DEFAULT: Profile = "metadata_only"
# The frame columns that hold log text (everything else is ids, times, counts, names and paths).
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {"calls": ("command", "description")}
# Metadata columns whose values come from the log as written (URLs, names, folders), masked under
# every profile: ids, hashes, times and our own vocabularies are left alone.
MASKED_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": (
        "cwd",
        "git_branch",
        "git_repo",
        "harness_version",
        "model",
        "entrypoint",
        "originator",
        "slug",
        "agent_type",
        "state",
        "waiting_on",
        "status",
    ),
    "calls": ("cwd",),
    "launches": ("cwd", "output_file", "script"),
    "file_events": ("path",),
}
_MASKED_KEYS = frozenset(c for cols in MASKED_COLUMNS.values() for c in cols)


def check(profile: str) -> None:
    if profile not in PROFILES:
        raise SessiongraphError(f"unknown privacy profile {profile!r}; use one of {', '.join(PROFILES)}")


def apply(frames: Frames, profile: str = DEFAULT) -> Frames:
    """``frames`` as ``profile`` lets the store keep them."""
    check(profile)
    changed: dict[str, list[dict]] = {}
    for name, columns in TEXT_COLUMNS.items():
        rows = frames.rows(name)
        # A row without text stays as it is (most rows, most files: no copy).
        if any(row.get(c) is not None for row in rows for c in columns):
            changed[name] = [
                {**row, **{c: text(row.get(c), profile) for c in columns}}
                if any(row.get(c) is not None for c in columns)
                else row
                for row in rows
            ]
    masks: dict[str, str] = {}  # one mask per distinct value: a file's calls share a few cwds
    for name, columns in MASKED_COLUMNS.items():
        rows = changed.get(name) or frames.rows(name)
        out = None
        for i, row in enumerate(rows):
            fixed = {c: m for c in columns if (v := row.get(c)) and (m := _mask_once(v, masks)) != v}
            if fixed:
                out = out if out is not None else list(rows)
                out[i] = {**row, **fixed}
        if out is not None:
            changed[name] = out
    if profile != "full" and frames.height("texts"):
        changed["texts"] = []  # only a full parse fills it; never stored under another profile
    docs = frames.rows("documents")
    if docs:
        changed["documents"] = [{**d, "document": _document(d["document"], profile)} for d in docs]
    return frames.replace(**changed) if changed else frames


def _mask_once(value, masks: dict[str, str]):
    if type(value) is not str:
        return value
    done = masks.get(value)
    if done is None:
        done = masks[value] = mask(value) or value
    return done


def text(value: str | None, profile: str) -> str | None:
    """One log text as ``profile`` keeps it: gone, or with its secrets masked."""
    if value is None or profile != "full":
        return None
    return mask(value)


def scrub_state(state, profile: str):
    """A parser state (``ingest.resume``) as ``profile`` lets a checkpoint keep it: the call rows
    in it (dicts with a ``call_id``) lose or mask their text columns."""
    if type(state) is dict and STATE_MARK in state:  # a StepLog: its rows hold no text, its texts do
        if profile == "full":
            return state  # its texts were masked as they were made (ingest.steps): nothing to walk
        texts = [
            [None] * len(col) if name == "text" else col for name, col in zip(TEXT_FIELDS, state["texts"], strict=True)
        ]
        return {**state, "texts": texts}
    if type(state) is dict:  # exactly: a Counter of model names stays a Counter
        out = {k: scrub_state(v, profile) if type(v) in _NESTED else v for k, v in state.items()}
        if "call_id" in state:
            for c in TEXT_COLUMNS["calls"]:
                if c in out:
                    out[c] = text(out[c], profile)
        for c in _MASKED_KEYS.intersection(state):  # session and call rows carried in the state
            if type(out[c]) is str:
                out[c] = mask(out[c])
        if "cut_chars" in state and profile != "full":  # a texts row as a dict (none is made now)
            out["text"] = None
        return out
    if type(state) is list:
        return [scrub_state(v, profile) if type(v) in _NESTED else v for v in state]
    if type(state) is tuple:
        return tuple([scrub_state(v, profile) if type(v) in _NESTED else v for v in state])
    return state


# What scrub_state looks into; anything else is returned as it is without a call (a checkpoint's
# state holds hundreds of thousands of strings and numbers).
_NESTED = frozenset({dict, list, tuple})


def _document(text: str, profile: str) -> str:
    doc = orjson.loads(text)
    privacy = doc.get("privacy") if isinstance(doc.get("privacy"), dict) else {}
    if profile != "full" and privacy.get("profile") == "full":
        doc = without_ext(doc)
        doc["privacy"] = {"profile": "metadata_only", "note": "ext removed on import: a metadata_only store"}
    return orjson.dumps(_masked(doc), option=orjson.OPT_SORT_KEYS).decode()


def without_ext(value):
    """A JSON value with every ``ext`` member removed, at any depth (OCP keeps text only there)."""
    if isinstance(value, dict):
        return {k: without_ext(v) for k, v in value.items() if k != "ext"}
    if isinstance(value, list):
        return [without_ext(v) for v in value]
    return value


def _masked(value):
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return mask(value) if isinstance(value, str) else value
