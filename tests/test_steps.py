"""The steps frame: every adapter's sample session step by step, against sequences written by hand
from reading the sample files (not from the adapters), and the real Claude Code and Codex logs of
the corpus (counts per kind, first and last step, counted from their raw records)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from datetime import UTC, datetime

import orjson
import polars as pl
import pytest

from sessiongraph.ingest import claude_code, codex, gemini, omp, opencode, pi, resume, steps
from sessiongraph.ingest.frames import STEPS, Frames
from tests.conftest import SAMPLES

# (line, role, kind, tool, call_id, is_error, output_tokens)
CLAUDE = SAMPLES / "claude-code/projects/-home-dev-projects-orbit-cli/b720e73d-763d-4c3c-8ff8-264d88d63693.jsonl"
CLAUDE_STEPS = [
    (2, "user", "prompt", None, None, None, None),
    (4, "assistant", "thinking", None, None, None, 112),  # msg ...qyUOw6 spans lines 4-5: tokens once
    (5, "assistant", "tool_call", "WebSearch", "toolu_01oivlFIHyyAtwh6p4WAArVH", None, None),
    (6, "tool", "tool_result", "WebSearch", "toolu_01oivlFIHyyAtwh6p4WAArVH", False, None),
    (7, "assistant", "tool_call", "Agent", "toolu_01nup9aMMldIqKVF9BQsMzel", None, 148),
    (8, "tool", "tool_result", "Agent", "toolu_01nup9aMMldIqKVF9BQsMzel", False, None),
    (9, "assistant", "tool_call", "Agent", "toolu_01Umm3lai0xkdTAsiIvTldkA", None, 121),
    (10, "tool", "tool_result", "Agent", "toolu_01Umm3lai0xkdTAsiIvTldkA", False, None),
    (11, "assistant", "tool_call", "Bash", "toolu_01G60AQcSLkpsVFr6Y8mttIz", None, 96),
    (12, "tool", "tool_result", "Bash", "toolu_01G60AQcSLkpsVFr6Y8mttIz", False, None),
    (13, "assistant", "tool_call", "Read", "toolu_01hqdkjKxWar9Lp7EEEgMZtM", None, 52),
    (14, "tool", "tool_result", "Read", "toolu_01hqdkjKxWar9Lp7EEEgMZtM", False, None),
    (15, "assistant", "tool_call", "Grep", "toolu_018OCUYem1WoN7Klor0PMEFT", None, 77),
    (16, "tool", "tool_result", "Grep", "toolu_018OCUYem1WoN7Klor0PMEFT", False, None),
    (18, "system", "context", None, None, None, None),  # <task-notification>: the harness wrote it
    (19, "assistant", "tool_call", "Workflow", "toolu_01GES50FNZHuIdbO6WZpDCyk", None, 133),
    (20, "tool", "tool_result", "Workflow", "toolu_01GES50FNZHuIdbO6WZpDCyk", False, None),
    (21, "assistant", "text", None, None, None, 164),
]

CODEX = SAMPLES / "codex/sessions/2025/12/03/rollout-2025-12-03T10-14-05-019ae37d-847f-7e4a-9b1f-3d5c8a2e7f10.jsonl"
# token_count totals are cumulative: each response's output is the difference to the last count.
CODEX_STEPS = [
    (3, "system", "context", None, None, None, None),  # developer permissions
    (4, "system", "context", None, None, None, None),  # <environment_context>
    (6, "user", "prompt", None, None, None, None),
    (9, "assistant", "thinking", None, None, None, 210),
    (10, "assistant", "tool_call", "exec_command", "call_A1", None, None),
    (12, "tool", "tool_result", "exec_command", "call_A1", False, None),  # exit 0
    (14, "assistant", "tool_call", "write_stdin", "call_B1", None, 50),
    (16, "tool", "tool_result", "write_stdin", "call_B1", None, None),  # a poll: no exit of its own
    (18, "assistant", "thinking", None, None, None, 280),  # the count at line 17 repeats line 15's
    (19, "assistant", "tool_call", "exec_command", "call_C1", None, None),
    (20, "tool", "tool_result", "exec_command", "call_C1", False, None),
    (23, "assistant", "tool_call", "update_plan", "call_F1", None, 480),
    (24, "tool", "tool_result", "update_plan", "call_F1", None, None),
    (25, "assistant", "tool_call", "apply_patch", "call_D1", None, None),
    (27, "tool", "tool_result", "apply_patch", "call_D1", False, None),  # patch_apply_end success
    (29, "assistant", "tool_call", "exec_command", "call_E1", None, 160),
    (30, "tool", "tool_result", "exec_command", "call_E1", True, None),  # exit 1
    (34, "assistant", "text", None, None, None, None),  # no token_count follows it
]

PI = SAMPLES / "pi/agent/sessions/--srv-app--/2025-12-09T19-00-58-000Z_4b1e9d2c-7f3a-4c8e-9a06-5d2b8e1f7c34.jsonl"
PI_STEPS = [
    (4, "user", "prompt", None, None, None, None),
    (5, "assistant", "text", None, None, None, 96),
    (5, "assistant", "tool_call", "read", "toolu_01PiA1readServer00000001", None, None),
    (5, "assistant", "tool_call", "grep", "toolu_01PiA2grepPort000000002", None, None),
    (6, "tool", "tool_result", "read", "toolu_01PiA1readServer00000001", False, None),
    (7, "tool", "tool_result", "grep", "toolu_01PiA2grepPort000000002", False, None),
    (8, "assistant", "tool_call", "edit", "toolu_01PiA3editServer0000003", None, 140),
    (9, "tool", "tool_result", "edit", "toolu_01PiA3editServer0000003", False, None),
    (10, "user", "tool_call", "bashExecution", "c03c0553", None, None),  # a person's `!git status`
    (10, "tool", "tool_result", "bashExecution", "c03c0553", False, None),
    (11, "assistant", "tool_call", "write", "toolu_01PiA4writeDocs00000004", None, 88),
    (12, "tool", "tool_result", "write", "toolu_01PiA4writeDocs00000004", False, None),
    (13, "assistant", "tool_call", "bash", "toolu_01PiA5codexExec00000005", None, 52),
    (14, "tool", "tool_result", "bash", "toolu_01PiA5codexExec00000005", False, None),
    (15, "assistant", "tool_call", "bash", "toolu_01PiA6npmTest0000000006", None, 40),
    (16, "tool", "tool_result", "bash", "toolu_01PiA6npmTest0000000006", True, None),
    (17, "system", "context", None, None, None, None),  # branch_summary: back to line 14's entry
    (18, "user", "prompt", None, None, None, None),
    (19, "assistant", "text", None, None, None, 60),
]
# The entry tree: each step's parent step (the branch summary hangs off line 14's result, seq 13).
PI_PARENTS = [None, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 13, 16, 17]

OMP = SAMPLES / "omp/agent/sessions/-projects-harbor/2026-01-20T15-40-00-000Z_3e8b1f60c2a94d17.jsonl"
OMP_STEPS = [
    (3, "user", "prompt", None, None, None, None),
    (4, "assistant", "tool_call", "task", "call_L1_batch", None, 210),
    (5, "tool", "tool_result", "task", "call_L1_batch", False, None),
    (6, "assistant", "tool_call", "read", "call_L2_read", None, 50),
    (7, "tool", "tool_result", "read", "call_L2_read", False, None),
    (8, "assistant", "text", None, None, None, 120),
]

GEMINI = (
    SAMPLES / "gemini-cli/tmp/b6e7d080dd9e0790bbc4008ddb974b727e1a381f370cbf945d515a3d527c32eb/chats"
    "/session-2026-03-10T14-05-3f9a0c11.jsonl"
)
# g1-9c0d is logged at line 5 and again, complete, at line 7: one message, its last version.
# Gemini's output excludes thoughts: output_tokens = output + thoughts.
GEMINI_STEPS = [
    (2, "system", "context", None, None, None, None),  # <session_context>
    (3, "user", "prompt", None, None, None, None),
    (7, "assistant", "tool_call", "read_file", "read_file-1773151531200-a0b1c2d3e4f5", None, 57 + 88),
    (7, "tool", "tool_result", "read_file", "read_file-1773151531200-a0b1c2d3e4f5", False, None),
    (7, "assistant", "tool_call", "replace", "replace-1773151540100-b1c2d3e4f5a6", None, None),
    (7, "tool", "tool_result", "replace", "replace-1773151540100-b1c2d3e4f5a6", False, None),  # answered at line 8
    (7, "assistant", "tool_call", "write_file", "write_file-1773151541000-c2d3e4f5a6b7", None, None),
    (7, "tool", "tool_result", "write_file", "write_file-1773151541000-c2d3e4f5a6b7", False, None),
    (9, "assistant", "tool_call", "run_shell_command", "run_shell_command-1773151562000-d3e4f5a6b7c8", None, 31 + 40),
    (9, "tool", "tool_result", "run_shell_command", "run_shell_command-1773151562000-d3e4f5a6b7c8", False, None),
    (11, "assistant", "text", None, None, None, 22),
    (12, "system", "context", None, None, None, None),  # info: "Request cancelled."
]

OPENCODE = (
    SAMPLES / "opencode/storage/session/5e1c9a0b7d3f2e4a6c8b0d1f3e5a7c9b1d3f5e7a/ses_4a1f0c3b1ffeC8yR3nOcW0lMe4.json"
)
OPENCODE_STEPS = [
    (None, "user", "prompt", None, None, None, None),
    (None, "assistant", "tool_call", "glob", "toolu_01GlobRetry", None, 410),
    (None, "tool", "tool_result", "glob", "toolu_01GlobRetry", False, None),
    (None, "assistant", "tool_call", "grep", "toolu_01GrepBackoff", None, None),
    (None, "tool", "tool_result", "grep", "toolu_01GrepBackoff", False, None),
    (None, "assistant", "tool_call", "read", "toolu_01ReadBackoff", None, None),
    (None, "tool", "tool_result", "read", "toolu_01ReadBackoff", False, None),
    (None, "assistant", "tool_call", "write", "toolu_01WriteSurvey", None, None),
    (None, "tool", "tool_result", "write", "toolu_01WriteSurvey", False, None),
    (None, "assistant", "text", None, None, None, 74),
]

CASES = {
    "claude-code": (claude_code, CLAUDE, CLAUDE_STEPS),
    "codex": (codex, CODEX, CODEX_STEPS),
    "pi": (pi, PI, PI_STEPS),
    "omp": (omp, OMP, OMP_STEPS),
    "gemini-cli": (gemini, GEMINI, GEMINI_STEPS),
    "opencode": (opencode, OPENCODE, OPENCODE_STEPS),
}
COLUMNS = ["line", "role", "kind", "tool", "call_id", "is_error", "output_tokens"]


def _steps(adapter, path) -> pl.DataFrame:
    return adapter.parse(str(path)).steps


@pytest.mark.parametrize("harness", list(CASES))
def test_sample_session_steps_in_order(harness):
    adapter, path, want = CASES[harness]
    got = _steps(adapter, path)
    assert got.schema == STEPS
    assert got["seq"].to_list() == list(range(len(want)))
    assert [tuple(r) for r in got.select(COLUMNS).iter_rows()] == want
    assert got["session_id"].n_unique() == 1
    # tokens sit on a response's first step only, and every count is on an assistant step
    tokens = got.filter(pl.col("output_tokens").is_not_null())
    assert set(tokens["role"]) == {"assistant"}
    assert tokens.filter(pl.col("input_tokens").is_null()).height == 0
    # every step with text names its size and hash; no text column exists
    assert got.filter(pl.col("n_bytes").is_not_null() & pl.col("content_sha256").is_null()).height == 0


def test_token_placement_matches_usage():
    """The tokens on steps are the usage rows' tokens, once each."""
    for adapter, path, _ in CASES.values():
        frames = adapter.parse(str(path))
        for col in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"):
            on_steps = frames.steps[col].sum()
            if adapter is not codex:  # Codex's last count covers no later step: see CODEX_STEPS
                assert on_steps == frames.usage[col].sum(), (path.name, col)


