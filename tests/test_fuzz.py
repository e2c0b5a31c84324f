"""Mutated sample logs never crash an adapter: every bad line is a diagnostic, every good line's
data is still there. ``make fuzz`` runs the same properties with many more examples."""

from __future__ import annotations

import os
import re
import shutil

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessiongraph.ingest import registry
from sessiongraph.ingest.discover import classify
from tests.conftest import SAMPLES

EXAMPLES = int(os.environ.get("SESSIONGRAPH_FUZZ_EXAMPLES", "25"))
COPIED_LINES = re.compile(r"\(lines (\d+)-(\d+)\)")


def _sample_files() -> list[tuple[str, str]]:
    """One (harness, file) per JSON Lines sample of every installed adapter."""
    out = []
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        if "broken" in path.parts or path.name == "history.jsonl":
            continue
        found = classify(str(path))
        if found.harness and found.harness != "ocp":
            out.append((found.harness, str(path)))
    return out


FILES = _sample_files()

GARBAGE = st.sampled_from(
    [
        b"not json at all",
        b"{",
        b"[1, 2, 3]",
        b'"just a string"',
        b"42",
        b"null",
        b"\xff\xfe\xfa",
        b'{"type": "hologram", "x": 1}',
        b'{"type": 7}',
        b"{}",
        b'{"timestamp": "yesterday", "type": "user"}',
        b'{"a": ' * 200 + b"1" + b"}" * 200,
        b'{"type": "user", "message": "' + b"x" * 200_000 + b'"}',
    ]
)


def _flip_types(raw: bytes, choice: int) -> bytes:
    """Replace one field of a record by a value of another JSON type."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    if not isinstance(rec, dict) or not rec:
        return raw
    keys = sorted(rec)
    key = keys[choice % len(keys)]
    rec[key] = [None, 3, "str", [1], {"k": []}, True][choice % 6]
    return orjson.dumps(rec)


@st.composite
def mutations(draw, n_lines: int):
    ops = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["drop", "dup", "garbage", "flip", "truncate_last"]))
        ops.append((kind, draw(st.integers(0, max(n_lines - 1, 0))), draw(GARBAGE), draw(st.integers(0, 10_000))))
    return ops


def _call_ids(raw: bytes) -> set[str]:
    """Tool-call ids a good line introduces (Claude tool_use ids, Codex call ids)."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return set()
    ids = set()
    msg = rec.get("message") if isinstance(rec, dict) else None
    if isinstance(msg, dict) and isinstance(msg.get("content"), list):
        ids |= {b["id"] for b in msg["content"] if isinstance(b, dict) and b.get("type") == "tool_use" and "id" in b}
    payload = rec.get("payload") if isinstance(rec, dict) else None
    if isinstance(payload, dict) and payload.get("type") in ("function_call", "custom_tool_call"):
        if isinstance(payload.get("call_id"), str):
            ids.add(payload["call_id"])
    return ids


@pytest.mark.parametrize("harness, path", FILES, ids=[os.path.basename(p)[:40] for _, p in FILES])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_logs_never_crash_and_keep_good_lines(tmp_path, harness, path, data):
    lines = open(path, "rb").read().splitlines()
    # Each line is (bytes, is_original): originals keep their data; the rest must be diagnosed or used.
    work = [(raw, True) for raw in lines]
    ops = data.draw(mutations(len(lines)))
    for kind, i, junk, choice in ops:
        i = min(i, len(work) - 1) if work else 0
        if kind == "drop" and work:
            work.pop(i)
        elif kind == "dup" and work:
            work.insert(i, (work[i][0], False))
        elif kind == "garbage":
            work.insert(i, (junk, False))
        elif kind == "flip" and work:
            work[i] = (_flip_types(work[i][0], choice), False)
        elif kind == "truncate_last" and work:
            raw = work[-1][0]
            work[-1] = (raw[: choice % max(len(raw), 1)], False)
    body = b"\n".join(raw for raw, _ in work)
    if ops[-1][0] != "truncate_last":  # a cut last line has no newline, like a file being written
        body += b"\n"
    target = tmp_path / "x" / os.path.relpath(path, SAMPLES)
    if target.parent.exists():
        shutil.rmtree(target.parent)
    target.parent.mkdir(parents=True)
    # Sidecars (Claude meta.json) travel with their transcript.
    sidecar = path[: -len(".jsonl")] + ".meta.json"
    if os.path.exists(sidecar):
        shutil.copy(sidecar, str(target)[: -len(".jsonl")] + ".meta.json")
    target.write_bytes(body)

    frames = registry.get(harness).parse(str(target))  # must not raise

    diag_lines = set(frames.diagnostics["line"].drop_nulls().to_list())
    # Records copied from another session are left out on purpose; their diagnostic names them.
    for detail in frames.diagnostics.filter(pl.col("code") == "foreign_record")["detail"]:
        m = COPIED_LINES.search(detail)
        if m:
            diag_lines |= set(range(int(m.group(1)), int(m.group(2)) + 1))
    for n, (raw, _original) in enumerate(work, start=1):
        if not raw.strip():
            continue
        try:
            ok = isinstance(orjson.loads(raw), dict)
        except orjson.JSONDecodeError:
            ok = False
        if not ok:
            assert n in diag_lines, f"bad line {n} has no diagnostic"
    if frames.sessions.height:  # the file still has an identity: good lines' calls are kept
        kept = set(frames.calls["call_id"].to_list())
        for n, (raw, original) in enumerate(work, start=1):
            if original and n not in diag_lines:
                assert _call_ids(raw) <= kept, f"line {n} lost its calls"
