"""The oh-my-pi adapter (ingest.omp) on our sample sessions and on crafted and broken input."""

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
BUCKET = ROOT / "sample_logs" / "omp" / "agent" / "sessions" / "-projects-harbor"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

R, L, GONE = "7a3f9c2e51d04b68", "3e8b1f60c2a94d17", "9d0c5b7e3a1f4c28"
R_STEM, L_STEM = f"2026-03-02T09-15-00-000Z_{R}", f"2026-01-20T15-40-00-000Z_{L}"
MAIN = BUCKET / f"{R_STEM}.jsonl"
SCOUT, SCOUT2 = BUCKET / R_STEM / "Scout.jsonl", BUCKET / R_STEM / "Scout-2.jsonl"
DEEP, PATCHER = BUCKET / R_STEM / "Scout.Deep.jsonl", BUCKET / R_STEM / "Patcher.jsonl"
LEGACY, CHECKER = BUCKET / f"{L_STEM}.jsonl", BUCKET / L_STEM / "Checker.jsonl"
DRIFTER = BUCKET / f"2026-02-27T16-40-00-000Z_{GONE}" / "Drifter.jsonl"
SAMPLES = [MAIN, SCOUT, SCOUT2, DEEP, PATCHER, LEGACY, CHECKER, DRIFTER]
CWD = "/home/dev/projects/harbor"
TOKENS = [
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_5m_tokens",
    "cache_creation_1h_tokens",
    "reasoning_tokens",
]


def call(frames, call_id: str) -> dict:
    return frames.calls.filter(pl.col("call_id") == call_id).row(0, named=True)


def events(frames) -> list[tuple]:
    return frames.file_events.sort("ts", "path").select("path", "op", "how", "tier", "ts", "call_id").rows()


# ---- sample sessions ----------------------------------------------------------------------

