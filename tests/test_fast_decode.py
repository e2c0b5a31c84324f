"""The Claude Code and Codex adapters' fast decoding (msgspec, only the fields the parser reads)
gives the frames of the plain decoding (orjson, every field): on every sample, broken sample,
corpus and real-family file, and on lines mutated to have fields of other types, missing fields,
bad bytes and garbage."""

from __future__ import annotations

import os
import re
import shutil

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from sessiongraph.ingest import claude_code, codex, resume
from sessiongraph.ingest.claude_code import decoding as claude_decoding
from sessiongraph.ingest.claude_code import pairing as claude_pairing
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.jsonl import Diagnostics, decode_line, raw_value
from tests.conftest import CORPUS, SAMPLES

EXAMPLES = int(os.environ.get("SESSIONGRAPH_FUZZ_EXAMPLES", "25"))
BROKEN = SAMPLES / "broken"
REAL_FAMILIES = CORPUS.parent / "real-families"
ADAPTERS = {"claude-code": claude_code, "codex": codex}


def _files(root) -> list[tuple]:
    """(adapter, path) of every Claude and Codex log under ``root``; the broken samples go
    through both adapters (they are Claude transcripts and junk, even the empty one)."""
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.rglob("*.jsonl")):
        if BROKEN in p.parents:
            out += [(claude_code, p), (codex, p)]
        elif (harness := classify(str(p)).harness) in ADAPTERS:
            out.append((ADAPTERS[harness], p))
    return out


def _ids(files, root) -> list[str]:
    return [f"{mod.NAME}:{p.relative_to(root)}" for mod, p in files]


SAMPLE_FILES = _files(SAMPLES)
CORPUS_FILES = _files(CORPUS) + _files(REAL_FAMILIES)


def _both(mod, path) -> tuple:
    """(plain frames, fast frames) of one file."""
    out, was = [], mod.DECODE
    try:
        for mode in ("plain", "fast"):
            mod.DECODE = mode
            out.append(mod.parse(str(path)))
    finally:
        mod.DECODE = was
    return tuple(out)


def _assert_same(mod, path) -> None:
    plain, fast = _both(mod, path)
    for name, table in plain.tables().items():
        try:
            assert_frame_equal(fast.table(name), table, check_row_order=True)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.mark.parametrize(("mod", "path"), SAMPLE_FILES, ids=_ids(SAMPLE_FILES, SAMPLES))
def test_samples_fast_equals_plain(mod, path):
    _assert_same(mod, path)


@pytest.mark.skipif(not CORPUS_FILES, reason=f"real-log corpus not found at {CORPUS}")
@pytest.mark.parametrize(("mod", "path"), CORPUS_FILES, ids=_ids(CORPUS_FILES, CORPUS.parent))
def test_corpus_fast_equals_plain(mod, path):
    _assert_same(mod, path)


def test_every_kind_of_file_is_compared():
    """Both adapters, the broken samples, and (where it is present) every real Claude/Codex file."""
    assert {m.NAME for m, _ in SAMPLE_FILES} == set(ADAPTERS)
    if CORPUS.is_dir():
        reals = {p for _, p in CORPUS_FILES}
        for folder in (CORPUS / "claude-code", CORPUS / "codex", REAL_FAMILIES):
            assert set(folder.rglob("*.jsonl")) <= reals


def test_samples_cover_the_broken_files():
    assert {p.name for _, p in SAMPLE_FILES if BROKEN in p.parents} >= {
        "array-line.jsonl",
        "empty.jsonl",
        "invalid-utf8.jsonl",
        "not-json.jsonl",
        "truncated.jsonl",
        "unknown-type.jsonl",
        "wrong-type.jsonl",
        "bad-timestamp.jsonl",
    }


def test_tool_bodies_are_not_decoded():
    body = "x" * 100_000
    line = (
        orjson.dumps(
            {
                "type": "user",
                "sessionId": "s",
                "extra": {"big": body},
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": body}]},
                "toolUseResult": {"stdout": body},
            }
        )
        + b"\n"
    )
    rec = claude_code.decode_fast(line, 1, Diagnostics("x"))
    assert set(rec) == {"type", "sessionId", "message", "toolUseResult"}
    assert isinstance(rec["toolUseResult"], msgspec.Raw)
    assert isinstance(rec["message"]["content"][0]["content"], msgspec.Raw)
    assert claude_decoding._val(rec["toolUseResult"], claude_decoding._SIDECAR) == {"stdout": body}


