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
        "KIMI_SHARE_DIR": f"{tmp_path}/kimi",
        "COPILOT_HOME": f"{tmp_path}/gh",
        "FACTORY_DIR": f"{tmp_path}/factory",
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
        tmp_path / "kimi/sessions",
        tmp_path / "gh/session-state",
        tmp_path / "gh/history-session-state",
        tmp_path / "xdg/opencode",
        tmp_path / ".crush",
        tmp_path / "factory/sessions",
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
        tmp_path / ".kimi/sessions",
        tmp_path / ".copilot/session-state",
        tmp_path / ".copilot/history-session-state",
        tmp_path / ".local/share/opencode",
        tmp_path / ".crush",
        tmp_path / ".factory/sessions",
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


def _counts(db: Path) -> dict[str, int]:
    from sessiongraph.store import FILE_TABLES, INFERENCE_TABLES, Store

    with Store(db, read_only=True) as s:
        return {t: s.counts(f"SELECT 'n', count(*) FROM {t}")["n"] for t in (*FILE_TABLES, *INFERENCE_TABLES)}


def test_one_tree_under_every_spelling_is_stored_once(tmp_path, monkeypatch):
    """Relative, absolute, `..`, symlinked root and symlinked folder spellings of one tree: one
    copy of every row, and pruning under one spelling drops nothing recorded under another."""
    import shutil

    from sessiongraph.pipeline import ingest
    from tests.conftest import SAMPLES

    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", logs / "claude-code")
    shutil.copytree(SAMPLES / "codex", logs / "codex")
    (tmp_path / "link").symlink_to(logs)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "cx").symlink_to(logs / "codex")  # a linked folder inside another root
    once = tmp_path / "once.duckdb"
    ingest([str(logs)], db=str(once), workers=1)
    want = _counts(once)
    assert want["sessions"] and want["edges"]

    db = tmp_path / "s.duckdb"
    monkeypatch.chdir(tmp_path)
    first = ingest(["logs"], db=str(db), workers=1)
    assert first.roots == [str(logs)]
    for spelling in (str(logs), "link", str(tmp_path / "link" / "codex" / ".." / "codex"), "other", "logs/../logs"):
        summary = ingest([spelling], db=str(db), workers=1, prune=True)
        assert summary.files_read == 0 and summary.files_removed == 0, spelling
        assert _counts(db) == want, spelling
    # A file gone is pruned whichever spelling names the root.
    gone = sorted((logs / "codex").rglob("*.jsonl"))[0]
    gone.unlink()
    assert ingest(["link"], db=str(db), workers=1, prune=True).files_removed == 1
    assert _counts(db)["sessions"] == want["sessions"] - 1


def test_prune_through_a_linked_folder_drops_what_is_gone_there(tmp_path):
    """A root holding a link to a folder outside it: its files are stored under their real paths,
    and a file deleted there is pruned by an ingest of the root."""
    import shutil

    from sessiongraph.pipeline import ingest
    from tests.conftest import SAMPLES

    shutil.copytree(SAMPLES / "codex", tmp_path / "elsewhere")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "cx").symlink_to(tmp_path / "elsewhere")
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path / "root")], db=str(db), workers=1)
    with_all = _counts(db)["ingested_files"]
    sorted((tmp_path / "elsewhere").rglob("*.jsonl"))[0].unlink()
    assert ingest([str(tmp_path / "root")], db=str(db), workers=1, prune=True).files_removed == 1
    assert _counts(db)["ingested_files"] == with_all - 1