SCOUT_TASK = "Read local://ctx.md, then map how src/auth issues and refreshes tokens."
RESUME_TASK = "Check whether refreshSession in src/auth/session.ts can race with logout."
PATCH_TASK = "Serialise refreshSession and logout in src/auth/session.ts with a per-session lock."
# file -> rows of (session_id, attempt, native_id, agent_id, kind, parent_native_id, depth, cwd,
#                  started_at, ended_at, model, n_records, first prompt)
EXPECTED_SESSIONS = {
    MAIN: [
        (
            f"omp:{R}",
            None,
            R,
            None,
            "main",
            None,
            None,
            CWD,
            "2026-03-02T09:15:00.000Z",
            "2026-03-02T09:34:13.000Z",
            "claude-sonnet-4-5",
            31,
            "Map the auth module and fix the token refresh race.",
        )
    ],
    SCOUT: [
        # attempt 1 runs to the park (session_exit at 09:23:20); the resumed assignment opens attempt 2
        (
            f"omp:{R}/Scout",
            1,
            "c41d7e0a9b3f2865",
            "Scout",
            "subagent",
            R,
            1,
            CWD,
            "2026-03-02T09:15:08.400Z",
            "2026-03-02T09:23:20.000Z",
            "claude-haiku-4-5",
            14,
            SCOUT_TASK,
        ),
        (
            f"omp:{R}/Scout",
            2,
            "c41d7e0a9b3f2865",
            "Scout",
            "subagent",
            R,
            1,
            CWD,
            "2026-03-02T09:31:01.000Z",
            "2026-03-02T09:32:10.000Z",
            "claude-haiku-4-5",
            5,
            RESUME_TASK,
        ),
    ],
    SCOUT2: [
        (
            f"omp:{R}/Scout-2",
            1,
            "5e92b3d7a0c14f68",
            "Scout-2",
            "subagent",
            R,
            1,
            CWD,
            "2026-03-02T09:15:08.450Z",
            "2026-03-02T09:15:50.000Z",
            "claude-haiku-4-5",
            10,
            "Read local://ctx.md, then list the tests that cover token refresh.",
        )
    ],
    DEEP: [
        (
            f"omp:{R}/Scout.Deep",
            1,
            "a07f4c19e2d86b35",
            "Scout.Deep",
            "subagent",
            f"{R}/Scout",
            2,
            CWD,
            "2026-03-02T09:15:30.300Z",
            "2026-03-02T09:15:55.000Z",
            "claude-haiku-4-5",
            8,
            "Trace where refresh tokens are persisted.",
        )
    ],
    PATCHER: [
        (
            f"omp:{R}/Patcher",
            1,
            "f3b6280d9e1a7c54",
            "Patcher",
            "subagent",
            R,
            1,
            "/tmp/omp-task-Patcher/harbor",
            "2026-03-02T09:32:21.000Z",
            "2026-03-02T09:33:50.000Z",
            "gpt-5.1-codex",
            12,
            PATCH_TASK,
        )
    ],
    LEGACY: [
        (
            f"omp:{L}",
            None,
            L,
            None,
            "main",
            None,
            None,
            CWD,
            "2026-01-20T15:40:00.000Z",
            "2026-01-20T15:41:50.000Z",
            "claude-sonnet-4-5",
            8,
            "Review my auth diff and lint it.",
        )
    ],
    CHECKER: [
        (
            f"omp:{L}/Checker",
            1,
            "6d1e9f04b7a3c825",
            "Checker",
            "subagent",
            L,
            1,
            CWD,
            "2026-01-20T15:40:06.000Z",
            "2026-01-20T15:41:28.000Z",
            "claude-haiku-4-5",
            7,
            "Review the diff in src/auth for token handling bugs.",
        )
    ],
    # its main session file is gone: the root id comes from the folder name
    DRIFTER: [
        (
            f"omp:{GONE}/Drifter",
            1,
            "b85a2e7c0f3d9164",
            "Drifter",
            "subagent",
            GONE,
            1,
            CWD,
            "2026-02-27T16:41:00.000Z",
            "2026-02-27T16:41:10.000Z",
            "claude-haiku-4-5",
            8,
            "Summarise README.md.",
        )
    ],
}
EXPECTED_KINDS = {
    MAIN: {"other": 1, "read": 4, "shell": 1, "spawn": 3, "write": 1},  # other: the resume
    SCOUT: {"other": 3, "read": 3, "spawn": 1},  # other: grep and two yields
    SCOUT2: {"other": 2, "read": 1},
    DEEP: {"other": 1, "shell": 1},
    PATCHER: {"edit": 1, "other": 1, "read": 1, "shell": 1},
    LEGACY: {"read": 1, "spawn": 2},  # one tasks[] call, two spawn rows
    CHECKER: {"read": 1},
    DRIFTER: {"other": 1, "read": 1},
}
AG, LOC = f"agent://{R}", f"local://{R}"
SRC = f"{CWD}/src/auth"
EXPECTED_EVENTS = {
    MAIN: [
        (f"{LOC}/ctx.md", "write", "write", "verified", ts("2026-03-02T09:15:05.200Z"), "call_R1_ctx"),
        (f"{AG}/Scout", "read", "read", "verified", ts("2026-03-02T09:16:25.300Z"), "call_R4_read"),
        (f"{AG}/Scout-2", "read", "read", "verified", ts("2026-03-02T09:16:25.350Z"), "call_R5_read"),
        (f"{AG}/Scout", "read", "read", "verified", ts("2026-03-02T09:32:15.300Z"), "call_R7_read"),
        (f"{AG}/Scout.Deep", "read", "read", "verified", ts("2026-03-02T09:32:15.350Z"), "call_R8_read"),
        (
            f"{AG}/Patcher.patch",
            "read",
            "merge isolated patch",
            "verified",
            ts("2026-03-02T09:34:00.000Z"),
            "call_R9_patch",
        ),
    ],
    SCOUT: [
        (f"{SRC}/session.ts", "read", "read", "verified", ts("2026-03-02T09:15:12.200Z"), "call_S1_read"),
        (SRC, "read", "grep", "verified", ts("2026-03-02T09:15:12.300Z"), "call_S2_grep"),
        (f"{AG}/Scout.Deep", "read", "read", "verified", ts("2026-03-02T09:15:58.200Z"), "call_S4_read"),
        (f"{AG}/Scout", "write", "task output", "verified", ts("2026-03-02T09:16:20.000Z"), "call_S5_yield"),
        (f"{SRC}/session.ts", "read", "read", "verified", ts("2026-03-02T09:31:10.150Z"), "call_S6_read"),
        (f"{AG}/Scout", "write", "task output", "verified", ts("2026-03-02T09:32:10.000Z"), "call_S7_yield"),
    ],
    SCOUT2: [
        (f"{LOC}/ctx.md", "read", "read", "verified", ts("2026-03-02T09:15:09.500Z"), "call_T1_ctx"),
        (f"{CWD}/test", "read", "find", "verified", ts("2026-03-02T09:15:20.300Z"), "call_T2_find"),
        (f"{AG}/Scout-2", "write", "task output", "verified", ts("2026-03-02T09:15:50.000Z"), "call_T3_yield"),
    ],
    DEEP: [(f"{AG}/Scout.Deep", "write", "task output", "verified", ts("2026-03-02T09:15:55.000Z"), "call_D2_yield")],
    PATCHER: [
        (
            "/tmp/omp-task-Patcher/harbor/src/auth/session.ts",
            "read",
            "read",
            "verified",
            ts("2026-03-02T09:32:30.200Z"),
            "call_P1_read",
        ),
        (
            "/tmp/omp-task-Patcher/harbor/src/auth/session.ts",
            "write",
            "edit",
            "verified",
            ts("2026-03-02T09:32:58.300Z"),
            "call_P2_edit",
        ),
        (f"{AG}/Patcher", "write", "task output", "verified", ts("2026-03-02T09:33:50.000Z"), "call_P4_yield"),
        (f"{AG}/Patcher.patch", "write", "isolated patch", "verified", ts("2026-03-02T09:33:50.000Z"), "call_P4_yield"),
    ],
    LEGACY: [(f"agent://{L}/Checker", "read", "read", "verified", ts("2026-01-20T15:41:40.200Z"), "call_L2_read")],
    CHECKER: [
        (f"{SRC}/session.ts", "read", "read", "verified", ts("2026-01-20T15:40:20.200Z"), "call_C1_read"),
        # no yield in this build: the output is written at the last reply (line 7)
        (f"agent://{L}/Checker", "write", "task output", "verified", ts("2026-01-20T15:41:28.000Z"), "line7"),
    ],
    DRIFTER: [
        (f"{CWD}/README.md", "read", "read", "verified", ts("2026-02-27T16:41:05.100Z"), "call_X1_read"),
        (
            f"agent://{GONE}/Drifter",
            "write",
            "task output",
            "verified",
            ts("2026-02-27T16:41:10.000Z"),
            "call_X2_yield",
        ),
    ],
}
# (file, attempt) -> usage rows, sums of TOKENS (cacheWrite in the 5m bucket, reasoningTokens kept)
EXPECTED_TOKENS = {
    (MAIN, None): (10, (4730, 1010, 95600, 8500, 0, 0)),
    (SCOUT, 1): (4, (4720, 690, 26800, 5400, 0, 0)),
    (SCOUT, 2): (2, (1500, 400, 12600, 12600, 0, 0)),
    (SCOUT2, 1): (3, (3550, 280, 16700, 5300, 0, 0)),
    (DEEP, 1): (2, (2980, 210, 7400, 4800, 0, 0)),
    (PATCHER, 1): (4, (5550, 1040, 13500, 0, 0, 576)),
    (LEGACY, None): (3, (2700, 380, 14400, 5000, 0, 0)),
    (CHECKER, 1): (2, (3200, 320, 7800, 5100, 0, 0)),
    (DRIFTER, 1): (2, (2100, 90, 4900, 3000, 0, 0)),
}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_session_rows(path):
    frames = omp.parse(str(path))
    got = (
        frames.sessions.sort("attempt")
        .select(
            "session_id",
            "attempt",
            "native_id",
            "agent_id",
            "session_kind",
            "parent_native_id",
            "spawn_depth",
            "cwd",
            "started_at",
            "ended_at",
            "model",
            "n_records",
            "first_prompt_hash",
        )
        .rows()
    )
    want = [(*row[:8], ts(row[8]), ts(row[9]), row[10], row[11], sha(row[12])) for row in EXPECTED_SESSIONS[path]]
    assert got == want
    for s in frames.sessions.iter_rows(named=True):
        child = s["agent_id"] is not None
        assert (s["harness"], s["layout"], s["forked_from_id"], s["source_path"]) == (
            "omp",
            "nested" if child else "main",
            None,
            str(path),
        )
        assert s["root_native_id"] == (s["session_id"].split(":")[1].split("/")[0] if child else None)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_calls_events_tokens(path):
    frames = omp.parse(str(path))
    assert kinds(frames) == EXPECTED_KINDS[path]
    assert events(frames) == EXPECTED_EVENTS[path]
    for attempt in frames.usage["attempt"].unique().to_list():
        part = frames.usage.filter(pl.col("attempt").eq_missing(attempt))
        assert (part.height, tuple(part.select(TOKENS).sum().row(0))) == EXPECTED_TOKENS[(path, attempt)]
    assert sorted(frames.usage["attempt"].unique().to_list(), key=str) == sorted(
        {a for p, a in EXPECTED_TOKENS if p == path}, key=str
    )
    assert frames.diagnostics.height == 0
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name