def test_pi_tree_keeps_its_branch():
    got = _steps(pi, PI)
    assert got["parent_seq"].to_list() == PI_PARENTS
    # in a linear log (Codex) there is no tree
    assert _steps(codex, CODEX)["parent_seq"].null_count() == len(CODEX_STEPS)


def test_claude_parent_steps_follow_parent_uuid():
    got = _steps(claude_code, CLAUDE)
    parents = got["parent_seq"].to_list()
    # line 4's parent is the attachment of line 3, whose parent is the prompt of line 2
    assert parents[:4] == [None, 0, 1, 2]
    assert parents[-1] == len(CLAUDE_STEPS) - 2


def test_pi_fork_copies_are_not_steps():
    """A pi fork file starts with copies of its parent's entries: they are the parent's steps."""
    path = SAMPLES / "pi/agent/sessions/--Users-mara-code-atlas-web--"
    (fork,) = path.glob("*.jsonl")
    got = _steps(pi, fork)
    assert got["line"].min() == 5  # lines 2-3 predate the header: copied from the parent
    assert got.height == 12


def test_a_record_logged_twice_is_one_step(tmp_path):
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "projects" / "p" / CLAUDE.name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(lines + lines[3:6]))  # a resumed transcript repeating records
    got = _steps(claude_code, path)
    assert got.height == len(CLAUDE_STEPS)