def test_codex_bodies_are_not_decoded():
    body = "y" * 100_000
    rec = {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item"}
    reasoning = {**rec, "payload": {"type": "reasoning", "encrypted_content": body, "summary": [{"text": body}]}}
    message = {**rec, "payload": {"type": "message", "role": "assistant", "content": [{"text": body}]}}
    ended = {**rec, "type": "event_msg", "payload": {"type": "exec_command_end", "exit_code": 0, "stdout": body}}
    fast = [codex.decode_fast(orjson.dumps(r) + b"\n", 1, Diagnostics("x")) for r in (reasoning, message, ended)]
    # the encrypted reasoning is skipped; its readable summary is kept undecoded for the step
    assert set(fast[0]["payload"]) == {"type", "summary"} and isinstance(fast[0]["payload"]["summary"], msgspec.Raw)
    assert isinstance(fast[1]["payload"]["content"], msgspec.Raw)
    assert isinstance(fast[2]["payload"]["stdout"], msgspec.Raw)
    assert raw_value(fast[2]["payload"]["stdout"]) == body


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, list | tuple | set | frozenset):
        for v in obj:
            yield from _strings(v)


def _tool_texts(path) -> set[str]:
    """Tool outputs and prompts of a transcript: text no checkpoint may hold (paths and commands
    may be kept; the privacy profile scrubs commands)."""
    out = set()
    for raw in path.read_bytes().splitlines():
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        content = msg.get("content") if isinstance(msg, dict) else None
        payload = rec.get("payload") if isinstance(rec, dict) else None
        if isinstance(payload, dict):  # Codex: outputs, messages, reasoning
            keys = ("output", "content", "message", "aggregated_output", "summary", "encrypted_content")
            out |= {t for t in _strings([payload.get(k) for k in keys]) if len(t) > 40 and len(t.split()) > 1}
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict):
                block = [block.get("content"), block.get("text")]
            out |= {t for t in _strings(block) if len(t) > 40 and len(t.split()) > 1}  # not a bare path
    return out


@pytest.mark.parametrize(("mod", "path"), SAMPLE_FILES, ids=_ids(SAMPLE_FILES, SAMPLES))
def test_fast_checkpoint_state_is_plain_data_without_log_text(mod, path, monkeypatch):
    monkeypatch.setattr(resume, "MIN_BYTES", 0)
    monkeypatch.setattr(mod, "DECODE", "fast")
    _, checkpoint = mod.parse_from(str(path))
    if checkpoint is None:  # no complete line
        return
    state = resume.loads(checkpoint.state)  # raises on anything but plain data (a msgspec.Raw)
    assert not set(_strings(state)) & _tool_texts(path)


def test_known_difference_a_number_past_a_double_in_an_unread_field():
    """The one line the paths read differently (see the ingest.claude_code package doc): orjson rejects a
    number beyond a double's range, msgspec skips it unchecked where the parser reads nothing.
    Read fields are checked: message.usage is decoded by orjson on both paths."""
    skipped = b'{"type":"user","sessionId":"s","durationMs":1e999}\n'
    usage = b'{"type":"assistant","sessionId":"s","message":{"usage":{"input_tokens":1e999}}}\n'
    for line, fast_reads in ((skipped, True), (usage, False)):
        plain, fast = Diagnostics("x"), Diagnostics("x")
        assert decode_line(line, 1, plain) is None and plain.rows[0]["code"] == "invalid_json"
        assert (claude_code.decode_fast(line, 1, fast) is not None) == fast_reads
        assert fast.rows == ([] if fast_reads else plain.rows)


# -- mutated lines ---------------------------------------------------------------------------

# Integers past 64 bits are floats to orjson and ints to msgspec (orjson cannot write them: they
# go in as a marked string, replaced after dumps).
_LIT = "\x00lit:"
_LIT_JSON = re.compile(rb'"\\u0000lit:([^"]*)"')
# Values of every JSON type.
VALUES = [
    None,
    3,
    -1.5,
    0,
    "",
    "str",
    [1],
    [],
    {"k": []},
    {},
    True,
    False,
    2**64 - 1,
    _LIT + str(2**64),
    _LIT + str(-(2**63) - 1),
    _LIT + "1" + "0" * 30,
    _LIT + "1e300",
]
# Whole lines: not JSON, not an object, bad bytes, a lone surrogate, nesting past orjson's limit.
GARBAGE = [
    b"not json at all",
    b"{",
    b"[1, 2, 3]",
    b'"just a string"',
    b"42",
    b"null",
    b"\xff\xfe\xfa",
    b"{}",
    b'{"type": 7}',
    b'{"type": "user", "sessionId": 5}',
    b'{"type": "user", "message": "' + b"x" * 5000 + b'"}',
    b'{"type": "user", "x": "\\ud800"}',
    b'{"type": "user", "x": ' + b"[" * 1100 + b"]" * 1100 + b"}",
    b'{"type": "user", "x": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    b'{"type": "summary", "x": "\xc0\xaf"}',
    b'{"type": "user", "type": "assistant"}',
    b'{"type": "user",}',
    b'{"type": "user", "x": NaN}',
]