def test_task_calls_of_the_main_session():
    frames = omp.parse(str(MAIN))
    spawns = frames.calls.filter(pl.col("tool") == "task").sort("started_at", "call_id")
    assert spawns.select(
        "call_id", "kind", "subagent_type", "description", "result_agent_id", "started_at", "ended_at", "is_error"
    ).rows() == [
        # both asked for id "Scout": the tool allocated Scout and Scout-2; each ends when its async
        # result arrives, not when the call returned (09:15:08.3)
        (
            "call_R2_scout",
            "spawn",
            "scout",
            "map auth",
            "Scout",
            ts("2026-03-02T09:15:08.000Z"),
            ts("2026-03-02T09:16:21.000Z"),
            False,
        ),
        (
            "call_R3_scout",
            "spawn",
            "scout",
            "map auth tests",
            "Scout-2",
            ts("2026-03-02T09:15:08.000Z"),
            ts("2026-03-02T09:15:51.000Z"),
            False,
        ),
        (
            "call_R6_resume",
            "other",
            None,
            "check race",
            "Scout",
            ts("2026-03-02T09:31:00.000Z"),
            ts("2026-03-02T09:32:11.000Z"),
            False,
        ),
        (
            "call_R9_patch",
            "spawn",
            "worker",
            "apply fix",
            "Patcher",
            ts("2026-03-02T09:32:20.000Z"),
            ts("2026-03-02T09:34:00.000Z"),
            False,
        ),
    ]
    # The assignment a call passed is the child's session_init task: same hash, no text.
    children = {
        p: omp.parse(str(p)).sessions.sort("attempt")["first_prompt_hash"].to_list() for p in (SCOUT, SCOUT2, PATCHER)
    }
    hashes = dict(spawns.select("call_id", "prompt_hash").iter_rows())
    assert hashes["call_R2_scout"] == children[SCOUT][0] == sha(SCOUT_TASK)
    assert hashes["call_R6_resume"] == children[SCOUT][1] == sha(RESUME_TASK)
    assert hashes["call_R3_scout"] == children[SCOUT2][0]
    assert hashes["call_R9_patch"] == children[PATCHER][0]
    diff = call(frames, "call_R10_diff")
    assert (diff["kind"], diff["command"], diff["exit_code"]) == ("shell", "git diff --stat", 0)


