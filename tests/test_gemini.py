"""Gemini CLI adapter: exact frames of the sample chats and the real corpus chats, bad input,
and which files it claims."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessiongraph.ingest import gemini
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "gemini-cli"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
LUMEN = "/home/dev/projects/lumen-api"
TIDE = "/home/dev/projects/tidewater"
HASH_A = hashlib.sha256(LUMEN.encode()).hexdigest()
HASH_B = hashlib.sha256(TIDE.encode()).hexdigest()
CHAT = SAMPLES / "tmp" / HASH_A / "chats" / "session-2026-02-03T09-12-7c1e4b2a.json"
CHAT_JSONL = SAMPLES / "tmp" / HASH_B / "chats" / "session-2026-03-10T14-05-3f9a0c11.jsonl"
PROMPT_LOG = SAMPLES / "tmp" / HASH_A / "logs.json"
CLAUDE_CHILD = (
    SAMPLES / "launched-claude/projects/-home-dev-projects-lumen-api/e3b4c2d1-7a6f-4c58-9d2e-0f1a2b3c4d5e.jsonl"
)


def at(day: str, hms: str) -> datetime:
    return datetime.fromisoformat(f"{day}T{hms}+00:00").astimezone(UTC)


def _head(path: Path) -> bytes:
    return path.read_bytes()[:65536]


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


# -- detection ---------------------------------------------------------------------------------


def _others(tmp_path: Path) -> dict[str, Path]:
    samples = ROOT / "sample_logs"
    files = {
        "claude": CLAUDE_CHILD,
        "codex": next((samples / "codex/sessions").rglob("*.jsonl")),
        "ocp": next((samples / "ocp").glob("*.ocp.json")),
        "prickle": samples / "prickle/tasks.json",
        "opencode_session": next((samples / "opencode/storage/session").rglob("*.json")),
    }
    extra = {
        "settings.json": {
            "general": {"sessionRetention": {"maxAge": "7d"}},
            "security": {"auth": {"selectedType": "oauth-personal"}},
        },
        "checkpoint-v1.json": [
            {"role": "user", "parts": [{"text": "hello"}]},
            {"role": "model", "parts": [{"text": "hi"}]},
        ],
        "random.json": {"sessionId": "not-a-chat", "type": "user"},
        "numbers.json": [1, 2, 3],
        "messages-only.json": {"messages": [], "sessionId": 7},
    }
    for name, obj in extra.items():
        (tmp_path / name).write_text(json.dumps(obj))
        files[name] = tmp_path / name
    return files


def test_detect_claims_its_chats_and_prompt_log_only(tmp_path):
    for path in (CHAT, CHAT_JSONL, PROMPT_LOG):
        assert gemini.detect(str(path), _head(path)), path.name
        assert classify(str(path)).harness == "gemini-cli", path.name
    for name, path in _others(tmp_path).items():
        assert not gemini.detect(str(path), _head(path)), name
    assert not gemini.detect("x.json", b"")
    assert not gemini.detect("x.json", b"\x00\xff garbage")


def test_detect_reads_a_cut_off_head():
    head = CHAT.read_bytes()[:300]  # a pretty-printed chat longer than the head
    assert gemini.detect(str(CHAT), head)


# -- sample chats ------------------------------------------------------------------------------


def test_chat_json_frames_exactly():
    f = gemini.parse(str(CHAT))
    _schema_ok(f)
    [s] = f.sessions.rows(named=True)
    assert {
        k: s[k]
        for k in (
            "session_id",
            "harness",
            "native_id",
            "session_kind",
            "layout",
            "cwd",
            "started_at",
            "ended_at",
            "model",
            "n_records",
            "parent_native_id",
            "attempt",
        )
    } == {
        "session_id": "gemini-cli:7c1e4b2a-5d3f-4e8a-9b61-2f0c8d4e7a19",
        "harness": "gemini-cli",
        "native_id": "7c1e4b2a-5d3f-4e8a-9b61-2f0c8d4e7a19",
        "session_kind": "main",
        "layout": "chat",
        "cwd": LUMEN,
        "started_at": at("2026-02-03", "09:12:01"),
        "ended_at": at("2026-02-03", "09:17:02"),
        "model": "gemini-2.5-pro",
        "n_records": 8,
        "parent_native_id": None,
        "attempt": None,
    }
    assert s["first_prompt_hash"] == text_hash("Add a rate-limit page to the docs and fix the typo in src/limits.py")
    assert s["source_bytes"] == CHAT.stat().st_size
    calls = f.calls.select(
        "call_id", "tool", "kind", "paths", "is_error", "exit_code", "result_agent_id", "subagent_type"
    ).rows()
    assert calls == [
        (
            "read_file-1770109928950-a1b2c3d4e5f6",
            "read_file",
            "read",
            [f"{LUMEN}/docs/API.md"],
            False,
            None,
            None,
            None,
        ),
        (
            "list_directory-1770109929010-b2c3d4e5f6a7",
            "list_directory",
            "other",
            [f"{LUMEN}/src"],
            False,
            None,
            None,
            None,
        ),
        (
            "write_file-1770109939100-c3d4e5f6a7b8",
            "write_file",
            "write",
            [f"{LUMEN}/docs/RATE_LIMITS.md"],
            False,
            None,
            None,
            None,
        ),
        ("replace-1770109944300-d4e5f6a7b8c9", "replace", "edit", [f"{LUMEN}/src/limits.py"], False, None, None, None),
        (
            "read_file-1770109945100-e5f6a7b8c9d0",
            "read_file",
            "read",
            [f"{LUMEN}/src/limits_old.py"],
            True,
            None,
            None,
            None,
        ),
        ("run_shell_command-1770109981500-f6a7b8c9d0e1", "run_shell_command", "shell", [], True, 1, None, None),
        (
            "search_file_content-1770109985000-a7b8c9d0e1f2",
            "search_file_content",
            "other",
            [f"{LUMEN}/src"],
            False,
            None,
            None,
            None,
        ),
        ("run_shell_command-1770110110000-b8c9d0e1f2a3", "run_shell_command", "shell", [], False, 0, None, None),
        (
            "read_file-1770110140500-c9d0e1f2a3b4",
            "read_file",
            "read",
            [f"{LUMEN}/docs/RATE_LIMITS.md"],
            False,
            None,
            None,
            None,
        ),
        (
            "delegate_to_agent-1770110141000-d0e1f2a3b4c5",
            "delegate_to_agent",
            "spawn",
            [],
            False,
            None,
            "codebase_investigator",
            "codebase_investigator",
        ),
    ]
    launch = f.calls.row(7, named=True)
    assert launch["command"] == 'claude -p "Proofread docs/RATE_LIMITS.md and fix typos in place" --output-format json'
    assert launch["cwd"] == LUMEN and launch["output_ids"] == ["e3b4c2d1-7a6f-4c58-9d2e-0f1a2b3c4d5e"]
    assert launch["started_at"] == at("2026-02-03", "09:15:10") and launch["ended_at"] == at(
        "2026-02-03", "09:15:31.400"
    )
    spawn = f.calls.row(9, named=True)
    assert spawn["prompt_hash"] == text_hash(
        "Map how a request reaches the rate limiter and list every place that reads DEFAULT_LIMIT."
    )
    assert f.file_events.select("call_id", "ts", "path", "op", "how", "tier").rows() == [
        (
            "read_file-1770109928950-a1b2c3d4e5f6",
            at("2026-02-03", "09:12:09.390"),
            f"{LUMEN}/docs/API.md",
            "read",
            "read_file",
            "verified",
        ),
        (
            "write_file-1770109939100-c3d4e5f6a7b8",
            at("2026-02-03", "09:12:19.800"),
            f"{LUMEN}/docs/RATE_LIMITS.md",
            "write",
            "write_file",
            "verified",
        ),
        (
            "replace-1770109944300-d4e5f6a7b8c9",
            at("2026-02-03", "09:12:24.900"),
            f"{LUMEN}/src/limits.py",
            "write",
            "replace",
            "verified",
        ),
        (
            "read_file-1770110140500-c9d0e1f2a3b4",
            at("2026-02-03", "09:15:40.600"),
            f"{LUMEN}/docs/RATE_LIMITS.md",
            "read",
            "read_file",
            "verified",
        ),
    ]
    # input - cached + tool, output + thoughts, cached, thoughts (summed over the 6 answers)
    u = f.usage
    assert u.height == 6 and u["message_id"].n_unique() == 6
    assert [
        u[c].sum()
        for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "reasoning_tokens")
    ] == [17340, 1604, 44032, 0, 783]
    assert u.row(4, named=True)["input_tokens"] == 11873 - 10240 + 14
    assert f.diagnostics.height == 0


def test_chat_jsonl_frames_exactly():
    f = gemini.parse(str(CHAT_JSONL))
    _schema_ok(f)
    [s] = f.sessions.rows(named=True)
    assert (s["session_id"], s["layout"], s["cwd"], s["started_at"], s["ended_at"], s["model"], s["n_records"]) == (
        "gemini-cli:3f9a0c11-8b2e-4c7d-a5f0-91d6e2b7c4a8",
        "chat-jsonl",
        TIDE,
        at("2026-03-10", "14:05:12"),
        at("2026-03-10", "14:06:20.010"),
        "gemini-3-flash-preview",
        7,
    )
    # The <session_context> bootstrap is not the first prompt.
    assert s["first_prompt_hash"] == text_hash(
        "Rename parse_tide to parse_tides in tidewater/core.py and note it in CHANGES.md"
    )
    assert f.calls.select("call_id", "kind", "paths", "cwd", "is_error", "exit_code", "ended_at").rows() == [
        (
            "read_file-1773151531200-a0b1c2d3e4f5",
            "read",
            [f"{TIDE}/tidewater/core.py"],
            TIDE,
            False,
            None,
            at("2026-03-10", "14:05:31.350"),
        ),
        (
            "replace-1773151540100-b1c2d3e4f5a6",
            "edit",
            [f"{TIDE}/tidewater/core.py"],
            TIDE,
            False,
            None,
            at("2026-03-10", "14:05:40.600"),
        ),
        (
            "write_file-1773151541000-c2d3e4f5a6b7",
            "write",
            [f"{TIDE}/CHANGES.md"],
            TIDE,
            False,
            None,
            at("2026-03-10", "14:05:41.300"),
        ),
        (
            "run_shell_command-1773151562000-d3e4f5a6b7c8",
            "shell",
            [],
            f"{TIDE}/tests",
            False,
            0,
            at("2026-03-10", "14:06:05.500"),
        ),
    ]
    assert f.file_events.select("path", "op", "how").rows() == [
        (f"{TIDE}/tidewater/core.py", "read", "read_file"),
        (f"{TIDE}/tidewater/core.py", "write", "replace"),
        (f"{TIDE}/CHANGES.md", "write", "write_file"),
    ]
    # The answer logged twice counts once, with its final numbers (output 57 + thoughts 88).
    assert f.usage.select(
        "message_id", "input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens", "line"
    ).rows() == [
        ("g1-9c0d", 9120 - 4096, 57 + 88, 4096, 88, 7),
        ("g2-1f2a", 9866 - 8192, 31 + 40, 8192, 40, 9),
        ("g3-3b4c", 10012 - 9216, 22, 9216, 0, 11),
    ]
    assert f.diagnostics.height == 0


def test_a_one_line_chat_document_reads_like_the_indented_one(tmp_path):
    path = tmp_path / "one-line.json"
    path.write_text(json.dumps(json.loads(CHAT.read_text())))
    one, indented = gemini.parse(str(path)), gemini.parse(str(CHAT))
    assert one.sessions.drop("source_path", "source_bytes").equals(
        indented.sessions.drop("source_path", "source_bytes")
    )
    assert one.calls.drop("source_path", "line").equals(indented.calls.drop("source_path", "line"))
    assert one.usage.drop("source_path", "line").equals(indented.usage.drop("source_path", "line"))
    assert one.diagnostics.height == 0


def test_prompt_log_parses_to_nothing():
    f = gemini.parse(str(PROMPT_LOG))
    assert all(df.height == 0 for df in f.tables().values())


# -- the real chats ----------------------------------------------------------------------------


@pytest.fixture
def real() -> Path:
    folder = CORPUS / "gemini-cli"
    if not folder.is_dir():
        pytest.skip(f"real-log corpus not found at {CORPUS}")
    return folder


def test_corpus_chat_with_absolute_paths(real):
    path = real / "session-2025-12-01T21-45-5b959dae.json"
    assert gemini.detect(str(path), _head(path))
    f = gemini.parse(str(path))
    [s] = f.sessions.rows(named=True)
    assert (s["session_id"], s["cwd"], s["model"], s["n_records"], s["started_at"], s["ended_at"]) == (
        "gemini-cli:5b959dae-8655-4cd1-b10f-720b8c336ea2",
        None,
        "gemini-3-pro-image-preview",
        14,
        at("2025-12-01", "21:45:34.362"),
        at("2025-12-01", "21:50:10.837"),
    )
    assert s["first_prompt_hash"] == text_hash("hi")
    assert f.calls.group_by("tool").len().sort("tool").rows() == [
        ("list_directory", 1),
        ("read_file", 7),
        ("replace", 1),
        ("write_file", 1),
    ]
    assert f.calls["is_error"].to_list() == [False] * 10
    # The write_file call started at its id's time and ended 74 s later, at its timestamp.
    w = f.calls.filter(f.calls["tool"] == "write_file").row(0, named=True)
    assert (w["started_at"], w["ended_at"]) == (at("2025-12-01", "21:48:21.890"), at("2025-12-01", "21:49:35.822"))
    base = "/Users/Jane_Smith/Documents/projects/epm-cdme/assistants"
    assert f.file_events.select("path", "op").rows() == [
        (f"{base}/lead.txt", "read"),
        (f"{base}/lead_memory.txt", "read"),
        (f"{base}/lead_memory_v1.txt", "read"),
        (f"{base}/lead_memor_v2.txt", "read"),
        (f"{base}/lead_memory.txt", "read"),
        (f"{base}/lead_gemini.txt", "write"),
        (f"{base}/lead_gemini.txt", "read"),
        (f"{base}/lead_gemini.txt", "write"),
        (f"{base}/lead_gemini.txt", "read"),
    ]
    assert f.usage.height == 11
    assert [f.usage[c].sum() for c in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")] == [
        45092,
        4227,
        56538,
        1493,
    ]
    assert f.diagnostics.height == 0


def test_corpus_chat_with_relative_paths_and_a_subagent(real):
    path = real / "session-2026-01-16T11-01-file-ops-37b7abef.json"
    f = gemini.parse(str(path))
    [s] = f.sessions.rows(named=True)
    root = "/Users/Nikita_Levyankov/repos/EPMCDME/codemie-ai/codemie-code"
    # The project root is the folder whose sha256 is the chat's projectHash.
    assert (s["cwd"], s["model"], s["n_records"]) == (root, "gemini-3-pro", 14)
    assert hashlib.sha256(root.encode()).hexdigest() == json.loads(path.read_text())["projectHash"]
    assert f.calls.group_by("kind").len().sort("kind").rows() == [("other", 4), ("read", 6), ("spawn", 1), ("write", 3)]
    spawn = f.calls.filter(f.calls["kind"] == "spawn").row(0, named=True)
    assert (spawn["result_agent_id"], spawn["subagent_type"]) == ("codebase_investigator", "codebase_investigator")
    assert spawn["started_at"] == at("2026-01-16", "11:02:40.282")
    assert f.file_events.select("path", "op").rows() == [
        (f"{root}/SECURITY.md", "read"),
        (f"{root}/scripts/validate-secrets.js", "read"),
        (f"{root}/src/env/manager.ts", "read"),
        (f"{root}/.husky/pre-commit", "read"),
        (f"{root}/hello.md", "write"),
        (f"{root}/hello.md", "read"),
        (f"{root}/hello.md", "write"),
        (f"{root}/hello.md", "read"),
        (f"{root}/hello.md", "write"),
    ]
    assert f.usage.height == 9
    assert [f.usage[c].sum() for c in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")] == [
        25301,
        4355,
        62117,
        2914,
    ]
    assert f.diagnostics.height == 0


def test_corpus_prompt_log_is_claimed_and_empty(real):
    path = real / "logs.json"
    assert gemini.detect(str(path), _head(path))
    assert gemini.parse(str(path)).sessions.height == 0


# -- bad input ---------------------------------------------------------------------------------


def _codes(frames) -> list[tuple[int | None, str]]:
    return frames.diagnostics.select("line", "code").rows()


def test_broken_messages_in_a_chat_document(tmp_path):
    doc = json.loads(CHAT.read_text())
    msgs = doc["messages"]
    msgs[0]["type"] = "compression"  # unknown message type: left out
    msgs[1]["timestamp"] = "yesterday"  # the first prompt, with a bad time
    msgs[2]["toolCalls"][0]["args"] = ["docs/API.md"]  # args not an object
    msgs[3]["tokens"] = "lots"  # tokens not an object
    msgs[4]["toolCalls"] = {"id": "x"}  # toolCalls not a list
    msgs[5]["toolCalls"].append("not a call")
    path = tmp_path / CHAT.name
    path.write_text(json.dumps(doc, indent=2))
    f = gemini.parse(str(path))
    assert sorted(f.diagnostics["code"].to_list()) == sorted(
        ["unknown_record_type", "bad_timestamp", "bad_arguments", "wrong_type", "wrong_type", "wrong_type"]
    )
    assert set(f.diagnostics["line"].to_list()) == {None}
    # Everything else is still there.
    assert f.sessions.height == 1 and f.sessions["n_records"][0] == 7
    assert f.calls.height == 10 - 2  # the two calls of message 4 are gone with its toolCalls
    assert f.calls.row(0, named=True)["paths"] == []  # its args were not an object
    assert f.usage.height == 5


def test_broken_lines_in_a_jsonl_chat(tmp_path):
    lines = CHAT_JSONL.read_text().splitlines()
    lines[3] = '{"$set": ["lastUpdated"]}'
    lines.insert(5, "not json at all")
    lines.insert(6, '{"note": "no type, no $set"}')
    lines.insert(7, "[1, 2]")
    path = tmp_path / CHAT_JSONL.name
    path.write_text("\n".join(lines) + '\n{"id": "g9", "type": "gemini", "tokens"')
    f = gemini.parse(str(path))
    assert _codes(f) == [
        (4, "wrong_type"),
        (6, "invalid_json"),
        (7, "unknown_record_type"),
        (8, "not_object"),
        (17, "truncated_line"),
    ]
    assert f.sessions.height == 1 and f.calls.height == 4 and f.usage.height == 3


def test_whole_file_problems(tmp_path):
    cases = {
        "cut.json": CHAT.read_text()[:5000],
        "nosession.json": json.dumps(
            {"projectHash": HASH_A, "messages": [{"id": "m", "type": "user", "content": "hi"}]}
        ),
        "empty.json": "  \n",
        "array.json": json.dumps([{"a": 1}]),
        "scalar.json": "\n  42",
    }
    want = {
        "cut.json": ["invalid_json"],
        "nosession.json": ["no_session"],
        "empty.json": ["empty_file"],
        "array.json": ["not_object"],
        "scalar.json": ["not_object"],
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        f = gemini.parse(str(path))
        assert f.diagnostics["code"].to_list() == want[name], name
        assert f.sessions.height == 0, name
    f = gemini.parse(str(tmp_path / "missing.json"))
    assert f.diagnostics["code"].to_list() == ["unreadable_file"]


def test_relative_paths_without_a_known_root_are_left_out(tmp_path):
    doc = json.loads(CHAT.read_text())
    doc["projectHash"] = "0" * 64
    for m in doc["messages"]:
        for c in m.get("toolCalls", []):
            for r in c.get("result", []):  # no result names an absolute path any more
                r["functionResponse"]["response"] = {"output": "ok"}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc, indent=2))
    f = gemini.parse(str(path))
    assert f.sessions["cwd"][0] is None
    write = f.calls.filter(f.calls["tool"] == "write_file").row(0, named=True)
    assert write["paths"] == []  # "docs/RATE_LIMITS.md" cannot be placed
    assert f.file_events["path"].to_list() == [
        f"{LUMEN}/docs/API.md",
        f"{LUMEN}/src/limits.py",
        f"{LUMEN}/docs/RATE_LIMITS.md",
    ]


def test_samples_are_generated(tmp_path):
    """The committed samples are what _generate.py writes (nothing hand-edited since)."""
    copy = tmp_path / "gen"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("tmp", "launched-claude"))
    import runpy

    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".json", ".jsonl")):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name