def test_every_adapter_with_conversations_gives_steps():
    for adapter, path, want in CASES.values():
        assert adapter.parse(str(path)).steps.height == len(want)


# -- text only by consent ----------------------------------------------------------------------


@pytest.mark.parametrize("harness", list(CASES))
def test_steps_name_only_sessions_of_their_file(harness):
    """A step's session is one of its file's sessions rows (inference.partitions takes the
    session keys of a file from those rows, not from the far larger steps and texts)."""
    adapter, path, _ = CASES[harness]
    with steps.text_policy(True, 1_000_000):
        frames = adapter.parse(str(path))
    sessions = set(frames.sessions["session_id"])
    assert frames.steps.height and set(frames.steps["session_id"]) <= sessions
    assert set(frames.texts["session_id"]) <= sessions


def test_no_texts_without_the_policy():
    for adapter, path, _ in CASES.values():
        assert adapter.parse(str(path)).texts.height == 0


@pytest.mark.parametrize("harness", list(CASES))
def test_texts_under_the_policy_match_the_hashes(harness):
    adapter, path, want = CASES[harness]
    with steps.text_policy(True, 1_000_000):
        frames = adapter.parse(str(path))
    texts, got = frames.texts, frames.steps
    assert texts.height == got.filter(pl.col("n_bytes").is_not_null()).height
    joined = got.join(texts, on=["session_id", "seq"], suffix="_text")
    for row in joined.iter_rows(named=True):
        if "[REDACTED" not in row["text"]:  # unmasked text: its content's hash is the step's
            # A tool call's content is its input: a JSON object as written, but Codex logs its
            # arguments (and a custom tool's input) as one string, which is hashed as a literal.
            is_object = row["kind"] == "tool_call" and harness != "codex" and _is_json_object(row["text"])
            content = row["text"].encode() if is_object else _literal(row["text"])
            assert hashlib.sha256(content).hexdigest() == row["content_sha256"]
            assert len(content) == row["n_bytes"]
            assert len(row["text"]) == row["n_chars"] and row["cut_chars"] == 0


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _literal(text: str) -> bytes:
    """The JSON string literal the steps hash, written by the standard library (not orjson)."""
    return json.dumps(text, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("harness", list(CASES))
def test_hashes_do_not_depend_on_the_text_policy(harness):
    """metadata_only hashes a tool output's literal as logged (undecoded); full decodes every
    text: the sizes and hashes are the same."""
    adapter, path, _ = CASES[harness]
    with steps.text_policy(True, 1_000_000):
        full = adapter.parse(str(path)).steps
    bare = adapter.parse(str(path)).steps
    assert full.select("n_bytes", "content_sha256").equals(bare.select("n_bytes", "content_sha256"))
    assert bare["n_bytes"].drop_nulls().len() > 0


# Tool outputs as JSON.stringify logs them: quotes, backslashes and control characters escaped
# (ESC as \u001b), DEL, U+2028, non-ASCII and astral characters as they are.
LOGGED = [
    'é \\"q\\" \\\\ back\\nline\\ttab \\u001b[31m ansi \x7f del \u2028 sep / slash 😀'.encode(),
    b"plain ascii",
]


@pytest.mark.parametrize("decode", ["fast", "plain"])
def test_logged_literal_hashes_as_the_decoded_text(tmp_path, monkeypatch, decode):
    """A tool output hashes the same read raw from the log (fast) or decoded (plain): the
    literal the standard library writes for its text. A tool input hashes as its compact JSON
    object, written from the decoded input on both paths."""
    sid = "0b7c7a8e-6d1f-4a57-9a3e-1f2e3d4c5b6a"
    base = {"sessionId": sid, "parentUuid": None, "timestamp": "2026-01-01T00:00:00Z"}
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "#", "timeout": 5, "big": [1, {}]}}
    record = {**base, "type": "assistant", "uuid": "a", "message": {"role": "assistant", "content": [call]}}
    lines = [orjson.dumps(record).replace(b'"#"', b'"' + LOGGED[0] + b'"')]
    for i, body in enumerate(LOGGED):
        result = {"type": "tool_result", "tool_use_id": "t1", "content": "@"}
        rec = {**base, "type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": [result]}}
        lines.append(orjson.dumps(rec).replace(b'"@"', b'"' + body + b'"'))
    path = tmp_path / "projects" / "p" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(claude_code, "DECODE", decode)
    frames = claude_code.parse(str(path))
    start = lines[0].index(b'{"command"')
    _, length = json.JSONDecoder().raw_decode(lines[0][start:].decode())
    logged_input = lines[0][start:].decode()[:length].encode()
    assert json.dumps(json.loads(logged_input), ensure_ascii=False, separators=(",", ":")).encode() == logged_input
    step = frames.steps.filter(pl.col("kind") == "tool_call").row(0, named=True)
    assert (step["content_sha256"], step["n_bytes"]) == (hashlib.sha256(logged_input).hexdigest(), len(logged_input))
    assert frames.calls["command"].to_list() == [json.loads(b'"' + LOGGED[0] + b'"')]
    got = frames.steps.filter(pl.col("kind") == "tool_result")
    want = [b'"' + body + b'"' for body in LOGGED]
    assert _literal(json.loads(want[0])) == want[0]  # the log's bytes are the literal of the text
    assert got["content_sha256"].to_list() == [hashlib.sha256(w).hexdigest() for w in want]
    assert got["n_bytes"].to_list() == [len(w) for w in want]