def test_nested_and_batch_task_calls():
    deep = call(omp.parse(str(SCOUT)), "call_S3_deep")  # settled synchronously inside the subagent
    assert (deep["kind"], deep["result_agent_id"], deep["ended_at"]) == (
        "spawn",
        "Scout.Deep",
        ts("2026-03-02T09:15:56.000Z"),
    )
    legacy = omp.parse(str(LEGACY)).calls.filter(pl.col("tool") == "task")
    cols = ("call_id", "result_agent_id", "subagent_type", "description", "is_error", "ended_at")
    assert legacy.select(cols).rows() == [
        ("call_L1_batch#1", "Checker", "reviewer", "review", False, ts("2026-01-20T15:41:30.000Z")),
        ("call_L1_batch#2", "Linter", "reviewer", "lint", True, ts("2026-01-20T15:41:30.000Z")),  # exitCode 1
    ]
    assert legacy["prompt_hash"].to_list() == [
        sha("Review the diff in src/auth for token handling bugs."),
        sha("Run the linters on src/auth and report."),
    ]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_no_prompt_or_output_text_in_frames(path):
    frames = omp.parse(str(path))
    values = " ".join(str(v) for df in frames.tables().values() for col in df.columns for v in df[col].to_list())
    for secret in (
        "Map the auth",
        "Read local://",
        "Spawned agent",
        "refresh tokens",
        "Result submitted",
        "per-session lock",
        "Refresh tokens",
        "logout can",
        "Fix token refresh",
        "You are a subagent",
        "Repo: harbor",
        "linter crashed",
        "Trace where",
        "session_exit",
    ):
        assert secret not in values


