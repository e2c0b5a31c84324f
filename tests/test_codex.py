"""The Codex adapter (ingest.codex) on our sample rollouts, the real corpus and broken input."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import polars as pl
import pytest

from sessiongraph.ingest import codex, resume
from sessiongraph.ingest.frames import CALL_KINDS, DIAGNOSTIC_CODES, FILE_OPS, SCHEMAS, SESSION_KINDS, TIERS
from tests.conftest import head, kinds, ts

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT / "sample_logs" / "codex" / "sessions"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

CLI = SESSIONS / "2025/12/03/rollout-2025-12-03T10-14-05-019ae37d-847f-7e4a-9b1f-3d5c8a2e7f10.jsonl"
EXEC = SESSIONS / "2025/12/09/rollout-2025-12-09T14-02-37-019b047e-7e64-7d61-b3c2-6f0e1d2a8b57.jsonl"
DESKTOP = SESSIONS / "2025/12/15/rollout-2025-12-15T09-31-02-019b2159-5b5d-7f24-8d15-a49c2e6b3f08.jsonl"
PARENT = SESSIONS / "2025/12/16/rollout-2025-12-16T08-05-12-019b2631-1f18-7a9e-b6f3-0c7d8e9a1b24.jsonl"
CHILD = SESSIONS / "2025/12/16/rollout-2025-12-16T08-05-16-019b2631-31f9-7b35-9c4a-d2e8f6a07c13.jsonl"
LEGACY = SESSIONS / "rollout-2025-08-20T13-20-47-5d2c8e71-4b9a-4f36-a0e1-7c3b9d4f2a68.jsonl"
SAMPLES = [CLI, EXEC, DESKTOP, PARENT, CHILD, LEGACY]

P_ID = "019b2631-1f18-7a9e-b6f3-0c7d8e9a1b24"
C_ID = "019b2631-31f9-7b35-9c4a-d2e8f6a07c13"
LAUNCHED = "019ae37d-e594-7c03-a8d6-51e0b7c94d22"  # printed by the `codex exec` in CLI

TOKENS = ["input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens"]


def session(frames) -> dict:
    assert frames.sessions.height == 1
    return frames.sessions.row(0, named=True)


def token_sums(frames) -> tuple[int, ...]:
    return tuple(frames.usage.select(TOKENS).sum().row(0))


def events(frames) -> list[tuple]:
    return frames.file_events.select("path", "op", "tier").rows()


def call(frames, call_id: str) -> dict:
    return frames.calls.filter(pl.col("call_id") == call_id).row(0, named=True)


def codes(frames) -> list[str]:
    return frames.diagnostics["code"].to_list()


# ---- sample rollouts ----------------------------------------------------------------------

# (session_id, entrypoint, originator, session_kind, parent_native_id, model, started_at)
EXPECTED_SESSIONS = {
    CLI: (
        "codex:019ae37d-847f-7e4a-9b1f-3d5c8a2e7f10",
        "cli",
        "codex-tui",
        "main",
        None,
        "gpt-5.5",
        "2025-12-03T09:14:05.311Z",
    ),
    EXEC: (
        "codex:019b047e-7e64-7d61-b3c2-6f0e1d2a8b57",
        "exec",
        "codex_exec",
        "main",
        None,
        "gpt-5.1-codex-max",
        "2025-12-09T19:02:37.412Z",
    ),
    DESKTOP: (
        "codex:019b2159-5b5d-7f24-8d15-a49c2e6b3f08",
        "vscode",
        "Codex Desktop",
        "main",
        None,
        "gpt-5.5",
        "2025-12-15T09:31:02.877Z",
    ),
    PARENT: (f"codex:{P_ID}", "cli", "codex-tui", "main", None, "gpt-5.5", "2025-12-16T08:05:12.088Z"),
    CHILD: (f"codex:{C_ID}", "subagent", "codex-tui", "subagent", P_ID, "gpt-5.5-mini", "2025-12-16T08:05:16.921Z"),
    LEGACY: ("codex:5d2c8e71-4b9a-4f36-a0e1-7c3b9d4f2a68", None, None, "main", None, None, "2025-08-20T11:20:47.118Z"),
}
EXPECTED_KINDS = {
    CLI: {"other": 2, "patch": 1, "shell": 3},
    EXEC: {"shell": 3},
    DESKTOP: {"other": 4, "patch": 1, "shell": 2},
    PARENT: {"other": 1, "patch": 1, "spawn": 1},
    CHILD: {"shell": 2},
    LEGACY: {"patch": 1, "shell": 4},
}
# Sums of the deltas = last cumulative total: (input - cached, cached, output, reasoning).
EXPECTED_TOKENS = {
    CLI: (5, (85300 - 65280, 65280, 1180, 256)),  # the re-emitted 31260 total counted once
    EXEC: (4, (42000 - 30464, 30464, 690, 192)),
    DESKTOP: (3, (39000 - 24832, 24832, 900, 300)),
    PARENT: (2, (29500 - 13824, 13824, 650, 260)),
    CHILD: (2, (16900 - 7936, 7936, 420, 110)),
    LEGACY: (0, (0, 0, 0, 0)),  # pre-envelope rollouts persisted no token counts
}
TALLY, ATLAS, KEEL = "/home/dev/projects/tally", "/Users/mara/code/atlas-web", "/home/dev/projects/keel"
EXPECTED_EVENTS = {
    CLI: [
        (f"{TALLY}/src/tally/cli.py", "read", "reported"),
        (f"{TALLY}/pyproject.toml", "read", "reported"),
        (f"{TALLY}/src/tally/export.py", "write", "verified"),
        (f"{TALLY}/src/tally/cli.py", "write", "verified"),
    ],
    EXEC: [],
    DESKTOP: [
        (f"{ATLAS}/src/components/OldButton.tsx", "delete", "verified"),
        (f"{ATLAS}/src/components/Button.tsx", "delete", "verified"),
        (f"{ATLAS}/src/components/ui/Button.tsx", "write", "verified"),
    ],
    PARENT: [(f"{KEEL}/src/auth/refresh.ts", "write", "verified")],
    CHILD: [(f"{KEEL}/src/auth/refresh.ts", "read", "reported")],
    LEGACY: [("/home/dev/legacy-app/README.md", "write", "verified")],
}
EXPECTED_PATCH_PATHS = {
    CLI: [f"{TALLY}/src/tally/export.py", f"{TALLY}/src/tally/cli.py"],
    EXEC: None,
    DESKTOP: [
        f"{ATLAS}/src/components/OldButton.tsx",
        f"{ATLAS}/src/components/Button.tsx",
        f"{ATLAS}/src/components/ui/Button.tsx",
    ],
    PARENT: [f"{KEEL}/src/auth/refresh.ts"],
    CHILD: None,
    LEGACY: ["/home/dev/legacy-app/README.md"],
}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:30])
def test_sample_session_row(path):
    frames = codex.parse(str(path))
    s = session(frames)
    sid, entry, orig, kind, parent, model, started = EXPECTED_SESSIONS[path]
    got = (
        s["session_id"],
        s["entrypoint"],
        s["originator"],
        s["session_kind"],
        s["parent_native_id"],
        s["model"],
        s["started_at"],
    )
    assert got == (sid, entry, orig, kind, parent, model, ts(started))
    assert (s["harness"], s["layout"], s["native_id"]) == ("codex", "rollout", sid[len("codex:") :])
    assert s["source_path"] == str(path)
    assert s["source_bytes"] == path.stat().st_size
    assert s["n_records"] == len(path.read_text().splitlines())
    assert codes(frames) == []


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:30])
def test_sample_calls_events_tokens(path):
    frames = codex.parse(str(path))
    assert kinds(frames) == EXPECTED_KINDS[path]
    n, sums = EXPECTED_TOKENS[path]
    assert frames.usage.height == n
    assert token_sums(frames) == sums
    assert events(frames) == EXPECTED_EVENTS[path]
    patches = frames.calls.filter(pl.col("kind") == "patch")["paths"].to_list()
    assert patches == ([EXPECTED_PATCH_PATHS[path]] if EXPECTED_PATCH_PATHS[path] else [])
    sid = session(frames)["session_id"]
    for name in ("calls", "file_events", "usage"):
        assert getattr(frames, name)["session_id"].to_list() == [sid] * getattr(frames, name).height


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:30])
def test_frames_follow_the_contract(path):
    frames = codex.parse(str(path))
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name]
    assert set(frames.calls["kind"]) <= set(CALL_KINDS)
    assert set(frames.file_events["op"]) <= set(FILE_OPS)
    assert set(frames.file_events["tier"]) <= set(TIERS)
    assert set(frames.sessions["session_kind"]) <= set(SESSION_KINDS)
    assert (
        frames.usage.select(pl.col("cache_creation_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens"))
        .sum()
        .row(0)
    ) == (0, 0, 0)


def test_cli_sample_details():
    frames = codex.parse(str(CLI))
    s = session(frames)
    assert (s["cwd"], s["git_branch"], s["git_commit"], s["git_repo"], s["harness_version"]) == (
        TALLY,
        "feature/csv-export",
        "4f1c2a9e7b3d5f608a1c2e4b6d8f0a1b3c5d7e9f",
        "git@github.com:example/tally.git",
        "0.125.0",
    )
    assert s["ended_at"] == ts("2025-12-03T09:14:58.433Z")
    # exec_command_end wins over the first (still running) output for ended_at and exit code.
    a1 = call(frames, "call_A1")
    assert (a1["tool"], a1["command"], a1["cwd"], a1["exit_code"], a1["is_error"]) == (
        "exec_command",
        "sed -n '1,120p' src/tally/cli.py && cat pyproject.toml",
        TALLY,
        0,
        False,
    )
    assert (a1["started_at"], a1["ended_at"]) == (ts("2025-12-03T09:14:24.006Z"), ts("2025-12-03T09:14:25.244Z"))
    b1 = call(frames, "call_B1")
    assert (b1["tool"], b1["kind"], b1["exit_code"]) == ("write_stdin", "other", None)
    c1 = call(frames, "call_C1")
    assert c1["output_ids"] == [LAUNCHED]  # printed twice (output + exec_command_end), kept once
    e1 = call(frames, "call_E1")
    assert (e1["exit_code"], e1["is_error"]) == (1, True)
    d1 = call(frames, "call_D1")
    assert (d1["tool"], d1["exit_code"], d1["is_error"], d1["line"]) == ("apply_patch", 0, False, 25)
    writes = frames.file_events.filter(pl.col("op") == "write")
    assert writes["how"].to_list() == ["apply_patch"] * 2
    assert writes["ts"].to_list() == [ts("2025-12-03T09:14:51.690Z")] * 2  # patch_apply_end time
    reads = frames.file_events.filter(pl.col("op") == "read")
    assert reads.select("how", "call_id").rows() == [("parsed_cmd", "call_A1")] * 2
    # One row per new cumulative total; the duplicate on line 17 adds nothing.
    assert frames.usage["message_id"].to_list() == ["cum:15410", "cum:31260", "cum:48340", "cum:67120", "cum:86480"]
    assert frames.usage["line"].to_list() == [11, 15, 22, 28, 32]
    assert frames.usage["input_tokens"].to_list() == [15200, 696, 1184, 1404, 1536]
    assert set(frames.usage["model"]) == {"gpt-5.5"}


def test_exec_sample_shell_command_cwd_and_exit_codes():
    frames = codex.parse(str(EXEC))
    rows = frames.calls.select("call_id", "command", "cwd", "exit_code", "is_error").rows()
    assert rows == [
        ("call_x1", "ls -la", "/srv/app", 0, False),
        ("call_x2", "grep -rn TODO src | head -20", "/srv/app", 1, True),  # no workdir: turn cwd
        ("call_x3", "cat index.md", "/srv/app/docs", 0, False),  # relative workdir
    ]
    assert (session(frames)["git_repo"], session(frames)["harness_version"]) == (
        "https://github.com/example/app.git",
        "0.61.0",
    )


def test_desktop_sample_write_stdin_poll_finishes_its_exec_call():
    frames = codex.parse(str(DESKTOP))
    t3 = call(frames, "call_t3")
    assert t3["command"] == "npx vitest run src/components/ui"
    assert (t3["exit_code"], t3["is_error"]) == (1, True)
    assert t3["ended_at"] == ts("2025-12-15T09:31:55.412Z")  # the poll that saw the exit
    assert call(frames, "call_w3")["exit_code"] is None
    assert call(frames, "call_l3")["exit_code"] == 0
    tools = frames.calls.filter(pl.col("kind") == "other")["tool"].to_list()
    assert tools == ["mcp__linear__get_issue", "view_image", "web_search_call", "write_stdin"]
    assert frames.calls.filter(pl.col("tool") == "web_search_call")["call_id"].to_list() == [None]
    # Text-derived patch events carry the call's own time and line.
    assert frames.file_events["ts"].to_list() == [ts("2025-12-15T09:31:46.515Z")] * 3
    by_model = dict(frames.usage.group_by("model").agg(pl.col("input_tokens").sum()).iter_rows())
    assert by_model == {"gpt-5.5": 12000 + 1072, "gpt-5.5-mini": 1096}


def test_spawn_parent_and_child_link():
    parent, child = codex.parse(str(PARENT)), codex.parse(str(CHILD))
    spawn = parent.calls.filter(pl.col("kind") == "spawn").row(0, named=True)
    assert (spawn["call_id"], spawn["tool"], spawn["subagent_type"], spawn["description"]) == (
        "call_S4",
        "spawn_agent",
        "explorer",
        "map-token-refresh",
    )
    assert spawn["result_agent_id"] == C_ID
    assert call(parent, "call_W4")["tool"] == "wait_agent"
    p, c = session(parent), session(child)
    assert (p["root_native_id"], p["parent_native_id"], p["spawn_depth"]) == (P_ID, None, None)
    assert (c["parent_native_id"], c["root_native_id"], c["spawn_depth"], c["agent_type"]) == (
        P_ID,
        P_ID,
        1,
        "explorer",
    )
    assert c["first_prompt_hash"] == spawn["prompt_hash"] is not None
    assert p["first_prompt_hash"] != c["first_prompt_hash"]


def test_legacy_sample_bare_items():
    frames = codex.parse(str(LEGACY))
    rows = frames.calls.select("call_id", "tool", "kind", "command", "exit_code", "is_error").rows()
    assert rows == [
        ("call_L1", "shell", "shell", "ls -la", 0, False),
        ("call_L2", "shell", "shell", "cat READMEE.md", 1, True),
        ("call_L3", "local_shell_call", "shell", "wc -l README.md", 0, False),
        ("call_L4", "shell", "patch", None, 0, False),  # ["apply_patch", PATCH] via the shell tool
        ("call_L5", "shell", "shell", "git status --short", 0, False),
    ]
    assert set(frames.calls["cwd"]) == {"/home/dev/legacy-app"}
    assert frames.calls["started_at"].null_count() == 5  # bare items have no timestamps
    s = session(frames)
    assert (s["git_branch"], s["ended_at"], s["harness_version"], s["cwd"]) == (
        "main",
        ts("2025-08-20T11:20:47.118Z"),
        None,
        None,
    )
    assert s["first_prompt_hash"] is not None  # the typed prompt, not <environment_context>


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:30])
def test_no_prompt_or_output_text_in_frames(path):
    frames = codex.parse(str(path))
    values = " ".join(str(v) for df in frames.tables().values() for col in df.columns for v in df[col].to_list())
    for secret in (
        "add a CSV export command",
        "AssertionError",
        "stores invoices",
        "Scout",
        "Consolidate buttons",
        "Locate the code",
        "Fixed the typo",
        "import argparse",
        "list the files and fix",
        "button-mock.png",
        "FAIL",
        "Success. Updated",
    ):
        assert secret not in values


# ---- the real corpus ----------------------------------------------------------------------

TUI_REAL = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
DESKTOP_REAL = "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"


@pytest.fixture
def codex_corpus() -> Path:
    folder = CORPUS / "codex"
    if not folder.is_dir():
        pytest.skip(f"real-log corpus not found at {folder}")
    return folder


def test_corpus_tui_rollout(codex_corpus):
    frames = codex.parse(str(codex_corpus / TUI_REAL))
    s = session(frames)
    assert (s["session_id"], s["originator"], s["harness_version"], s["entrypoint"]) == (
        "codex:019e1625-789d-76c0-80ab-3724b5ddb799",
        "codex-tui",
        "0.125.0",
        "cli",
    )
    assert s["cwd"] == "/Users/Sample_User/repos/codemie-ai/codemie-code"
    assert (s["git_branch"], s["git_commit"]) == ("feat/codex-agent-plugin", "c8c252acd853de59c54b5c31374fec6028ee812e")
    assert (s["model"], s["session_kind"], s["n_records"]) == ("gpt-5.5", "main", 386)
    assert (s["started_at"], s["ended_at"]) == (ts("2026-05-11T08:26:55.042Z"), ts("2026-05-11T08:44:58.544Z"))
    # exec_command 43; write_stdin 54 + update_plan 2 + web_search_call 3; apply_patch 3.
    assert kinds(frames) == {"other": 59, "patch": 3, "shell": 43}
    root = "/Users/Sample_User/repos/codemie-ai/codemie-code/src/agents/plugins"
    patch_paths = [
        f"{root}/__tests__/codemie-code-reasoning.test.ts",
        f"{root}/codemie-code.plugin.ts",
        f"{root}/opencode/opencode.plugin.ts",
    ]
    patches = frames.calls.filter(pl.col("kind") == "patch")
    assert patches["paths"].to_list() == [[p] for p in patch_paths]
    writes = frames.file_events.filter(pl.col("op") == "write")
    assert writes["path"].to_list() == patch_paths
    assert set(writes["tier"]) == {"verified"}
    reads = frames.file_events.filter(pl.col("op") == "read")
    assert (reads.height, reads["path"].n_unique()) == (19, 12)
    # exec_command_end exit codes: 39 zero, three 1s and one 2.
    shell = frames.calls.filter(pl.col("kind") == "shell")
    assert sorted(shell["exit_code"].to_list()) == [0] * 39 + [1, 1, 1, 2]
    assert shell["is_error"].sum() == 4 and shell["ended_at"].null_count() == 0
    # 66 strictly increasing totals; sums = the last total (6055836 in, 4929536 cached).
    assert frames.usage.height == 66
    assert token_sums(frames) == (1126300, 4929536, 9118, 1759)
    assert codes(frames) == []


def test_corpus_desktop_rollout(codex_corpus):
    frames = codex.parse(str(codex_corpus / DESKTOP_REAL))
    s = session(frames)
    assert (s["session_id"], s["originator"], s["harness_version"], s["entrypoint"]) == (
        "codex:019e1695-0522-7c83-8b39-0dd379793f80",
        "Codex Desktop",
        "0.128.0-alpha.1",
        "vscode",
    )
    assert (s["cwd"], s["git_branch"], s["model"]) == ("/Users/Sample_User/naya", None, None)
    assert s["started_at"] == ts("2026-05-11T10:28:45.482Z")
    assert kinds(frames) == {"other": 3, "shell": 35}  # 3 x `js` (mcp__node_repl__ namespace)
    shell = frames.calls.filter(pl.col("kind") == "shell")
    assert sorted(shell["exit_code"].to_list()) == [0] * 34 + [1]  # "Process exited with code N"
    assert frames.file_events.height == 0 and frames.usage.height == 0
    assert codes(frames) == []


# ---- detect -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:30])
def test_detect_samples(path):
    assert codex.detect(str(path), head(path))
    assert codex.detect(str(path), head(path, 120))  # header longer than head: byte checks


def test_detect_corpus(codex_corpus):
    for path in sorted(codex_corpus.glob("*.jsonl")):
        assert codex.detect(str(path), head(path))
        assert codex.detect(str(path), head(path, 300))


def test_detect_rejects_other_logs(tmp_path):
    claude = CORPUS / "claude-code/flat-2.0.64/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    if claude.is_file():
        assert not codex.detect(str(claude), head(claude))
    pi = CORPUS / "pi/large-session.jsonl"
    if pi.is_file():
        assert not codex.detect(str(pi), head(pi))
    other = tmp_path / "rollout-2025-12-01T00-00-00-0000.jsonl"  # the name alone is not enough
    other.write_text('{"event": "login", "user": 7}\n{"event": "logout"}\n')
    assert not codex.detect(str(other), head(other))
    for junk in (
        b"",
        b"\n\n",
        b"[1,2]\n",
        b"not json\n",
        b"\xff\xfe\x00",
        b'{"type":"session"}\n',
        b'{"type":"session_meta","payload":"x"}\n',
    ):
        assert not codex.detect("x.jsonl", junk)


def test_detect_spaced_json(tmp_path):
    spaced = tmp_path / "spaced.jsonl"
    lines = [json.dumps(json.loads(line)) for line in CLI.read_text().splitlines()]  # ", " / ": "
    spaced.write_text("\n".join(lines) + "\n")
    assert codex.detect(str(spaced), head(spaced))
    assert codex.detect(str(spaced), head(spaced, 90))
    assert kinds(codex.parse(str(spaced))) == EXPECTED_KINDS[CLI]


# ---- bad input ----------------------------------------------------------------------------


def cli_lines() -> list[str]:
    return CLI.read_text().splitlines()


def find(lines: list[str], **payload) -> int:
    """Index of the first line whose payload has all these fields."""
    for i, line in enumerate(lines):
        p = json.loads(line).get("payload")
        if isinstance(p, dict) and all(p.get(k) == v for k, v in payload.items()):
            return i
    raise LookupError(payload)


def write(tmp_path: Path, lines: list[str] | bytes, name: str = "broken.jsonl") -> str:
    path = tmp_path / name
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    else:
        path.write_text("\n".join(lines) + "\n")
    return str(path)


def assert_cli_intact(frames, n_calls: int = 6):
    assert session(frames)["session_id"] == EXPECTED_SESSIONS[CLI][0]
    assert frames.calls.height == n_calls
    assert frames.usage.height == 5
    assert token_sums(frames) == EXPECTED_TOKENS[CLI][1]
    assert set(frames.diagnostics["harness"]) <= {"codex"}
    assert set(codes(frames)) <= set(DIAGNOSTIC_CODES)


def test_truncated_last_line(tmp_path):
    path = tmp_path / "t.jsonl"
    shutil.copy(CLI, path)
    with open(path, "ab") as fh:
        fh.write(b'{"timestamp":"2025-12-03T09:15:00.000Z","type":"event_msg","payload":{"type":"tok')
    frames = codex.parse(str(path))
    assert codes(frames) == ["truncated_line"]
    assert frames.diagnostics["line"].to_list() == [36]
    assert_cli_intact(frames)


@pytest.mark.parametrize(
    "junk, code",
    [
        ("this is not json", "invalid_json"),
        ("[1, 2, 3]", "not_object"),
        ('"just a string"', "not_object"),
    ],
)
def test_garbage_lines(tmp_path, junk, code):
    lines = cli_lines()
    lines.insert(10, junk)
    frames = codex.parse(write(tmp_path, lines))
    assert codes(frames) == [code]
    assert frames.diagnostics["line"].to_list() == [11]
    assert_cli_intact(frames)


def test_invalid_utf8_inside_a_string(tmp_path):
    raw = CLI.read_bytes().replace(
        b'"message":"add a CSV export command"', b'"message":"add a CSV \xff\xfe export command"'
    )
    frames = codex.parse(write(tmp_path, raw))
    assert codes(frames) == ["invalid_utf8"]
    assert frames.diagnostics["line"].to_list() == [7]
    assert_cli_intact(frames)


def test_unknown_types(tmp_path):
    lines = cli_lines()
    lines[6:6] = [
        '{"timestamp":"2025-12-03T09:14:19.900Z","type":"inter_agent","payload":{"from":"a"}}',
        '{"timestamp":"2025-12-03T09:14:19.901Z","type":"event_msg","payload":{"type":"turn_diff_v9"}}',
        '{"timestamp":"2025-12-03T09:14:19.902Z","type":"response_item","payload":{"type":"hologram_call"}}',
    ]
    frames = codex.parse(write(tmp_path, lines))
    assert frames.diagnostics.select("line", "code", "detail").rows() == [
        (7, "unknown_record_type", "inter_agent"),
        (8, "unknown_record_type", "event_msg:turn_diff_v9"),
        (9, "unknown_record_type", "response_item:hologram_call"),
    ]
    assert_cli_intact(frames)
    assert session(frames)["n_records"] == 38


def test_missing_and_bad_timestamps(tmp_path):
    lines = cli_lines()
    i = find(lines, type="function_call", call_id="call_E1")
    rec = json.loads(lines[i])
    del rec["timestamp"]
    lines[i] = json.dumps(rec)
    rec = json.loads(lines[i + 1])  # its output
    rec["timestamp"] = "yesterday"
    lines[i + 1] = json.dumps(rec)
    frames = codex.parse(write(tmp_path, lines))
    assert frames.diagnostics.select("line", "code", "detail").rows() == [
        (i + 1, "bad_timestamp", "timestamp missing"),
        (i + 2, "bad_timestamp", "timestamp: unparseable string"),
    ]
    assert_cli_intact(frames)
    e1 = call(frames, "call_E1")
    assert e1["started_at"] is None and e1["exit_code"] == 1  # still used, with null time


def test_bad_arguments_keep_the_call(tmp_path):
    lines = cli_lines()
    f1, a1 = find(lines, call_id="call_F1"), find(lines, call_id="call_A1")
    for i, bad in ((f1, "{not json"), (a1, "[1, 2]")):
        rec = json.loads(lines[i])
        rec["payload"]["arguments"] = bad
        lines[i] = json.dumps(rec)
    frames = codex.parse(write(tmp_path, lines))
    assert frames.diagnostics.select("line", "code", "detail").rows() == [
        (a1 + 1, "bad_arguments", "exec_command: arguments are a JSON array"),
        (f1 + 1, "bad_arguments", "update_plan: arguments are not JSON (9 chars)"),
    ]
    assert_cli_intact(frames)
    assert call(frames, "call_F1")["kind"] == "other"
    a1 = call(frames, "call_A1")
    assert (a1["kind"], a1["command"], a1["exit_code"]) == ("shell", None, 0)
    assert "not json" not in " ".join(frames.diagnostics["detail"])  # no log text in details


def test_wrong_types(tmp_path):
    lines = cli_lines()
    um, f1, pe = (find(lines, type="user_message"), find(lines, call_id="call_F1"), find(lines, type="patch_apply_end"))
    rec = json.loads(lines[um])
    rec["payload"] = "add a CSV export command"
    lines[um] = json.dumps(rec)
    rec = json.loads(lines[f1])  # arguments as an object, not a JSON string
    rec["payload"]["arguments"] = {"plan": []}
    lines[f1] = json.dumps(rec)
    rec = json.loads(lines[pe])
    rec["payload"]["changes"] = ["src/tally/export.py"]
    lines[pe] = json.dumps(rec)
    frames = codex.parse(write(tmp_path, lines))
    assert frames.diagnostics.select("line", "code", "detail").rows() == [
        (um + 1, "wrong_type", "event_msg.payload: string"),
        (f1 + 1, "wrong_type", "function_call.arguments: object"),
        (pe + 1, "wrong_type", "patch_apply_end.changes: array"),
    ]
    assert_cli_intact(frames)
    # Without usable changes the patch text still names the written files.
    assert events(frames)[2:] == EXPECTED_EVENTS[CLI][2:]


def test_failed_patch_writes_nothing(tmp_path):
    raw = CLI.read_text().replace('"success":true', '"success":false')
    frames = codex.parse(write(tmp_path, raw.splitlines()))
    d1 = call(frames, "call_D1")
    assert d1["is_error"] is True
    assert frames.file_events.filter(pl.col("op") == "write").height == 0


def test_unmatched_output(tmp_path):
    lines = cli_lines()
    lines.insert(
        20,
        '{"timestamp":"2025-12-03T09:14:42.000Z","type":"response_item","payload":'
        '{"type":"function_call_output","call_id":"call_gone","output":"ok"}}',
    )
    frames = codex.parse(write(tmp_path, lines))
    assert frames.diagnostics.select("line", "code").rows() == [(21, "unmatched_result")]
    assert_cli_intact(frames)


def test_resumed_file_keeps_identity_and_does_not_double_count(tmp_path):
    lines = cli_lines()
    later_meta = json.loads(lines[0])
    later_meta["payload"]["id"] = "019ae400-0000-7000-8000-000000000000"
    replay = [line for line in lines if '"token_count"' in line]
    frames = codex.parse(write(tmp_path, lines + [json.dumps(later_meta)] + replay))
    # The other thread's header and what follows it are a replay: counted once, kept out.
    assert codes(frames) == ["foreign_record"]
    assert session(frames)["n_copied"] == len(replay) + 1
    assert_cli_intact(frames)


def test_no_session_and_empty_files(tmp_path):
    lines = [line for line in cli_lines() if '"session_meta"' not in line]
    frames = codex.parse(write(tmp_path, lines, "nometa.jsonl"))
    assert codes(frames) == ["no_session"]
    assert all(df.height == 0 for name, df in frames.tables().items() if name != "diagnostics")
    frames = codex.parse(write(tmp_path, b"", "empty.jsonl"))
    assert codes(frames) == ["empty_file"] and frames.sessions.height == 0
    frames = codex.parse(str(tmp_path / "missing.jsonl"))
    assert codes(frames) == ["unreadable_file"]


def test_output_ids_from_polls_are_lowercased_deduped_and_capped(tmp_path):
    ids = [f"{i:08X}-AAAA-4BBB-8CCC-DDDDEEEEFFFF" for i in range(25)]
    meta = {
        "id": "019ae400-1111-7000-8000-000000000001",
        "timestamp": "2025-12-04T10:00:00.000Z",
        "cwd": "/w",
        "originator": "codex-tui",
        "cli_version": "0.125.0",
        "source": "cli",
    }

    def item(second: int, **payload) -> str:
        return json.dumps(
            {"timestamp": f"2025-12-04T10:00:0{second}.000Z", "type": "response_item", "payload": payload}
        )

    first = f"Chunk ID: 1\nProcess running with session ID 42\nOutput:\nsession id: {ids[0]}\n"
    lines = [
        json.dumps({"timestamp": "2025-12-04T10:00:01.000Z", "type": "session_meta", "payload": meta}),
        item(2, type="function_call", name="exec_command", call_id="c1", arguments=json.dumps({"cmd": "./launch.sh"})),
        item(3, type="function_call_output", call_id="c1", output=first),
        item(
            4,
            type="function_call",
            name="write_stdin",
            call_id="c2",
            arguments=json.dumps({"session_id": 42, "chars": ""}),
        ),
        item(
            9, type="function_call_output", call_id="c2", output="Process exited with code 3\nOutput:\n" + " ".join(ids)
        ),
    ]
    frames = codex.parse(write(tmp_path, lines))
    c1, c2 = call(frames, "c1"), call(frames, "c2")
    assert c1["output_ids"] == [i.lower() for i in ids[:20]]
    assert (c1["exit_code"], c1["is_error"], c1["ended_at"]) == (3, True, ts("2025-12-04T10:00:09Z"))
    assert (c2["output_ids"], c2["exit_code"]) == ([], None)
    assert codes(frames) == []


def test_subagent_helper_sources(tmp_path):
    def kind_of(source) -> tuple:
        meta = {"id": "019ae400-2222-7000-8000-000000000002", "timestamp": "2025-12-04T10:00:00Z", "source": source}
        rec = {"timestamp": "2025-12-04T10:00:01Z", "type": "session_meta", "payload": meta}
        s = session(codex.parse(write(tmp_path, [json.dumps(rec)])))
        return s["entrypoint"], s["session_kind"]

    assert kind_of({"subagent": "review"}) == ("subagent", "review")
    assert kind_of({"subagent": "compact"}) == ("subagent", "compaction")
    assert kind_of("mcp") == ("mcp", "main")
    assert kind_of("exec") == ("exec", "main")


def test_never_raises_on_mangled_fields(tmp_path):
    """Every payload field of every CLI line replaced by wrong-typed values: no exception."""
    lines = CLI.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        for key in list(rec["payload"]):
            for bad in (None, 7, [], {}, "x"):
                mangled = json.loads(line)
                mangled["payload"][key] = bad
                frames = codex.parse(write(tmp_path, lines[:i] + [json.dumps(mangled)] + lines[i + 1 :]))
                assert set(codes(frames)) <= set(DIAGNOSTIC_CODES)
                lost_id = i == 0 and key == "id" and not isinstance(bad, str)
                assert frames.sessions.height == (0 if lost_id else 1)


@pytest.mark.parametrize(
    "field, value, detail",
    [
        ("source", 7, "session_meta.source: int"),
        ("source", {"subagent": {"thread_spawn": 7}}, None),
        ("git", "main", None),
        ("parsed_cmd", "cat x", "exec_command_end.parsed_cmd: string"),
        ("parsed_cmd", [7, {"type": "read", "path": 7}, {"type": "read"}], None),
        (
            "changes",
            {"/a": 7, "/b": {"type": ["add"]}},
            ("patch_apply_end.changes[].type: null", "patch_apply_end.changes[].type: array"),
        ),
        ("info", "x", "token_count.info: string"),
        ("total_token_usage", [], "token_count.info.total_token_usage: array"),
        ("cmd", 7, "exec_command.command: int"),
        ("workdir", [], None),
    ],
)
def test_nested_wrong_types_are_reported_or_ignored(tmp_path, field, value, detail):
    lines = cli_lines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        p = rec["payload"]
        if rec["type"] == "session_meta" and field in ("source", "git"):
            p[field] = value
        elif p.get("type") == "exec_command_end" and field == "parsed_cmd":
            p[field] = value
        elif p.get("type") == "patch_apply_end" and field == "changes":
            p[field] = value
        elif p.get("type") == "token_count" and p["info"] and field == "info":
            p[field] = value
        elif p.get("type") == "token_count" and p["info"] and field == "total_token_usage":
            p["info"][field] = value
        elif p.get("name") == "exec_command" and field in ("cmd", "workdir"):
            args = json.loads(p["arguments"])
            args[field] = value
            p["arguments"] = json.dumps(args)
        lines[i] = json.dumps(rec)
    frames = codex.parse(write(tmp_path, lines))
    assert session(frames)["session_id"] == EXPECTED_SESSIONS[CLI][0]
    assert frames.calls.height == 6
    details = set(frames.diagnostics["detail"])
    assert details == (set(detail) if isinstance(detail, tuple) else {detail} if detail else set())
    assert set(codes(frames)) <= {"wrong_type"}


# ---- bounded memory and checkpoint state --------------------------------------------------


def test_large_outputs_are_not_held_until_the_end(tmp_path):
    """Outputs are reduced to the facts pairing needs as they are read, so a long rollout's
    output text (most of its bytes) is never all in memory at once."""
    meta = {
        "id": "019ae400-3333-7000-8000-000000000003",
        "timestamp": "2025-12-04T10:00:00.000Z",
        "cwd": "/w",
        "source": "cli",
    }
    body = ("x" * 99 + "\n") * 2000  # 200 KB of output per call
    lines = [json.dumps({"timestamp": "2025-12-04T10:00:00.000Z", "type": "session_meta", "payload": meta})]
    total = 0
    for i in range(200):
        output = f"Exit code: {i % 2}\nOutput:\nsession id: {i:08x}-aaaa-4bbb-8ccc-dddddddddddd\n{body}"
        total += len(output)
        for payload in (
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": f"c{i}",
                "arguments": json.dumps({"cmd": "cat big.log"}),
            },
            {"type": "function_call_output", "call_id": f"c{i}", "output": output},
        ):
            lines.append(
                json.dumps({"timestamp": "2025-12-04T10:00:01.000Z", "type": "response_item", "payload": payload})
            )
    path = write(tmp_path, lines, "big.jsonl")
    tracemalloc.start()
    try:
        frames = codex.parse(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < total / 4, f"peak {peak} bytes for {total} bytes of outputs"
    assert frames.calls["exit_code"].to_list() == [i % 2 for i in range(200)]
    assert call(frames, "c7")["output_ids"] == ["00000007-aaaa-4bbb-8ccc-dddddddddddd"]
    assert codes(frames) == []


MARKER = "PLANTED-MARKER-7f3a"
# Keys whose string values are prompt, output, instruction or message text in a rollout.
TEXT_KEYS = {
    "message",
    "text",
    "output",
    "aggregated_output",
    "stdout",
    "stderr",
    "formatted_output",
    "instructions",
    "base_instructions",
    "unified_diff",
    "content",
    "last_agent_message",
}


def plant(value: object, key: str | None = None) -> object:
    """``value`` with MARKER appended to every text string under TEXT_KEYS."""
    if isinstance(value, dict):
        return {k: plant(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [plant(v, key) for v in value]
    return value + MARKER if isinstance(value, str) and key in TEXT_KEYS else value


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:30])
def test_checkpoint_state_holds_no_prompt_or_output_text(path, tmp_path, monkeypatch):
    monkeypatch.setattr(resume, "MIN_BYTES", 0)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0].get("payload", lines[0])["instructions"] = "follow the house rules"  # the header
    planted = write(tmp_path, [json.dumps(plant(rec)) for rec in lines], path.name)
    assert Path(planted).read_text().count(MARKER) > 5
    frames, checkpoint = codex.parse_from(planted)
    state = resume.loads(checkpoint.state)
    assert state["calls"] and state["n_records"] == len(lines)
    assert MARKER not in repr(state)
    assert frames.sessions["first_prompt_hash"][0] is not None


def test_token_counts_near_the_bigint_bounds_do_not_overflow(tmp_path):
    """Cumulative counts near the store's BIGINT bounds: their differences count as 0, as an
    out-of-range count does, instead of failing the frame (found by the fast/plain fuzzing)."""
    head = {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "t1", "cwd": "/w"}}
    lines = [head]
    for total, inp in ((1, 2**63 - 1), (2, -(2**63))):
        info = {"total_token_usage": {"total_tokens": total, "input_tokens": inp, "cached_input_tokens": 0}}
        lines.append(
            {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "token_count", "info": info}}
        )
    path = tmp_path / "rollout-2026-01-01T00-00-00-t1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    usage = codex.parse(str(path)).table("usage")
    assert usage["input_tokens"].to_list() == [2**63 - 1, 0]


def test_exit_codes_out_of_range_are_no_exit_codes(tmp_path, monkeypatch):
    """An exit code past the store's INTEGER column (an end event's, or an output's metadata) is
    none, the same on both decoding paths (it failed the calls frame)."""
    head = {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "t1", "cwd": "/w"}}
    item = {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["ls"]})}
    out = {"type": "function_call_output", "output": {"output": "x", "metadata": {"exit_code": 2**40}}}
    end = {"type": "exec_command_end", "exit_code": 2**64}
    lines = [head]
    for i, (kind, payload) in enumerate((("response_item", item), ("response_item", out), ("event_msg", end))):
        lines.append(
            {"timestamp": f"2026-01-01T00:00:0{i + 1}Z", "type": kind, "payload": {**payload, "call_id": "c1"}}
        )
    path = tmp_path / "rollout-2026-01-01T00-00-00-t1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    for mode in ("plain", "fast"):
        monkeypatch.setattr(codex, "DECODE", mode)
        assert codex.parse(str(path)).table("calls")["exit_code"].to_list() == [None]