def test_literal_of_a_lone_surrogate_is_an_escape():
    # No log line with one parses (orjson and msgspec refuse it), but a text must never crash the hash.
    assert steps.literal("a\udc00b") == b'"a\\udc00b"'
    assert steps.literal("é\n") == _literal("é\n")


def test_text_cap_counts_what_it_cut(tmp_path):
    path = tmp_path / "projects" / "p" / "0b7c7a8e-6d1f-4a57-9a3e-1f2e3d4c5b6a.jsonl"
    path.parent.mkdir(parents=True)
    rec = {
        "type": "user",
        "sessionId": "0b7c7a8e-6d1f-4a57-9a3e-1f2e3d4c5b6a",
        "uuid": "u1",
        "parentUuid": None,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "x" * 50 + " key sk-ant-api03-" + "A" * 40},
    }
    path.write_bytes(orjson.dumps(rec) + b"\n")
    with steps.text_policy(True, 20):
        frames = claude_code.parse(str(path))
    (row,) = frames.texts.to_dicts()
    assert row["text"] == "x" * 20 and row["cut_chars"] == row["n_chars"] - 20
    with steps.text_policy(True, 1000):
        (row,) = claude_code.parse(str(path)).texts.to_dicts()
    assert "sk-ant-api03" not in row["text"] and "[REDACTED:" in row["text"]
    assert frames.steps["n_bytes"].item() == len(_literal(rec["message"]["content"]))