# ---- detect -------------------------------------------------------------------------------


def test_detect_matrix():
    for path in SAMPLES:
        assert omp.detect(str(path), head(path)), path
        assert not pi.detect(str(path), head(path)), path
        assert not claude_code.detect(str(path), head(path)) and not codex.detect(str(path), head(path)), path
    for path in sorted((ROOT / "sample_logs" / "pi").rglob("*.jsonl")):
        assert not omp.detect(str(path), head(path)), path
    for folder in ("claude-code", "codex"):
        for path in sorted((ROOT / "sample_logs" / folder).rglob("*.jsonl")):
            assert not omp.detect(str(path), head(path)), path
    real = CORPUS / "pi" / "large-session.jsonl"
    if real.is_file():
        assert not omp.detect(str(real), head(real))


def _header(sid: str = "0123456789abcdef", **extra) -> str:
    return json.dumps(
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w", **extra}
    )


def test_detect_signals(tmp_path):
    plain = (
        _header()
        + "\n"
        + json.dumps(
            {
                "type": "thinking_level_change",
                "id": "a",
                "parentId": None,
                "timestamp": "2026-03-01T10:00:01.000Z",
                "thinkingLevel": "low",
            }
        )
        + "\n"
    )
    path = tmp_path / "s.jsonl"
    assert not omp.detect(str(path), plain.encode()) and pi.detect(str(path), plain.encode())
    for extra in (
        json.dumps({"type": "session_init", "id": "b", "parentId": "a", "timestamp": "2026-03-01T10:00:02.000Z"}),
        json.dumps(
            {
                "type": "model_change",
                "id": "b",
                "parentId": "a",
                "timestamp": "2026-03-01T10:00:02.000Z",
                "model": "anthropic/claude-sonnet-4-5",
            }
        ),
        json.dumps(
            {
                "type": "message",
                "id": "b",
                "parentId": "a",
                "timestamp": "2026-03-01T10:00:02.000Z",
                "message": {"role": "developer", "content": "x"},
            }
        ),
    ):
        text = (plain + extra + "\n").encode()
        assert omp.detect(str(path), text) and not pi.detect(str(path), text)
    titled = (_header(title="t") + "\n").encode()
    assert omp.detect(str(path), titled)
    under = tmp_path / ".omp" / "agent" / "sessions" / "x" / "s.jsonl"
    assert omp.detect(str(under), plain.encode()) and not pi.detect(str(under), plain.encode())
    assert omp.detect("x.jsonl", head(MAIN, 600))  # the 256-byte slot and the header
    assert omp.detect("x.jsonl", head(MAIN, 300))  # the slot, the header cut: the slot is omp's alone
    assert not omp.detect("x.jsonl", head(MAIN, 100))  # not even the slot
    for junk in (b"", b"{}\n", b'{"type":"title"}\n', b"[]\n", b"\x00\x01", b'{"type":"session","id":"x"}\n'):
        assert not omp.detect("x.jsonl", junk), junk


