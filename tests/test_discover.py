"""Finding logs: default roots and env overrides, classification by content, skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.claude_code.decoding import MAX_BAD_HEAD_LINES
from sessiongraph.ingest.discover import classify, default_roots, discover

CLAUDE_LINE = (
    b'{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"11111111-2222-4333-8444-555555555555",'
    b'"version":"2.1.39","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1",'
    b'"timestamp":"2026-01-02T03:04:05.000Z"}\n'
)
CODEX_LINE = (
    b'{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":'
    b'"019b0000-0000-7000-8000-000000000001","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w",'
    b'"originator":"codex_exec","cli_version":"0.61.0","source":"exec"}}\n'
)


def test_default_roots_follow_the_harnesses_env_vars(tmp_path):
    env = {
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": f"{tmp_path}/a, {tmp_path}/b",
        "CODEX_HOME": f"{tmp_path}/cx",
        "PI_CODING_AGENT_DIR": f"{tmp_path}/pi",
        "XDG_DATA_HOME": f"{tmp_path}/xdg",
    }
    assert default_roots(env) == [
        tmp_path / ".claude",
        tmp_path / "a",
        tmp_path / "b",
        tmp_path / "cx",
        tmp_path / "pi",
        tmp_path / ".omp",
        tmp_path / ".gemini/tmp",
        tmp_path / ".qwen/projects",
        tmp_path / ".cursor/projects",
        tmp_path / ".kimi-code/sessions",
        tmp_path / "xdg/opencode",
    ]
    assert default_roots({"HOME": str(tmp_path)}) == [
        tmp_path / ".claude",
        tmp_path / ".codex",
        tmp_path / ".pi",
        tmp_path / ".omp",
        tmp_path / ".gemini/tmp",
        tmp_path / ".qwen/projects",
        tmp_path / ".cursor/projects",
        tmp_path / ".kimi-code/sessions",
        tmp_path / ".local/share/opencode",
    ]


def test_content_decides_the_harness_not_the_name(tmp_path):
    (tmp_path / "rollout-looking-but-claude.jsonl").write_bytes(CLAUDE_LINE)
    (tmp_path / "whatever.jsonl").write_bytes(CODEX_LINE)
    (tmp_path / "other.jsonl").write_bytes(b'{"hello":"world"}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "history.jsonl").write_bytes(b'{"display":"x"}\n')
    (tmp_path / "notes.txt").write_text("not a log")
    (tmp_path / "settings.json").write_text('{"theme": "dark"}')
    found = {Path(f.path).name: (f.harness, f.skip_reason) for f in discover([tmp_path])}
    assert found == {
        "settings.json": (None, "not_a_log"),
        "rollout-looking-but-claude.jsonl": ("claude-code", None),
        "whatever.jsonl": ("codex", None),
        "other.jsonl": (None, "unknown_format"),
        "empty.jsonl": (None, "empty_file"),
        "history.jsonl": (None, "not_transcript"),
    }


def test_a_summary_line_first_is_still_claude(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"type":"summary","summary":"x","leafUuid":"u9"}\n' + CLAUDE_LINE)
    assert classify(str(f)).harness == "claude-code"


def test_broken_lines_before_the_records_are_passed_over_up_to_a_limit(tmp_path):
    """A crash may leave a cut line at the head: the transcript is still Claude's. A head of
    nothing but undecodable lines (a pretty-printed JSON file) is given up after a few, so that
    every detector does not decode a whole 64 KB head line by line."""
    ok, bad = tmp_path / "ok.jsonl", tmp_path / "bad.jsonl"
    ok.write_bytes(b'{"type":"user","sess\n' * (MAX_BAD_HEAD_LINES - 1) + CLAUDE_LINE)
    bad.write_bytes(b'{"type":"user","sess\n' * MAX_BAD_HEAD_LINES + CLAUDE_LINE)
    assert classify(str(ok)).harness == "claude-code"
    assert classify(str(bad)).harness is None


def test_missing_path_is_an_error(tmp_path):
    with pytest.raises(SessiongraphError, match="no such file or folder"):
        list(discover([tmp_path / "nope"]))


def test_missing_default_roots_are_not_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert list(discover()) == []


def test_unreadable_file_is_classified_not_raised(tmp_path):
    # A dangling symlink cannot be opened even by root (CI runs as root, so chmod 000 won't do).
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "deleted-target.jsonl")
    [res] = list(discover([tmp_path]))
    assert (res.harness, res.skip_reason) == (None, "unreadable_file")