def test_resume_keeps_steps_and_texts(tmp_path, monkeypatch):
    monkeypatch.setattr(resume, "MIN_BYTES", 0)
    data = CLAUDE.read_bytes()
    path = tmp_path / "projects" / "p" / CLAUDE.name
    path.parent.mkdir(parents=True)
    with steps.text_policy(True, 100):
        path.write_bytes(data)
        cold, _ = claude_code.parse_from(str(path))
        cut = data.index(b"\n", len(data) // 2) + 1
        path.write_bytes(data[:cut])
        _, checkpoint = claude_code.parse_from(str(path))
        path.write_bytes(data)
        resumed, _ = claude_code.parse_from(str(path), checkpoint)
    assert resumed.steps.equals(cold.steps) and resumed.texts.equals(cold.texts)
    assert cold.texts.height > 0
    # a checkpoint taken without text cannot finish a parse that keeps text: it is read whole
    path.write_bytes(data[:cut])
    _, plain = claude_code.parse_from(str(path))
    path.write_bytes(data)
    with steps.text_policy(True, 100):
        again, cp = claude_code.parse_from(str(path), plain)
    assert again.texts.equals(cold.texts) and cp.resumed_from == 0


def test_a_checkpoint_of_texts_as_dicts_is_read_whole(tmp_path, monkeypatch):
    """A checkpoint taken when a StepLog kept its texts as row dicts (state version 2) is not
    resumed: the file is read whole, to the frames of a cold parse, not restored into texts of
    another shape."""
    monkeypatch.setattr(resume, "MIN_BYTES", 0)
    data = CLAUDE.read_bytes()
    path = tmp_path / "projects" / "p" / CLAUDE.name
    path.parent.mkdir(parents=True)
    cut = data.index(b"\n", len(data) // 2) + 1
    with steps.text_policy(True, 100):
        path.write_bytes(data)
        cold, _ = claude_code.parse_from(str(path))
        path.write_bytes(data[:cut])
        _, checkpoint = claude_code.parse_from(str(path))
        state = resume.loads(checkpoint.state)
        log = state["steps"]
        assert log[steps.STATE_MARK] == steps.STATE_VERSION and len(log["texts"][0]) > 0
        # the same texts as the earlier layout held them: a dict per text, version 2
        log["texts"] = [dict(zip(steps.TEXT_FIELDS, row, strict=True)) for row in zip(*log["texts"], strict=True)]
        log[steps.STATE_MARK] = 2
        old = dataclasses.replace(checkpoint, state=resume.dumps(state))
        path.write_bytes(data)
        again, cp = claude_code.parse_from(str(path), old)
        resumed, _ = claude_code.parse_from(str(path), checkpoint)
    assert cp.resumed_from == 0 and checkpoint.offset > 0
    assert again.steps.equals(cold.steps) and again.texts.equals(cold.texts)
    assert resumed.texts.equals(cold.texts)  # the current layout resumes


# -- real logs ---------------------------------------------------------------------------------


def _kinds(frame) -> Counter:
    return Counter(frame.steps["kind"])


def test_corpus_claude_code_steps(corpus):
    # Counted from the raw records of tool_heavy.jsonl: prompts at lines 4, 21 (/mcp) and 26; the
    # isMeta caveat (20) and a local command's stdout (22) are context; two interrupts (18, 39).
    frames = claude_code.parse(str(corpus / "claude-code/spotter-2.1.38/tool_heavy.jsonl"))
    assert _kinds(frames) == Counter(
        {"tool_call": 6, "tool_result": 6, "prompt": 3, "context": 2, "interrupt": 2, "text": 2, "thinking": 1}
    )
    first, last = frames.steps.row(0, named=True), frames.steps.row(-1, named=True)
    assert (first["line"], first["role"], first["kind"]) == (4, "user", "prompt")
    assert (last["line"], last["role"], last["kind"]) == (39, "user", "interrupt")
    calls = frames.steps.filter(pl.col("kind") == "tool_call")["tool"].to_list()
    assert calls == ["Bash", "Bash", "WebSearch", "Glob", "Read", "WebFetch"]
    results = frames.steps.filter(pl.col("kind") == "tool_result")["call_id"].to_list()
    assert results[0] == "toolu_018GZVh9ymkrdx1TnR8reg5Y" and results[-1] == "toolu_017Q5Sr8KaSgowYhbKXBnfV2"
    assert frames.steps["output_tokens"].sum() == frames.usage["output_tokens"].sum()


def test_corpus_codex_steps(corpus):
    # Counted from the raw response items: 99 function calls + 3 custom + 3 web searches, 102
    # outputs, 25 reasoning items, 13 assistant messages, a developer message and the AGENTS.md
    # user message (context), two typed prompts.
    path = corpus / "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    frames = codex.parse(str(path))
    assert _kinds(frames) == Counter(
        {"tool_call": 105, "tool_result": 102, "thinking": 25, "text": 13, "context": 2, "prompt": 2}
    )
    first, last = frames.steps.row(0, named=True), frames.steps.row(-1, named=True)
    assert (first["line"], first["role"], first["kind"]) == (3, "system", "context")
    assert (last["line"], last["role"], last["kind"]) == (384, "assistant", "text")
    other = codex.parse(str(corpus / "codex/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"))
    assert _kinds(other) == Counter({"tool_call": 38, "tool_result": 38, "thinking": 16, "text": 3})
    assert (other.steps["line"][0], other.steps["kind"][0]) == (3, "thinking")
    assert (other.steps["line"][-1], other.steps["kind"][-1]) == (99, "text")
    # every count lands on a step: the tokens on steps are the session's tokens
    for f in (frames, other):
        assert f.steps["output_tokens"].sum() <= f.usage["output_tokens"].sum()
        assert f.steps.filter(pl.col("output_tokens").is_not_null()).height >= 0.9 * f.usage.height


# -- copied history (issue 13's marking) -------------------------------------------------------

COPIED = SAMPLES / "scenarios/copied-history"


def test_a_forked_codex_child_holds_only_its_own_steps():
    """Lines 2-18 of the child replay its parent (a second session_meta, then the parent's items
    re-stamped at the fork): they are the parent's steps. Its own turn starts at line 21."""
    path = COPIED / "codex/sessions/2026/02/03/rollout-2026-02-03T09-01-00-019c22bb-d108-79fd-9339-e1b14df0cd35.jsonl"
    got = _steps(codex, path)
    assert [tuple(r) for r in got.select(COLUMNS).iter_rows()] == [
        (21, "user", "prompt", None, None, None, None),
        (23, "assistant", "tool_call", "exec_command", "call_eWvH5GJ7Z9dAlWJaI9SReeEp", None, 200),
        (24, "tool", "tool_result", "exec_command", "call_eWvH5GJ7Z9dAlWJaI9SReeEp", False, None),  # exit 0
        (26, "assistant", "tool_call", "apply_patch", "call_sbLWiafoBxsbchTUyxCGx3Iy", None, 450),
        (28, "tool", "tool_result", "apply_patch", "call_sbLWiafoBxsbchTUyxCGx3Iy", False, None),
    ]
    assert got["seq"].to_list() == [0, 1, 2, 3, 4]
    assert "call_Pit0V3PDaoGWh7lXzORo374W" not in got["call_id"].to_list()  # the parent's spawn


def test_a_claude_hand_off_copy_is_not_the_new_sessions(tmp_path):
    """Lines 1-7 copy the old session (same records, sessionId rewritten); line 8 is the new
    session's own 'Implement the following plan' prompt, a root: its steps start there."""
    path = COPIED / "claude-code/projects/-home-dev-projects-quill/9193e951-1982-4cbc-b890-709461cf3ad7.jsonl"
    with steps.text_policy(True, 1000):
        frames = claude_code.parse(str(path))
    got = frames.steps
    assert got["line"].to_list() == [8, 9, 10, 11, 12]
    assert got["seq"].to_list() == [0, 1, 2, 3, 4]
    assert got["kind"].to_list() == ["prompt", "tool_call", "tool_result", "tool_call", "tool_result"]
    assert got["parent_seq"].to_list() == [None, 0, 1, 2, 3]
    assert frames.texts["seq"].to_list() == [0, 1, 2, 3, 4]
    assert frames.texts["text"][0].startswith("Implement the following plan")


def test_real_forked_codex_children_hold_none_of_the_parents_steps():
    from tests.test_copied_history import FAMILY

    if not FAMILY.is_dir():
        pytest.skip("../shared/real-families is absent")
    rollouts = sorted(FAMILY.glob("rollout-*.jsonl"))
    children = [p for p in rollouts if b'"forked_from_id"' in p.read_bytes()[:4000]]
    (parent,) = [p for p in rollouts if p not in children]
    parent_calls = set()
    for raw in parent.read_bytes().splitlines():  # the parent's own call ids, from its raw items
        payload = orjson.loads(raw).get("payload") or {}
        if payload.get("type") in ("function_call", "custom_tool_call"):
            parent_calls.add(payload.get("call_id"))
    assert len(children) == 3 and parent_calls
    for child in children:
        frames = codex.parse(str(child))
        assert frames.steps.height > 0
        assert not set(frames.steps["call_id"].drop_nulls()) & parent_calls, child.name
        assert frames.steps["output_tokens"].sum() <= frames.usage["output_tokens"].sum()


def test_a_step_row_holds_each_value_in_its_column():
    """StepLog keeps a step as a list in FIELDS order: every value lands in its own column."""
    ts = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    log = steps.StepLog()
    log.add("key", 7, ts, "assistant", "tool_call", "x", call_id="c1", tool="Bash", is_error=True,
            model="m", request_id="r1", attempt=2, node="n1", parent=None)  # fmt: skip
    log.add("key", 8, ts, "tool", "tool_result", None, call_id="c1", node="n2", parent="n1")
    usage = {c: i + 1 for i, c in enumerate(steps.TOKEN_COLUMNS)}
    log.tokens(0, usage)
    table, _ = log.finish({"key": "sid"}, "/logs/a.jsonl")
    got = Frames.from_rows(steps=table).steps.to_dicts()
    literal = b'"x"'
    assert got[0] == {
        "session_id": "sid", "attempt": 2, "seq": 0, "ts": ts, "role": "assistant", "kind": "tool_call",
        "call_id": "c1", "tool": "Bash", "is_error": True, "model": "m", "request_id": "r1", **usage,
        "n_bytes": len(literal), "content_sha256": hashlib.sha256(literal).hexdigest(), "parent_seq": None,
        "source_path": "/logs/a.jsonl", "line": 7,
    }  # fmt: skip
    assert (got[1]["seq"], got[1]["parent_seq"], got[1]["input_tokens"], got[1]["n_bytes"]) == (1, 0, None, None)
    assert steps.FIELDS[steps._TOKENS] == steps.TOKEN_COLUMNS


def test_a_checkpoint_of_dict_rows_is_not_resumed():
    """A StepLog state from before rows were lists is refused (ValueError: resume reads the file
    whole), never restored into rows of another shape."""
    old = steps.StepLog().state()
    old[steps.STATE_MARK] = True
    with pytest.raises(ValueError):
        steps.StepLog.restore(old)
    assert steps.StepLog.restore(steps.StepLog().state()).rows == []