# ---- crafted transcripts ------------------------------------------------------------------

T0 = "2026-03-01T10:00:00.000Z"


def _entry(kind: str, n: int, **fields) -> dict:
    return {
        "type": kind,
        "id": f"e{n:07d}",
        "parentId": f"e{n - 1:07d}" if n else None,
        "timestamp": f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z",
        **fields,
    }


def _msg(n: int, **message) -> dict:
    return _entry("message", n, message=message)


def _tool_call(n: int, *calls: tuple[str, str, dict]) -> dict:
    return _msg(
        n,
        role="assistant",
        content=[{"type": "toolCall", "id": i, "name": name, "arguments": args} for i, name, args in calls],
        model="m1",
    )


def _result(n: int, call_id: str, name: str, text: str = "ok", error: bool = False, details: dict | None = None):
    return _msg(
        n,
        role="toolResult",
        toolCallId=call_id,
        toolName=name,
        content=[{"type": "text", "text": text}],
        isError=error,
        **({"details": details} if details else {}),
    )


def _write(path: Path, header: str, entries: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(json.dumps(e) + "\n" for e in entries))
    return path


def test_internal_urls_become_canonical_paths(tmp_path):
    main = _write(
        tmp_path / "2026-03-01T10-00-00-000Z_rootid.jsonl",
        _header("rootid", title="t"),
        [
            _tool_call(
                1,
                ("r1", "read", {"path": "agent://Alpha/Beta/items/0"}),  # nested Alpha.Beta, then JSON path
                ("r2", "read", {"path": "agent://Alpha?q=.summary"}),
                ("r3", "fetch", {"url": "agent://Alpha:1-20"}),
                ("r4", "read", {"path": "local://notes/../plan.md:raw"}),
                ("r5", "read", {"path": "local://../../etc/passwd"}),  # the root is a jail
                ("r6", "read", {"path": "history://Alpha"}),
                ("r7", "write", {"path": "agent://Alpha", "content": "hi"}),  # a message, not a file
                ("r8", "edit", {"path": "local://plan.md", "oldText": "a", "newText": "b"}),
                ("r9", "fetch", {"url": "https://example.com"}),
                ("r10", "read", {"path": "agent://"}),
            ),
            *[_result(2, f"r{i}", "read") for i in range(1, 11)],
        ],
    )
    frames = omp.parse(str(main))
    paths = dict(frames.calls.select("call_id", "paths").iter_rows())
    assert paths == {
        "r1": ["agent://rootid/Alpha.Beta"],
        "r2": ["agent://rootid/Alpha"],
        "r3": ["agent://rootid/Alpha"],
        "r4": ["local://rootid/plan.md"],
        "r5": ["local://rootid/etc/passwd"],
        "r6": [],
        "r7": [],
        "r8": ["local://rootid/plan.md"],
        "r9": [],
        "r10": [],
    }
    assert dict(frames.calls.select("call_id", "kind").iter_rows())["r9"] == "other"  # a web fetch
    assert frames.file_events.select("call_id", "op").rows() == [
        ("r1", "read"),
        ("r2", "read"),
        ("r3", "read"),
        ("r4", "read"),
        ("r5", "read"),
        ("r8", "write"),
    ]