def _paths(obj, prefix=()) -> list[tuple]:
    """Every key path into a decoded record (objects and arrays), the record itself first."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _set(obj, path: tuple, value, drop: bool):
    if not path:
        return value
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


def _mutate_field(raw: bytes, choice: int, value, drop: bool) -> bytes:
    """One value anywhere in the record (a top-level field, message.content, a block's input,
    toolUseResult...) replaced by a value of another type, or dropped."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    paths = _paths(rec)
    try:
        out = orjson.dumps(_set(rec, paths[choice % len(paths)], value, drop))
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        return raw
    return _LIT_JSON.sub(rb"\1", out)


def _mutate_bytes(raw: bytes, choice: int, kind: str) -> bytes:
    at = choice % max(len(raw), 1)
    if kind == "bad_utf8":  # anywhere: in a skipped string, in a key, between tokens
        return raw[:at] + b"\xff" + raw[at:]
    if kind == "cut_utf8":  # half of a multi-byte character
        return raw[:at] + "é".encode()[:1] + raw[at:]
    if kind == "surrogate":  # a lone surrogate escape inside the first long string
        return re.sub(rb'":"([^"\\]{3})', rb'":"\\udc00\1', raw, count=1)
    if kind == "big_number":  # a number orjson reads as a float, in an unread field
        return raw.replace(b"{", b'{"zz":123456789012345678901234567890,', 1)
    if kind == "dup_key":  # orjson keeps the last of duplicate keys
        return raw.replace(b"{", b'{"type":"assistant","message":7,', 1)
    return raw[:at]  # truncated


@st.composite
def mutations(draw, n_lines: int):
    ops = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["field", "drop", "garbage", "bytes", "dup", "truncate_last"]))
        ops.append(
            (
                kind,
                draw(st.integers(0, max(n_lines - 1, 0))),
                draw(st.integers(0, 100_000)),
                draw(st.sampled_from(VALUES)),
                draw(st.sampled_from(GARBAGE)),
                draw(st.sampled_from(["bad_utf8", "cut_utf8", "surrogate", "big_number", "dup_key", "cut"])),
            )
        )
    return ops


def _apply(lines: list[bytes], ops) -> bytes:
    work = list(lines)
    for kind, i, choice, value, junk, how in ops:
        i = min(i, len(work) - 1) if work else 0
        if kind == "garbage" or not work:
            work.insert(i, junk)
        elif kind in ("field", "drop"):
            work[i] = _mutate_field(work[i], choice, value, kind == "drop")
        elif kind == "bytes":
            work[i] = _mutate_bytes(work[i], choice, how)
        elif kind == "dup":
            work.insert(i, work[i])
        else:
            work[-1] = work[-1][: choice % max(len(work[-1]), 1)]
    body = b"\n".join(work)
    return body if ops[-1][0] == "truncate_last" else body + b"\n"


FUZZ_FILES = [(m, p) for m, p in SAMPLE_FILES if BROKEN not in p.parents]


FUZZ_IDS = [f"{m.NAME}:{p.name[:40]}" for m, p in FUZZ_FILES]


def _assert_same_body(tmp_path, mod, path, body: bytes) -> None:
    """``body`` written where ``path`` sits in the samples (with its sidecar), read both ways."""
    target = tmp_path / "x" / path.relative_to(SAMPLES)  # the layout names the session kind
    if target.parent.exists():
        shutil.rmtree(target.parent)
    target.parent.mkdir(parents=True)
    sidecar = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    if sidecar.exists():
        shutil.copy(sidecar, target.with_name(sidecar.name))
    target.write_bytes(body)
    _assert_same(mod, target)


