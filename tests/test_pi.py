"""The pi adapter (ingest.pi) on our sample sessions, the real corpus file and broken input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from sessiongraph.ingest import claude_code, codex, omp, pi
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from tests.conftest import head, kinds, sha, ts

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT / "sample_logs" / "pi" / "agent" / "sessions"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

A_ID = "4b1e9d2c-7f3a-4c8e-9a06-5d2b8e1f7c34"
B_ID = "8c5f2a71-0d4e-4b9f-8e13-a6c7d9e2f051"
C_ID = "e2a7c4f9-3b18-4d6e-b5a0-9f1c8d3e7a26"
A = SESSIONS / f"--srv-app--/2025-12-09T19-00-58-000Z_{A_ID}.jsonl"
B = SESSIONS / f"--srv-app--/2025-12-10T08-30-00-000Z_{B_ID}.jsonl"
C = SESSIONS / f"--Users-mara-code-atlas-web--/2025-11-18T14-05-00-000Z_{C_ID}.jsonl"
SAMPLES = [A, B, C]
ATLAS = "/Users/mara/code/atlas-web"
TOKENS = [
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cache_creation_5m_tokens",
    "cache_creation_1h_tokens",
    "reasoning_tokens",
]


def token_sums(frames) -> tuple[int, ...]:
    return tuple(frames.usage.select(TOKENS).sum().row(0))


def events(frames) -> list[tuple]:
    return frames.file_events.select("path", "op", "how", "tier", "ts").rows()


def call(frames, call_id: str) -> dict:
    return frames.calls.filter(pl.col("call_id") == call_id).row(0, named=True)


def codes(frames) -> list[tuple]:
    return frames.diagnostics.select("line", "code").rows()


# ---- sample sessions ----------------------------------------------------------------------

# session_id, native_id, cwd, started_at, ended_at, model, forked_from_id, n_records, first prompt
EXPECTED_SESSIONS = {
    A: (
        f"pi:{A_ID}",
        A_ID,
        "/srv/app",
        "2025-12-09T19:00:58.000Z",
        "2025-12-09T19:03:34.000Z",
        "claude-sonnet-4-5",
        None,
        22,
        "Tidy the invoice service: fix the PORT parsing in src/server.ts, write docs/index.md, then ask codex for"
        " a summary.",
    ),
    # 8 copied entries of A are not B's: header + 9 entries of its own
    B: (
        f"pi:{B_ID}",
        B_ID,
        "/srv/app",
        "2025-12-10T08:30:00.000Z",
        "2025-12-10T08:30:24.000Z",
        "claude-opus-4-5",
        A_ID,
        10,
        "Now document the PORT setting in docs/index.md.",
    ),
    C: (
        f"pi:{C_ID}",
        C_ID,
        ATLAS,
        "2025-11-18T14:05:00.000Z",
        "2025-11-18T14:06:48.000Z",
        "gpt-5.1-codex-mini",
        "71d3b0e5-9c2a-4f8d-a614-2e5b7c9d0f83",
        14,
        "Fix the Button export and check the story renders.",
    ),
}
EXPECTED_KINDS = {
    A: {"edit": 1, "other": 1, "read": 1, "shell": 3, "write": 1},
    B: {"edit": 1, "read": 2},
    C: {"edit": 1, "read": 1, "shell": 2},
}
EXPECTED_EVENTS = {
    A: [
        ("/srv/app/src/server.ts", "read", "read", "verified", ts("2025-12-09T19:01:04.150Z")),
        ("/srv/app/src", "read", "grep", "verified", ts("2025-12-09T19:01:04.180Z")),
        ("/srv/app/src/server.ts", "write", "edit", "verified", ts("2025-12-09T19:01:12.200Z")),
        ("/srv/app/docs/index.md", "write", "write", "verified", ts("2025-12-09T19:02:18.300Z")),
    ],
    B: [
        ("/srv/app/docs/index.md", "read", "read", "verified", ts("2025-12-10T08:30:09.120Z")),
        ("/srv/app/docs/index.md", "write", "edit", "verified", ts("2025-12-10T08:30:15.200Z")),
    ],
    C: [
        (f"{ATLAS}/src/components/Button.tsx", "read", "read", "verified", ts("2025-11-18T14:05:08.450Z")),
        (f"{ATLAS}/src/components/index.ts", "write", "edit", "verified", ts("2025-11-18T14:05:20.300Z")),
    ],
}
# usage rows, then sums of TOKENS (cacheWrite lands in the 5-minute bucket; pi logs no 1h bucket)
EXPECTED_TOKENS = {
    A: (6, (2540, 476, 26900, 4010, 4010, 0, 0)),
    B: (4, (2490, 305, 22400, 5200, 5200, 0, 0)),  # the copied replies of A are not counted
    C: (5, (2180, 430, 7900, 0, 0, 0, 0)),
}
EXPECTED_DIAGNOSTICS = {A: [], B: [(2, "foreign_record")], C: [(2, "foreign_record")]}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:32])
def test_sample_session_row(path):
    frames = pi.parse(str(path))
    [s] = frames.sessions.iter_rows(named=True)
    sid, native, cwd, start, end, model, forked, n, prompt = EXPECTED_SESSIONS[path]
    assert (s["session_id"], s["native_id"], s["cwd"], s["model"], s["forked_from_id"], s["n_records"]) == (
        sid,
        native,
        cwd,
        model,
        forked,
        n,
    )
    assert (s["started_at"], s["ended_at"]) == (ts(start), ts(end))
    assert s["first_prompt_hash"] == sha(prompt)
    assert (s["harness"], s["session_kind"], s["layout"], s["attempt"], s["agent_id"]) == (
        "pi",
        "main",
        "main",
        None,
        None,
    )
    assert (s["parent_native_id"], s["harness_version"], s["source_path"]) == (None, None, str(path))
    assert s["source_bytes"] == path.stat().st_size


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:32])
def test_sample_calls_events_tokens_and_diagnostics(path):
    frames = pi.parse(str(path))
    assert kinds(frames) == EXPECTED_KINDS[path]
    assert events(frames) == EXPECTED_EVENTS[path]
    rows, sums = EXPECTED_TOKENS[path]
    assert (frames.usage.height, token_sums(frames)) == (rows, sums)
    assert codes(frames) == EXPECTED_DIAGNOSTICS[path]
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    sid = frames.sessions["session_id"][0]
    assert set(frames.calls["session_id"]) | set(frames.usage["session_id"]) | set(
        frames.file_events["session_id"]
    ) <= {sid}


def test_shell_calls_of_session_a():
    frames = pi.parse(str(A))
    shell = frames.calls.filter(pl.col("kind") == "shell").sort("started_at")
    assert shell.select("tool", "command", "exit_code", "is_error", "output_ids").rows() == [
        ("bashExecution", "git status --short", 0, False, []),  # the user's !cmd
        (
            "bash",
            'codex exec "summarise what this service does"',
            0,
            False,
            ["019b047e-7e64-7d61-b3c2-6f0e1d2a8b57"],
        ),  # printed `session id:` -> launch evidence
        ("bash", "npm test", 1, True, []),
    ]
    launch = call(frames, "toolu_01PiA5codexExec00000005")
    assert (launch["started_at"], launch["ended_at"], launch["cwd"]) == (
        ts("2025-12-09T19:02:36.900Z"),
        ts("2025-12-09T19:02:49.400Z"),
        "/srv/app",
    )
    bang = shell.row(0, named=True)
    assert bang["started_at"] == bang["ended_at"] == ts("2025-12-09T19:01:30.000Z")
    assert len(bang["call_id"]) == 8  # the entry id: a user command has no toolCall id
    grep = call(frames, "toolu_01PiA2grepPort000000002")
    assert (grep["tool"], grep["kind"], grep["paths"]) == ("grep", "other", ["/srv/app/src"])
    usage = frames.usage.sort("ts")
    assert usage["message_id"].str.len_chars().to_list() == [8] * 6  # v3 entry ids
    assert set(usage["model"]) == {"claude-sonnet-4-5"}


def test_fork_copies_are_left_out():
    frames = pi.parse(str(B))
    assert frames.calls["call_id"].to_list() == [
        "toolu_01PiB1readDocs000000001",
        "toolu_01PiB2editDocs000000002",
        "toolu_01PiB3readMissing000003",
    ]
    failed = call(frames, "toolu_01PiB3readMissing000003")
    assert (failed["is_error"], failed["paths"]) == (True, ["/srv/app/src/config.ts"])  # no event for it
    assert frames.diagnostics["detail"].to_list() == ["8 entries copied from the parent session; not counted here"]
    assert frames.usage["ts"].min() >= ts("2025-12-10T08:30:00.000Z")


def test_v1_session_without_entry_ids():
    frames = pi.parse(str(C))
    assert frames.usage["message_id"].to_list() == ["line:6", "line:9", "line:14", "line:15", "line:17"]
    assert frames.usage["model"].to_list() == ["gpt-5.1-codex"] * 2 + ["gpt-5.1-codex-mini"] * 3
    aborted = call(frames, "call_pi_C4_storybook")  # its turn was aborted: no result
    assert (aborted["ended_at"], aborted["is_error"], aborted["exit_code"], aborted["command"]) == (
        None,
        None,
        None,
        "npx storybook build --quiet",
    )
    ls = call(frames, "call_pi_C1_ls")
    assert (ls["exit_code"], ls["is_error"], ls["ended_at"]) == (0, False, ts("2025-11-18T14:05:08.400Z"))
    assert frames.calls.filter(pl.col("tool") == "read")["paths"].to_list() == [[f"{ATLAS}/src/components/Button.tsx"]]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:32])
def test_no_prompt_or_output_text_in_frames(path):
    frames = pi.parse(str(path))
    values = " ".join(str(v) for df in frames.tables().values() for col in df.columns for v in df[col].to_list())
    for secret in (
        "Tidy the invoice",
        "stores invoices",
        "FAIL",
        "Number(process.env",
        "document the PORT",
        "Button story",
        "eslint",
        "export default Button",
        "Successfully",
        "ENOENT",
        "Read",
        "Done:",
    ):
        assert secret not in values


# ---- the real corpus (pi-mono test fixture, format v1) ------------------------------------


@pytest.fixture
def large_session() -> Path:
    path = CORPUS / "pi" / "large-session.jsonl"
    if not path.is_file():
        pytest.skip(f"real-log corpus not found at {path}")
    return path


def test_corpus_large_session(large_session):
    # Expected values come from an independent tally of the raw JSON (json + collections only).
    frames = pi.parse(str(large_session))
    [s] = frames.sessions.iter_rows(named=True)
    native = "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert (s["session_id"], s["cwd"], s["model"], s["n_records"], s["forked_from_id"]) == (
        f"pi:{native}",
        "/Users/badlogic/workspaces/pi-mono",
        "claude-sonnet-4-5",
        1019,
        None,
    )
    # The header is stamped 23:33:50.805 but four entries (a /mode prompt, an aborted reply, a model
    # change) come before it: the session starts at the earliest record.
    assert (s["started_at"], s["ended_at"]) == (ts("2025-11-20T23:33:01.550Z"), ts("2025-11-21T02:14:02.980Z"))
    assert s["first_prompt_hash"] == "887d2ebf8ef77e5dc856ac5ba4f7a9220da20db972b9307695f1ed5efdcfae9e"
    assert kinds(frames) == {"edit": 146, "read": 50, "shell": 192, "write": 3}
    # 391 calls, 373 answered; the 18 unanswered are edits of aborted turns; 19 bash results are errors.
    assert frames.calls["ended_at"].null_count() == 18
    assert frames.calls.filter(pl.col("ended_at").is_null())["tool"].unique().to_list() == ["edit"]
    assert frames.calls["is_error"].sum() == 19
    shell = frames.calls.filter(pl.col("kind") == "shell")
    # "Command exited with code N" (14 x 1, 3 x 2); two errors without it (null); 173 clean runs.
    assert (
        sorted(shell["exit_code"].to_list(), key=lambda c: (c is None, c))
        == [0] * 173 + [1] * 14 + [2] * 3 + [None] * 2
    )
    assert shell["output_ids"].list.len().sum() == 0
    # Events: 50 reads, 128 answered edits + 3 writes; 23 distinct paths each.
    assert dict(frames.file_events.group_by("op").len().sort("op").iter_rows()) == {"read": 50, "write": 131}
    assert dict(frames.file_events.group_by("op").agg(pl.col("path").n_unique()).sort("op").iter_rows()) == {
        "read": 23,
        "write": 23,
    }
    assert set(frames.file_events["tier"]) == {"verified"}
    # All in the workspace but the theme file read and edited as ~/.pi/agent/themes/nord.json: a home
    # path stays as written (ingest/paths.py, "~ kept, never joined to a cwd"), no longer
    # /Users/badlogic/workspaces/pi-mono/~/.pi/... as before the canonical path form.
    outside = frames.file_events.filter(~pl.col("path").str.starts_with("/Users/badlogic/workspaces/pi-mono/"))
    assert sorted(outside.select("line", "op", "path").rows()) == [
        (830, "read", "~/.pi/agent/themes/nord.json"),
        (832, "write", "~/.pi/agent/themes/nord.json"),
        (834, "write", "~/.pi/agent/themes/nord.json"),
    ]
    # 453 assistant messages, all with usage (input, output, cacheRead, cacheWrite summed raw).
    assert frames.usage.height == 453
    assert token_sums(frames) == (1049, 83156, 43229469, 4296232, 4296232, 0, 0)
    assert dict(frames.usage.group_by("model").len().sort("model").iter_rows()) == {
        "claude-sonnet-4-5": 452,
        "gpt-5.1-codex": 1,
    }
    assert frames.usage["message_id"].n_unique() == 453
    assert codes(frames) == []


# ---- detect -------------------------------------------------------------------------------


def _omp_files() -> list[Path]:
    return sorted((ROOT / "sample_logs" / "omp").rglob("*.jsonl"))


def test_detect_matrix(large_session):
    for path in SAMPLES + [large_session]:
        assert pi.detect(str(path), head(path)), path
        assert not omp.detect(str(path), head(path)), path
        assert not claude_code.detect(str(path), head(path)) and not codex.detect(str(path), head(path)), path
    assert _omp_files()
    for path in _omp_files():  # oh-my-pi shares the format: pi must leave those files alone
        assert not pi.detect(str(path), head(path)), path
    others = sorted((ROOT / "sample_logs" / "claude-code").rglob("*.jsonl")) + sorted(
        (ROOT / "sample_logs" / "codex").rglob("*.jsonl")
    )
    assert len(others) > 10
    for path in others:
        assert not pi.detect(str(path), head(path)), path


def test_detect_short_head_and_junk():
    assert pi.detect(str(A), head(A, 200))  # the header line fits; the next one is cut
    for junk in (
        b"",
        b"\n",
        b"[1]\n",
        b"not json\n",
        b'{"type":"session"}\n',
        b'{"type":"session","id":7}\n',
        b'{"type":"message","id":"x","timestamp":"2025-01-01T00:00:00Z"}\n',
        b"\xff\xfe\x00",
    ):
        assert not pi.detect("x.jsonl", junk), junk


# ---- bad input ----------------------------------------------------------------------------


def _copy(tmp_path: Path, src: Path = A) -> tuple[Path, list[str]]:
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    return dst, dst.read_text().splitlines()


def _line_of(lines: list[str], needle: str) -> int:
    return next(i for i, line in enumerate(lines) if needle in line)


def test_bad_lines_become_diagnostics_and_good_lines_still_count(tmp_path):
    path, lines = _copy(tmp_path)
    npm_call = _line_of(lines, "toolu_01PiA6npmTest")  # the assistant message calling npm test
    lines.insert(3, "this is not json")  # garbage
    lines.insert(5, '{"type":"future_entry","id":"ffffffff","timestamp":"2025-12-09T19:01:01.000Z"}')
    rec = json.loads(lines[6])  # the first assistant message (read + grep)
    rec["timestamp"] = "yesterday"  # bad timestamp: placed by message.timestamp instead
    lines[6] = json.dumps(rec)
    rec = json.loads(lines[npm_call + 2])
    rec["message"]["usage"] = "lots"  # wrong type
    lines[npm_call + 2] = json.dumps(rec)
    lines.append(
        '{"type":"message","id":"deadbeef","parentId":null,"timestamp":"2025-12-09T19:04:00.000Z","message":[]}'
    )
    lines.append(
        '{"type":"message","id":"cafebabe","parentId":null,"timestamp":"2025-12-09T19:04:01.000Z",'
        '"message":{"role":"toolResult","toolCallId":"toolu_nobody","toolName":"bash","content":[]}}'
    )
    lines.append(
        '{"type":"message","id":"0badf00d","parentId":null,"timestamp":"2025-12-09T19:04:02.000Z",'
        '"message":{"role":"wizard"}}'
    )
    text = "\n".join(lines) + "\n" + '{"type":"message","id":"abc'  # truncated last line
    path.write_text(text)
    n = len(lines)
    frames = pi.parse(str(path))
    assert codes(frames) == [
        (4, "invalid_json"),
        (6, "unknown_record_type"),
        (7, "bad_timestamp"),
        (npm_call + 3, "wrong_type"),
        (n - 2, "wrong_type"),
        (n - 1, "unmatched_result"),
        (n, "unknown_record_type"),
        (n + 1, "truncated_line"),
    ]
    assert frames.diagnostics.filter(pl.col("code") == "wrong_type")["detail"].to_list() == [
        "message.usage: string",
        "message: array",
    ]
    # Every good line still counts: all seven calls, five of six usage records, all events.
    assert kinds(frames) == EXPECTED_KINDS[A]
    assert frames.usage.height == 5
    assert events(frames) == EXPECTED_EVENTS[A]
    first = frames.usage.sort("line").row(0, named=True)
    assert first["ts"] == ts("2025-12-09T19:01:04.000Z")  # from message.timestamp (epoch ms)


def test_wrong_types_in_tool_calls(tmp_path):
    path, lines = _copy(tmp_path)
    i = _line_of(lines, "toolu_01PiA4writeDocs")
    rec = json.loads(lines[i])
    rec["message"]["content"][0]["arguments"] = ["docs/index.md"]
    lines[i] = json.dumps(rec)
    j = _line_of(lines, "toolu_01PiA6npmTest")
    rec = json.loads(lines[j])
    rec["message"]["content"][0]["arguments"] = '{"command": "npm test"'  # not JSON
    lines[j] = json.dumps(rec)
    k = _line_of(lines, '"role":"user"')
    rec = json.loads(lines[k])
    rec["message"]["content"] = 42
    lines[k] = json.dumps(rec)
    h = json.loads(lines[0])
    h["parentSession"] = 17
    lines[0] = json.dumps(h)
    path.write_text("\n".join(lines) + "\n")
    frames = pi.parse(str(path))
    assert frames.diagnostics.select("line", "code", "detail").rows() == [
        (1, "wrong_type", "session.parentSession: int"),
        (k + 1, "wrong_type", "message.content: int"),
        (i + 1, "bad_arguments", "write: arguments are a JSON array"),
        (j + 1, "bad_arguments", "bash: arguments are not JSON (22 chars)"),
    ]
    write = call(frames, "toolu_01PiA4writeDocs00000004")
    assert (write["kind"], write["paths"]) == ("write", [])
    assert call(frames, "toolu_01PiA6npmTest0000000006")["command"] is None
    # The first prompt was not text: the first one that is stands in (as for Claude).
    assert frames.sessions["first_prompt_hash"][0] == sha("Leave the tests for now.")
    assert frames.sessions["forked_from_id"][0] is None


def test_no_header_is_no_session(tmp_path):
    path, lines = _copy(tmp_path)
    path.write_text("\n".join(lines[1:]) + "\n")
    frames = pi.parse(str(path))
    assert frames.sessions.height == frames.calls.height == frames.usage.height == 0
    assert codes(frames) == [(None, "no_session")]


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert codes(pi.parse(str(empty))) == [(None, "empty_file")]
    assert codes(pi.parse(str(tmp_path / "gone.jsonl"))) == [(None, "unreadable_file")]