def test_async_results_as_custom_messages_and_isolated_merge(tmp_path):
    """The delivery may be a `message` of role custom; an isolated async run's merge is heuristic."""
    spawned = {
        "results": [],
        "progress": [{"index": 0, "id": "Worker", "status": "running"}],
        "async": {"state": "running", "jobId": "Worker", "type": "task"},
    }
    main = _write(
        tmp_path / "2026-03-01T10-00-00-000Z_rootid.jsonl",
        _header("rootid", title="t"),
        [
            _tool_call(1, ("t1", "task", {"agent": "task", "id": "Worker", "isolated": True, "assignment": "do it"})),
            _result(2, "t1", "task", "Spawned agent `Worker` (job `Worker`).", details=spawned),
            _tool_call(3, ("t2", "task", {"agent": "task", "assignment": "other"})),  # no id: text names it
            _result(
                4,
                "t2",
                "task",
                "Spawned agent `SwiftFalcon` (job `SwiftFalcon`).",
                details={"async": {"state": "running", "jobId": "SwiftFalcon", "type": "task"}},
            ),
            _msg(
                5,
                role="custom",
                customType="async-result",
                content="done",
                display=True,
                details={"jobs": [{"jobId": "Worker", "type": "task", "status": "completed", "agentId": "Worker"}]},
            ),
            _entry(
                "custom_message",
                6,
                customType="async-result",
                content="failed",
                details={
                    "jobs": [
                        {"jobId": "SwiftFalcon", "type": "task", "status": "failed", "agentId": "SwiftFalcon"},
                        {"jobId": "bash-1", "type": "bash"},
                    ]
                },
            ),
        ],
    )
    frames = omp.parse(str(main))
    assert frames.calls.select("call_id", "result_agent_id", "ended_at", "is_error").rows() == [
        ("t1", "Worker", ts("2026-03-01T10:00:05.000Z"), False),
        ("t2", "SwiftFalcon", ts("2026-03-01T10:00:06.000Z"), True),
    ]
    assert frames.file_events.select("path", "op", "tier", "call_id").rows() == [
        ("agent://rootid/Worker.patch", "read", "heuristic", "t1")
    ]
    assert frames.diagnostics.height == 0