# derandomize: the same examples in every checkout and run (seeded by the test and its id, no
# example database), so a failure seen in one checkout is seen in all; SESSIONGRAPH_FUZZ_EXAMPLES
# widens the search.
@pytest.mark.parametrize(("mod", "path"), FUZZ_FILES, ids=FUZZ_IDS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_mutated_lines_fast_equals_plain(tmp_path, mod, path, data):
    lines = path.read_bytes().splitlines()
    _assert_same_body(tmp_path, mod, path, _apply(lines, data.draw(mutations(len(lines)))))


CLAUDE_FUZZ = [(m, p) for m, p in FUZZ_FILES if m is claude_code]


@pytest.mark.parametrize(("mod", "path"), CLAUDE_FUZZ, ids=[f"claude-code:{p.name[:40]}" for _, p in CLAUDE_FUZZ])
def test_sidecars_of_unread_keys_fast_equals_plain(tmp_path, mod, path):
    """Every toolUseResult replaced by an object of keys the parser never reads (found by the
    property on a teammate spawn: the fast path decodes such a sidecar to {}, the plain path
    did not, and only an empty one let the result text name the teammate)."""
    lines = []
    for raw in path.read_bytes().splitlines():
        rec = orjson.loads(raw)
        if isinstance(rec, dict) and "toolUseResult" in rec:
            raw = orjson.dumps({**rec, "toolUseResult": {"k": []}})
        lines.append(raw)
    _assert_same_body(tmp_path, mod, path, b"\n".join(lines) + b"\n")


def test_teammate_named_by_the_result_text_when_the_sidecar_says_nothing():
    """A teammate spawn (an Agent call with team_name) whose sidecar holds no field about the spawn:
    both paths take the teammate from the result text, whatever else the sidecar holds."""
    call = {"tool": "Agent", "team_name": "review"}
    block = {"content": [{"type": "text", "text": "Spawned successfully.\nagent_id: lexer@review\nname: lexer"}]}
    for sidecar in ({}, {"k": []}, {"color": "blue", "status": None}, "Spawned", None):
        assert claude_pairing._spawned(call, sidecar, block) == "lexer@review", sidecar
    # a sidecar that says it is a subagent's result is read as one
    assert claude_pairing._spawned(call, {"status": "completed", "agentId": "a1"}, block) == "a1"


# -- UUIDs in shell output -------------------------------------------------------------------


def _ids_plain(texts: list[str]) -> list[str]:
    """The scan _output_ids replaces: UUID.findall over each text."""
    ids: list[str] = []
    for text in texts:
        for found in claude_decoding.UUID.findall(text):
            found = found.lower()
            if found not in ids and len(ids) < claude_pairing.MAX_OUTPUT_IDS:
                ids.append(found)
    return ids


UUIDISH = st.text(alphabet="0123456789abcdefABCDEF-- x\n", max_size=400)
PARTS = st.one_of(UUIDISH, st.uuids().map(str), st.uuids().map(lambda u: str(u).upper() + "0"))


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(PARTS, max_size=30).map(lambda parts: ["".join(parts[i::3]) for i in range(3)]))
def test_output_ids_equal_findall(texts):
    assert claude_pairing._output_ids(texts) == _ids_plain(texts)


def test_output_ids_overlapping_and_many():
    u = "0123abcd-0123-4567-89ab-0123456789ab"
    # findall skips a UUID that overlaps the one before (here at 28, in the first one's tail)
    texts = [u + "-1234-5678-9abc-def012345678", "x" + u[1:], " ".join(f"{i:08x}" + u[8:] for i in range(50))]
    assert claude_pairing._output_ids(texts) == _ids_plain(texts)
    assert len(claude_pairing._output_ids(texts)) == claude_pairing.MAX_OUTPUT_IDS


# Pieces of unified-exec outputs: the header lines the parser reads and the `Output:` line it stops at.
EXEC_PIECES = st.sampled_from(
    ["\nOutput:", "Output:", "\n", "Process running with session ID 7", "Exit code: 3", "Process exited with code -1"]
)
EXEC_OUTPUT = st.lists(st.one_of(EXEC_PIECES, st.text(alphabet="x \n:", max_size=600)), max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=EXEC_OUTPUT)
def test_output_header_facts_equal_a_full_scan(text):
    """A Codex output's process ids and exit code are read from its header alone (the part before
    `Output:`): the same as testing the whole text for the process line first."""
    from sessiongraph.ingest.codex import pairing as codex_pairing
    from sessiongraph.ingest.codex.records import _Rollout

    got = _Rollout("x.jsonl")._output_facts({"call_id": "c1", "output": text}, None, 1)
    head = codex_pairing._header(text)
    procs = [m.group(1) for m in codex_pairing._PROC.finditer(head)] if codex_pairing._PROC_TEXT in text else []
    m = codex_pairing._EXIT.search(head[:1000])
    assert (got.procs, got.exit_code) == (procs, int(m.group(1)) if m else None)
