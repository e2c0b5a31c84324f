"""oh-my-opencode adapter: ~/.claude/transcripts/ses_<id>.jsonl read as opencode sessions' transcripts
(user / tool_use / tool_result records, no call ids, no tokens), refused by the Claude detector; a
spawn result's child session id is a verified spawn edge, to the child's transcript or to its
opencode session: opencode's task and the plugin's call_omo_agent, delegate_task and the rest, a
background launch through the later background_output of its task id."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.ingest import claude_code, oh_my_opencode
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.test_ocp import validate

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "oh-my-opencode" / "transcripts"
PARENT = "ses_3a7f19c2e0ffeQm4Rk8TzY2bLw"
CHILD_A = "ses_3a7f18d4a1ffeN9sVx2CqH5jPe"  # named by tool_output.sessionId
CHILD_B = "ses_3a7f17b8c3ffeK2dWm6FuJ8rTa"  # named only in the <task_metadata> text
# The plugin's own tools: a parent whose call_omo_agent (sync, then background) and delegate_task
# (sync category, background subagent) calls run children, and a task call continuing one.
AGENTS = ROOT / "sample_logs" / "oh-my-opencode" / "omo-agents"
LEAD = "ses_3b1c40a7e2ffeHd5Lq9WnR3sKx"
EXPLORE = "ses_3b1c3f92b4ffeT7yPm2VcJ6aLd"  # call_omo_agent sync: <task_metadata> in the text only
LIBRARIAN = "ses_3b1c3e85d1ffeZ4kNw8QbF1gHs"  # call_omo_agent background: named by background_output
QUICK = "ses_3b1c3d71a9ffeM6rXt3YhK9pWe"  # delegate_task sync: metadata sessionId, later continued


def at(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-01-05T{hms}+00:00").astimezone(UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_detected_as_oh_my_opencode_and_refused_by_claude(tmp_path):
    for f in [*SAMPLES.glob("*.jsonl"), *AGENTS.glob("*.jsonl")]:
        assert classify(str(f)).harness == "oh-my-opencode", f
        assert not claude_code.detect(str(f), f.read_bytes())
    line = (SAMPLES / f"{PARENT}.jsonl").read_bytes()
    other = tmp_path / "notes.jsonl"  # the records, but not a ses_ file name
    other.write_bytes(line)
    assert not oh_my_opencode.detect(str(other), line)
    claude = tmp_path / "ses_abc.jsonl"  # a Claude envelope under a ses_ name is not ours
    claude.write_bytes(b'{"type":"user","sessionId":"s1","message":{"role":"user","content":"hi"}}\n')
    assert not oh_my_opencode.detect(str(claude), claude.read_bytes())


def test_parent_frames_exactly():
    path = SAMPLES / f"{PARENT}.jsonl"
    f = oh_my_opencode.parse(str(path))
    _schema_ok(f)
    got = {k: v for k, v in f.sessions.to_dicts()[0].items() if v is not None}
    assert got == {
        "session_id": f"oh-my-opencode:{PARENT}",
        "harness": "oh-my-opencode",
        "native_id": PARENT,
        "session_kind": "main",
        "source_path": str(path),
        "source_bytes": path.stat().st_size,
        "started_at": at("17:41:01.935"),
        "ended_at": at("17:42:03.190"),
        "first_prompt_hash": text_hash("Why does the app ignore APP_PORT?"),
        "n_records": 9,
    }
    calls = f.calls.select("call_id", "tool", "kind", "started_at", "ended_at", "paths", "result_agent_id").rows()
    assert calls == [
        ("line2", "read", "read", at("17:41:05.160"), at("17:41:05.162"), ["/srv/app/README.md"], None),
        # results come back out of order; each is paired with the use of the same input
        ("line4", "task", "spawn", at("17:41:09.004"), at("17:41:52.301"), [], CHILD_A),
        ("line5", "task", "spawn", at("17:41:09.010"), at("17:41:40.517"), [], CHILD_B),
        ("line8", "edit", "edit", at("17:42:03.118"), at("17:42:03.190"), ["/srv/app/src/config.ts"], None),
    ]
    task = f.calls.filter(f.calls["call_id"] == "line4").to_dicts()[0]
    assert task["subagent_type"] == "explore" and task["description"] == "Map the config loader"
    assert task["prompt_hash"] == text_hash("Read /srv/app/src/config.ts and list every environment variable it reads.")
    assert f.file_events.select("call_id", "path", "op", "ts").rows() == [
        ("line2", "/srv/app/README.md", "read", at("17:41:05.162")),
        ("line8", "/srv/app/src/config.ts", "write", at("17:42:03.190")),
    ]
    assert f.usage.height == 0
    assert f.diagnostics.select("code", "line").rows() == [("no_token_counts", None)]
    assert f.steps.select("line", "role", "kind", "call_id").rows() == [
        (1, "user", "prompt", None),
        (2, "assistant", "tool_call", "line2"),
        (3, "tool", "tool_result", "line2"),
        (4, "assistant", "tool_call", "line4"),
        (5, "assistant", "tool_call", "line5"),
        (6, "tool", "tool_result", "line5"),
        (7, "tool", "tool_result", "line4"),
        (8, "assistant", "tool_call", "line8"),
        (9, "tool", "tool_result", "line8"),
    ]


def test_child_frames_exactly():
    f = oh_my_opencode.parse(str(SAMPLES / f"{CHILD_B}.jsonl"))
    _schema_ok(f)
    assert f.calls.select("call_id", "tool", "kind", "command", "cwd", "description").rows() == [
        ("line2", "bash", "shell", "npm test -- config", "/srv/app", "Run config tests")
    ]
    assert f.sessions["first_prompt_hash"].to_list() == [
        text_hash("Run the config tests in /srv/app and report failures.")
    ]


def test_task_results_are_verified_spawns(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, src_call_id, dst, tier FROM edges WHERE kind = 'spawn' ORDER BY dst").rows()
    src = f"oh-my-opencode:{PARENT}"
    assert edges == [
        (src, "line5", f"oh-my-opencode:{CHILD_B}", "verified"),
        (src, "line4", f"oh-my-opencode:{CHILD_A}", "verified"),
    ]


def test_a_child_read_from_opencode_storage_joins_across_harnesses(tmp_path):
    """The child's transcript is gone but opencode's own storage holds the session (same ses_ id)."""
    logs = tmp_path / "logs"
    (logs / "transcripts").mkdir(parents=True)
    shutil.copy(SAMPLES / f"{PARENT}.jsonl", logs / "transcripts")
    session = logs / "opencode" / "storage" / "session" / "proj1" / f"{CHILD_A}.json"
    session.parent.mkdir(parents=True)
    session.write_bytes(
        orjson.dumps(
            {
                "id": CHILD_A,
                "projectID": "proj1",
                "directory": "/srv/app",
                "parentID": PARENT,
                "title": "explore",
                "version": "1.0.191",
                "time": {"created": 1767634869420, "updated": 1767634872009},
            }
        )
    )
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, src_call_id, dst, tier FROM edges WHERE kind = 'spawn'").rows()
        dangling = st.query("SELECT call_id FROM inference_diagnostics WHERE code = 'dangling_spawn'").rows()
    assert edges == [(f"oh-my-opencode:{PARENT}", "line4", f"opencode:{CHILD_A}", "verified")]
    assert dangling == [("line5",)]  # CHILD_B is on disk nowhere


def test_bad_records_are_diagnostics(tmp_path):
    path = tmp_path / "ses_bad1.jsonl"
    lines = [
        {"type": "user", "timestamp": "2026-01-05T10:00:00Z", "content": "go"},
        {
            "type": "tool_result",
            "timestamp": "2026-01-05T10:00:01Z",
            "tool_name": "read",
            "tool_input": {},
            "tool_output": {"output": "x"},
        },
        {"type": "tool_use", "timestamp": "nope", "tool_name": "bash", "tool_input": ["ls"]},
        {"type": "assistant", "timestamp": "2026-01-05T10:00:02Z"},
        {"type": "tool_use", "timestamp": "2026-01-05T10:00:03Z", "tool_name": 7, "tool_input": {}},
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines) + b"{not json\n")
    f = oh_my_opencode.parse(str(path))
    _schema_ok(f)
    codes = sorted(f.diagnostics["code"].to_list())
    assert codes == sorted(
        [
            "no_token_counts",
            "unmatched_result",
            "bad_timestamp",
            "bad_arguments",
            "unknown_record_type",
            "wrong_type",
            "invalid_json",
        ]
    )
    assert f.calls.select("call_id", "tool", "ended_at").rows() == [
        ("line2", "read", datetime(2026, 1, 5, 10, 0, 1, tzinfo=UTC)),
        ("line3", "bash", None),
    ]


def at12(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-01-12T{hms}+00:00").astimezone(UTC)


def test_plugin_spawn_tools_frames_exactly():
    f = oh_my_opencode.parse(str(AGENTS / f"{LEAD}.jsonl"))
    _schema_ok(f)
    cols = ("call_id", "tool", "kind", "subagent_type", "run_in_background", "result_agent_id", "progress_agent_id")
    assert f.calls.select(*cols, "started_at", "ended_at").rows() == [
        # sync explore: the child is named only by the <task_metadata> its text ends with
        (
            "line2",
            "call_omo_agent",
            "spawn",
            "explore",
            False,
            EXPLORE,
            None,
            at12("09:14:05.301"),
            at12("09:14:31.870"),
        ),
        # background librarian: the launch says Session ID: pending; background_output names it
        (
            "line3",
            "call_omo_agent",
            "spawn",
            "librarian",
            True,
            None,
            LIBRARIAN,
            at12("09:14:05.309"),
            at12("09:14:05.402"),
        ),
        ("line6", "background_output", "other", None, None, None, None, at12("09:14:33.015"), at12("09:14:58.447")),
        # a category task: the agent it ran comes from the result's metadata
        (
            "line8",
            "delegate_task",
            "spawn",
            "sisyphus-junior",
            False,
            QUICK,
            None,
            at12("09:15:02.220"),
            at12("09:16:10.904"),
        ),
        # a background launch still pending (sessionId "pending", session_id: undefined), never reported on
        ("line9", "delegate_task", "spawn", "oracle", True, None, None, at12("09:15:02.231"), at12("09:15:32.260")),
        # session_id continues QUICK: a follow-up, not a second spawn
        ("line12", "task", "other", None, False, QUICK, None, at12("09:16:20.013"), at12("09:16:49.377")),
    ]
    spawns = f.calls.filter(f.calls["kind"] == "spawn")
    assert spawns.select("description", "prompt_hash").rows() == [
        ("Find upload handlers", text_hash("Find every handler that accepts file uploads under /work/shop/api.")),
        ("Body size docs", text_hash("Look up the default request body limit of the fastify framework.")),
        (
            "Raise the upload limit",
            text_hash("Set bodyLimit to 20 MiB in /work/shop/api/server.ts and run the upload tests."),
        ),
        ("Review the limit change", text_hash("Review whether a 20 MiB body limit is safe for /work/shop/api.")),
    ]
    assert f.diagnostics.select("code", "line", "detail").rows() == [
        ("no_token_counts", None, "the transcript records no token counts or model"),
        ("unnamed_child", 9, "delegate_task: background task bg_9c4e2a71, no later report names its session"),
    ]
    assert f.file_events.height == 0 and f.usage.height == 0
    assert f.steps.height == 13


def test_plugin_spawns_are_verified_edges_through_the_cli(tmp_path):
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(AGENTS), "--db", str(db), "--workers", "1", "--json"])
    assert res.exit_code == 0, res.output
    with Store(db, read_only=True) as st:
        edges = st.query(
            "SELECT src, src_call_id, dst, tier, evidence FROM edges WHERE kind = 'spawn' ORDER BY src_call_id"
        ).rows()
        dangling = st.query(
            "SELECT session_id, call_id, detail FROM inference_diagnostics WHERE code = 'dangling_spawn'"
        ).rows()
        unnamed = st.query("SELECT line FROM diagnostics WHERE code = 'unnamed_child'").rows()
        members = st.query("SELECT count(DISTINCT run_id), count(*) FROM run_sessions").rows()
    src = f"oh-my-opencode:{LEAD}"
    named = "spawn result tool_output.sessionId / task_metadata session_id / Session ID"
    assert edges == [
        (src, "line2", f"oh-my-opencode:{EXPLORE}", "verified", named),
        (src, "line3", f"oh-my-opencode:{LIBRARIAN}", "verified", "background task id -> background_output sessionId"),
        (src, "line8", f"oh-my-opencode:{QUICK}", "verified", named),
    ]
    assert dangling == [(src, "line9", "no child found")]
    assert unnamed == [(9,)]
    assert members == [(1, 4)]  # one run: the lead and its three children


def test_a_child_read_after_its_parent_still_gets_its_edge(tmp_path):
    """The children share no path with the parent: only the ids its calls name join them."""
    logs = tmp_path / "transcripts"
    logs.mkdir()
    shutil.copy(AGENTS / f"{LEAD}.jsonl", logs)
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    for child in (EXPLORE, LIBRARIAN, QUICK):
        shutil.copy(AGENTS / f"{child}.jsonl", logs)
    ingest([str(logs)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src_call_id, dst FROM edges WHERE kind = 'spawn' ORDER BY src_call_id").rows()
    assert edges == [
        ("line2", f"oh-my-opencode:{EXPLORE}"),
        ("line3", f"oh-my-opencode:{LIBRARIAN}"),
        ("line8", f"oh-my-opencode:{QUICK}"),
    ]


def _transcript(path: Path, records: list[dict]) -> str:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return str(path)


def test_a_background_launch_is_tied_only_by_an_exact_report(tmp_path):
    """background_cancel's text (no metadata) ties its task when it gives one Task ID and one
    Session ID; a report naming two sessions, or a task no report names, ties nothing."""
    t = "2026-01-12T10:00:0{}Z".format
    launch = {"description": "d", "prompt": "p", "agent": "explore"}

    def launched(task: str) -> dict:
        out = {"output": f"Background task launched successfully.\n\nTask ID: {task}\nSession ID: pending"}
        return {"tool_output": out, "tool_input": launch}

    records = [
        {"type": "user", "timestamp": t(0), "content": "go"},
        {"type": "tool_use", "timestamp": t(1), "tool_name": "background_task", "tool_input": launch},
        {"type": "tool_result", "timestamp": t(2), "tool_name": "background_task", **launched("bg_aaaa1111")},
        {"type": "tool_use", "timestamp": t(3), "tool_name": "background_task", "tool_input": launch},
        {"type": "tool_result", "timestamp": t(4), "tool_name": "background_task", **launched("bg_bbbb2222")},
        {
            "type": "tool_result",
            "timestamp": t(5),
            "tool_name": "background_cancel",
            "tool_input": {"taskId": "bg_aaaa1111"},
            "tool_output": {"output": "Task cancelled successfully\n\nTask ID: bg_aaaa1111\nSession ID: ses_kid1"},
        },
        {
            "type": "tool_result",
            "timestamp": t(6),
            "tool_name": "background_output",
            "tool_input": {"task_id": "bg_bbbb2222"},
            "tool_output": {
                "output": "Task ID: bg_bbbb2222\nSession ID: ses_kid2\nSession ID: ses_kid3",
                "sessionId": "pending",
            },
        },
    ]
    f = oh_my_opencode.parse(_transcript(tmp_path / "ses_lead.jsonl", records))
    _schema_ok(f)
    assert f.calls.filter(f.calls["kind"] == "spawn").select(
        "call_id", "result_agent_id", "progress_agent_id"
    ).rows() == [
        ("line2", None, "ses_kid1"),
        ("line4", None, None),
    ]
    assert f.diagnostics.filter(f.diagnostics["code"] == "unnamed_child").select("line", "detail").rows() == [
        (4, "background_task: background task bg_bbbb2222, no later report names its session")
    ]


def test_the_omo_agents_run_exports_as_clean_ocp(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(AGENTS)], db=str(db), workers=1)
    summary = export_ocp(tmp_path / "ocp", db=str(db))
    assert summary.documents == 1
    report = validate(summary.files)
    assert [(x["code"], x["message"]) for f in report["files"] for x in f["findings"]] == []
    assert all(f["errors"] == 0 and f["warnings"] == 0 for f in report["files"])
    doc = orjson.loads(Path(summary.files[0]).read_bytes())
    assert sorted((e["kind"], e["tier"]) for e in doc["edges"]) == [("spawn", "verified")] * 3
    assert len(doc["nodes"]) == 4