def test_attempts_split_only_after_the_agent_settled(tmp_path):
    folder = tmp_path / "2026-03-01T10-00-00-000Z_rootid"
    child = _write(
        folder / "Helper.jsonl",
        _header("childid"),
        [
            _entry("session_init", 1, task="first job"),
            _msg(2, role="user", content="first job"),
            _msg(
                3,
                role="assistant",
                content=[{"type": "text", "text": "thinking"}],
                model="m1",
                usage={"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0},
            ),
            _msg(4, role="user", content="Reminder: call yield."),  # not settled yet: same attempt
            _tool_call(5, ("y1", "yield", {"result": 1})),
            _result(6, "y1", "yield", "Result submitted."),
            _msg(7, role="user", content="second job"),  # after a yield: attempt 2 (no park record needed)
            _tool_call(8, ("y2", "yield", {"result": 2})),
            _result(9, "y2", "yield", "boom", error=True),  # a failed yield settles nothing
            _msg(10, role="user", content="still second job"),
            _tool_call(11, ("y3", "yield", {"result": 3})),
            _result(12, "y3", "yield"),
        ],
    )
    frames = omp.parse(str(child))
    assert frames.sessions.select("session_id", "attempt", "n_records", "first_prompt_hash").rows() == [
        ("omp:rootid/Helper", 1, 7, sha("first job")),
        ("omp:rootid/Helper", 2, 6, sha("second job")),
    ]
    assert frames.file_events.select("path", "call_id").rows() == [
        ("agent://rootid/Helper", "y1"),
        ("agent://rootid/Helper", "y3"),
    ]
    assert frames.usage.select("attempt", "message_id").rows() == [(1, "e0000003")]


def test_sibling_header_names_the_root_and_advisors_are_not_spawns(tmp_path):
    main = _write(tmp_path / "renamed-session.jsonl", _header("realroot", title="t"), [])
    advisor = _write(tmp_path / "renamed-session" / "__advisor.jsonl", _header("advid"), [])
    nested = _write(tmp_path / "renamed-session" / "A.B.C.jsonl", _header("nestid"), [])
    assert omp.parse(str(main)).sessions["session_id"].to_list() == ["omp:realroot"]
    s = omp.parse(str(advisor)).sessions.row(0, named=True)
    assert (s["session_id"], s["session_kind"], s["parent_native_id"]) == (
        "omp:realroot/__advisor",
        "review",
        "realroot",
    )
    s = omp.parse(str(nested)).sessions.row(0, named=True)
    assert (s["session_id"], s["agent_id"], s["parent_native_id"], s["spawn_depth"]) == (
        "omp:realroot/A.B.C",
        "A.B.C",
        "realroot/A.B",
        3,
    )


def test_a_forked_main_session(tmp_path):
    by_id = _write(tmp_path / "a.jsonl", _header("forkid", parentSession="opaque-parent-id", title="t"), [])
    by_path = _write(
        tmp_path / "b.jsonl",
        _header(
            "forkid2", title="t", parentSession="/home/u/.omp/agent/sessions/-w/2026-02-01T00-00-00-000Z_abc123.jsonl"
        ),
        [
            _entry("message", 1, message={"role": "user", "content": "copied"}) | {"timestamp": "2026-02-01T00:00:01Z"},
            _msg(2, role="user", content="mine"),
        ],
    )
    assert omp.parse(str(by_id)).sessions["forked_from_id"].to_list() == ["opaque-parent-id"]
    frames = omp.parse(str(by_path))
    s = frames.sessions.row(0, named=True)
    assert (s["forked_from_id"], s["first_prompt_hash"], s["n_records"]) == ("abc123", sha("mine"), 2)
    assert frames.diagnostics.select("line", "code").rows() == [(2, "foreign_record")]


# ---- bad input ----------------------------------------------------------------------------


def test_broken_subagent_transcript(tmp_path):
    folder = tmp_path / R_STEM
    shutil.copytree(BUCKET / R_STEM, folder)
    path = folder / "Scout.jsonl"
    lines = path.read_text().splitlines()
    slot = lines[0]
    lines.insert(4, slot)  # a title slot that is not the first line
    lines.insert(6, "{not json")
    rec = json.loads(lines[9])
    rec["type"] = "vibe_event"
    lines[9] = json.dumps(rec)
    k = next(i for i, line in enumerate(lines) if "call_S5_yield" in line and '"toolResult"' in line)
    rec = json.loads(lines[k])
    rec["timestamp"] = 17
    lines[k] = json.dumps(rec)
    j = next(i for i, line in enumerate(lines) if "call_S3_deep" in line and '"toolResult"' in line)
    rec = json.loads(lines[j])
    rec["message"]["details"] = {"results": "Scout.Deep"}  # wrong type, and the text names no agent
    lines[j] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n" + '{"type":"message","id":"zz","parentId"')
    frames = omp.parse(str(path))
    n = len(lines)
    assert frames.diagnostics.select("line", "code").rows() == [
        (5, "unknown_record_type"),
        (7, "invalid_json"),
        (10, "unknown_record_type"),
        (j + 1, "wrong_type"),
        (k + 1, "bad_timestamp"),
        (n + 1, "truncated_line"),
    ]
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)
    # the yield result is still placed (by its epoch-ms message stamp) and still ends attempt 1
    assert frames.sessions.select("attempt", "n_records").rows() == [(1, 13), (2, 5)]
    deep = call(frames, "call_S3_deep")
    assert (deep["result_agent_id"], deep["ended_at"]) == (None, ts("2026-03-02T09:15:56.000Z"))
    assert frames.file_events.filter(pl.col("op") == "write")["ts"].to_list() == [
        ts("2026-03-02T09:16:20.000Z"),
        ts("2026-03-02T09:32:10.000Z"),
    ]
