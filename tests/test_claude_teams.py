"""Claude Code agent teams and workflow runs, end to end on their samples.

The team sample (``-home-dev-projects-harbor``, 2.1.88): a lead that spawns an Explore subagent
with a plain Agent call, creates a team, spawns four teammates with Agent calls that name them
(``tester`` written in two files that start together), trades SendMessage calls with them, deletes
the team and is auto-compacted. The workflow sample (``-home-dev-projects-quill``, 2.1.240): a
Workflow call whose run folder holds its journal and three agents, one a restart of another.

Expected edges are written here from the generator's ids (``_scripts/ids.json``) and the call ids
of ``expected.json`` (computed from the raw files, not through the adapter).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from sessiongraph.ingest import claude_code
from sessiongraph.ingest.discover import classify
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES
from tests.test_ocp import _assert_clean, validate

CC = SAMPLES / "claude-code"
IDS = json.loads((CC / "_scripts/ids.json").read_text())
EXPECTED = json.loads((CC / "expected.json").read_text())
HARBOR = CC / "projects/-home-dev-projects-harbor"
QUILL = CC / "projects/-home-dev-projects-quill"
LEAD = f"claude-code:{IDS['T']}"
WLEAD = f"claude-code:{IDS['W']}"
RUN = f"{WLEAD}/{IDS['W_RUN']}"
JOURNAL = QUILL / IDS["W"] / "subagents/workflows" / IDS["W_RUN"] / "journal.jsonl"
TEAMMATES = ("lexer", "grammar", "tester", "scribe")


def _calls(sid: str) -> dict[str, str]:
    """spawn call ids of a main file by teammate name (or subagent type / tool)."""
    calls = EXPECTED["files"][f"projects/{HARBOR.name if sid == IDS['T'] else QUILL.name}/{sid}.jsonl"]["spawn_calls"]
    return {c["name"] or c["subagent_type"] or c["tool"]: c["tool_use_id"] for c in calls}


def _store(tmp_path: Path, *paths: Path) -> Store:
    db = tmp_path / "s.duckdb"
    ingest([str(p) for p in paths], db=str(db), workers=1)
    return Store(db, read_only=True)


def _spawns(store: Store) -> set[tuple]:
    rows = store.query("SELECT src, dst, tier, src_call_id FROM edges WHERE kind = 'spawn'").rows()
    return set(rows)


def _diags(store: Store) -> list[tuple]:
    return store.query(
        "SELECT code, session_id FROM inference_diagnostics WHERE pass = 'spawn' ORDER BY code, session_id"
    ).rows()


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    with _store(tmp_path_factory.mktemp("team"), HARBOR) as s:
        yield s


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    with _store(tmp_path_factory.mktemp("wf"), QUILL) as s:
        yield s


def test_team_edges_exactly(team):
    calls = _calls(IDS["T"])
    want = {(LEAD, f"{LEAD}/{IDS['T_EXPLORE']}", "verified", calls["Explore"])}
    for name in TEAMMATES:
        want.add((LEAD, f"{LEAD}/{IDS['T_' + name.upper()]}", "verified", calls[name]))
    # the second file of the same teammate is a child of the same call, not of another
    want.add((LEAD, f"{LEAD}/{IDS['T_TESTER2']}", "verified", calls["tester"]))
    assert _spawns(team) == want
    # the compaction run is no spawn; no call dangles, no child is an orphan
    assert _diags(team) == [("not_a_spawn", f"{LEAD}/{IDS['T_COMPACT']}")]


def test_teammates_are_verified_by_name_team_and_agent_id(team):
    evidence = dict(
        team.query(
            "SELECT dst, evidence FROM edges WHERE kind = 'spawn' AND src_call_id IN $1",
            [list(_calls(IDS["T"]).values())],
        ).rows()
    )
    for name in TEAMMATES:
        assert evidence[f"{LEAD}/{IDS['T_' + name.upper()]}"].startswith(
            "Agent name/team_name = teammate_spawned agent_id = meta.json agentType"
        )
    assert evidence[f"{LEAD}/{IDS['T_EXPLORE']}"].startswith("toolUseResult.agentId")


def test_the_team_name_is_on_the_teammates(team):
    rows = team.query("SELECT session_id, agent_name, team_name FROM sessions WHERE session_id LIKE $1", [f"{LEAD}/%"])
    got = {sid.rsplit("/", 1)[1]: (n, t) for sid, n, t in rows.rows()}
    want = {IDS["T_" + n.upper()]: (n, IDS["TEAM"]) for n in TEAMMATES}
    want[IDS["T_TESTER2"]] = ("tester", IDS["TEAM"])
    want[IDS["T_EXPLORE"]] = (None, None)  # spawned before the team, by a plain call
    want[IDS["T_COMPACT"]] = (None, None)  # after TeamDelete
    assert got == want
    spawn_calls = team.query(
        "SELECT agent_name, team_name, result_agent_id FROM calls WHERE session_id = $1 AND kind = 'spawn'", [LEAD]
    )
    assert sorted(spawn_calls.rows(), key=str) == sorted(
        [(None, None, IDS["T_EXPLORE"])] + [(n, IDS["TEAM"], f"{n}@{IDS['TEAM']}") for n in TEAMMATES], key=str
    )


def _edit(path: Path, change) -> None:
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in change(lines)))


def test_a_teammate_without_its_spawn_result_is_heuristic(tmp_path):
    """The call's name and the meta agentType agree but no teammate_spawned result says so."""
    root = tmp_path / HARBOR.name
    shutil.copytree(HARBOR, root)
    call = _calls(IDS["T"])["lexer"]

    def drop_result(recs):
        return [r for r in recs if not (r.get("toolUseResult") or {}).get("agent_id") == f"lexer@{IDS['TEAM']}"]

    _edit(root / f"{IDS['T']}.jsonl", drop_result)
    with _store(tmp_path, root) as s:
        row = s.query("SELECT src, tier, src_call_id, evidence FROM edges WHERE dst = $1", [f"{LEAD}/{IDS['T_LEXER']}"])
        assert row.rows() == [(LEAD, "heuristic", call, "Agent name = meta.json agentType + directory layout (nested)")]


def test_a_teammate_of_another_team_is_not_that_calls(tmp_path):
    root = tmp_path / HARBOR.name
    shutil.copytree(HARBOR, root)
    scribe = root / IDS["T"] / "subagents" / f"agent-{IDS['T_SCRIBE']}.jsonl"
    _edit(scribe, lambda recs: [{**r, "teamName": "other-team"} for r in recs])
    with _store(tmp_path, root) as s:
        row = s.query("SELECT src, tier, src_call_id FROM edges WHERE dst = $1", [f"{LEAD}/{IDS['T_SCRIBE']}"])
        assert row.rows() == [(LEAD, "heuristic", None)]  # its folder only
        dangling = s.query("SELECT call_id FROM inference_diagnostics WHERE code = 'dangling_spawn'")
        assert dangling.rows() == [(_calls(IDS["T"])["scribe"],)]


def test_workflow_edges_exactly(workflow):
    wcall = _calls(IDS["W"])["Workflow"]
    started = {s["agentId"]: f"line{s['line']}" for s in EXPECTED["workflow_journals"][_rel(JOURNAL)]["started"]}
    want = {(WLEAD, RUN, "verified", wcall)}
    for agent in ("W_A", "W_B", "W_B2"):
        want.add((RUN, f"{WLEAD}/{IDS[agent]}", "verified", started[IDS[agent]]))
    assert _spawns(workflow) == want
    assert _diags(workflow) == []
    evidence = dict(workflow.query("SELECT dst, evidence FROM edges WHERE kind = 'spawn'").rows())
    assert evidence[RUN].startswith("Workflow toolUseResult.runId")
    assert evidence[f"{WLEAD}/{IDS['W_A']}"].startswith("journal started agentId")
    # one run: the lead, its workflow run, the run's three agents under it
    tree = workflow.query("SELECT session_id, parent_session_id, depth FROM run_sessions ORDER BY depth, session_id")
    assert tree.rows() == [
        (WLEAD, None, 0),
        (RUN, WLEAD, 1),
        *sorted((f"{WLEAD}/{IDS[a]}", RUN, 2) for a in ("W_A", "W_B", "W_B2")),
    ]


def _rel(p: Path) -> str:
    return p.relative_to(CC).as_posix()


def test_the_journal_is_the_runs_session():
    assert classify(str(JOURNAL)).harness == "claude-code"
    frames = claude_code.parse(str(JOURNAL))
    assert frames.sessions.select("session_id", "session_kind", "layout", "agent_id", "native_id").rows() == [
        (RUN, "workflow", "journal", IDS["W_RUN"], IDS["W"])
    ]
    calls = frames.calls.select("call_id", "tool", "kind", "result_agent_id").rows()
    assert calls == [
        ("line2", "journal:started", "spawn", IDS["W_A"]),
        ("line3", "journal:started", "spawn", IDS["W_B"]),
        ("line5", "journal:started", "spawn", IDS["W_B2"]),
    ]
    assert frames.diagnostics.height == 0
    assert claude_code.is_workflow_journal(str(JOURNAL))
    assert not claude_code.is_workflow_journal(str(QUILL / "journal.jsonl"))


def test_a_journal_elsewhere_and_the_run_state_file_are_no_sessions(tmp_path):
    other = tmp_path / "journal.jsonl"
    other.write_text('{"type":"started","agentId":"a1"}\n')
    assert classify(str(other)).skip_reason == "not_transcript"
    state = QUILL / IDS["W"] / "workflows" / f"{IDS['W_RUN']}.json"
    assert classify(str(state)).skip_reason == "not_a_log"


def test_without_a_journal_the_agents_are_the_workflow_calls(tmp_path):
    root = tmp_path / QUILL.name
    shutil.copytree(QUILL, root)
    (root / JOURNAL.relative_to(QUILL)).unlink()
    wcall = _calls(IDS["W"])["Workflow"]
    with _store(tmp_path, root) as s:
        assert _spawns(s) == {(WLEAD, f"{WLEAD}/{IDS[a]}", "verified", wcall) for a in ("W_A", "W_B", "W_B2")}
        evidence = s.query("SELECT DISTINCT evidence FROM edges WHERE kind = 'spawn'").rows()
        assert evidence == [
            ("workflows/wf_<runId> folder = Workflow toolUseResult.runId + directory layout (workflow)",)
        ]
        assert _diags(s) == []


def test_an_agent_the_journal_does_not_name_is_the_runs_by_its_folder(tmp_path):
    root = tmp_path / QUILL.name
    shutil.copytree(QUILL, root)
    _edit(root / JOURNAL.relative_to(QUILL), lambda recs: [r for r in recs if r.get("agentId") != IDS["W_B2"]])
    with _store(tmp_path, root) as s:
        row = s.query("SELECT src, tier, src_call_id, evidence FROM edges WHERE dst = $1", [f"{WLEAD}/{IDS['W_B2']}"])
        assert row.rows() == [(RUN, "heuristic", None, f"directory layout (workflows/{IDS['W_RUN']})")]


def test_the_new_samples_export_clean_ocp(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(HARBOR), str(QUILL)], db=str(db), workers=1)
    summary = export_ocp(tmp_path / "ocp", db=str(db))
    assert summary.documents == 2
    _assert_clean(validate(summary.files), 2)
    docs = [json.loads(Path(f).read_text()) for f in summary.files]
    nodes = {n["id"] for d in docs for n in d["nodes"]}
    assert {LEAD, f"{LEAD}/{IDS['T_TESTER2']}", WLEAD, RUN, f"{WLEAD}/{IDS['W_B2']}"} <= nodes


def test_incremental_ingest_keeps_the_pairs(tmp_path):
    """The teammates and the workflow's sessions share their lead's session id (s: keys): a
    teammate file or a journal ingested alone after the rest still finds its call."""
    root = tmp_path / "logs"
    shutil.copytree(HARBOR, root / HARBOR.name)
    shutil.copytree(QUILL, root / QUILL.name)
    held = [
        root / HARBOR.name / IDS["T"] / "subagents" / f"agent-{IDS['T_TESTER2']}.jsonl",
        root / JOURNAL.relative_to(CC / "projects"),
    ]
    aside = tmp_path / "aside"
    aside.mkdir()
    for i, f in enumerate(held):
        shutil.move(f, aside / f"{i}.jsonl")
    db = tmp_path / "s.duckdb"
    ingest([str(root)], db=str(db), workers=1)
    for i, f in enumerate(held):
        shutil.move(aside / f"{i}.jsonl", f)
    ingest([str(root)], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        got = _spawns(s)
    cold_dir = tmp_path / "cold"
    cold_dir.mkdir()
    with _store(cold_dir, HARBOR, QUILL) as cold:
        assert got == _spawns(cold)
    assert (LEAD, f"{LEAD}/{IDS['T_TESTER2']}", "verified", _calls(IDS["T"])["tester"]) in got
    assert (WLEAD, RUN, "verified", _calls(IDS["W"])["Workflow"]) in got


def test_a_teammate_is_known_by_its_first_prompt_not_its_type():
    """Only a teammate gets a name: the Explore subagent's meta agentType is no teammate name."""
    sub = HARBOR / IDS["T"] / "subagents"
    lexer = claude_code.parse(str(sub / f"agent-{IDS['T_LEXER']}.jsonl")).sessions.row(0, named=True)
    explore = claude_code.parse(str(sub / f"agent-{IDS['T_EXPLORE']}.jsonl")).sessions.row(0, named=True)
    assert (lexer["agent_name"], lexer["agent_type"], lexer["session_kind"]) == ("lexer", "lexer", "subagent")
    assert (explore["agent_name"], explore["agent_type"]) == (None, "Explore")


def test_a_broken_journal_is_counted_not_raised(tmp_path):
    run_dir = tmp_path / "sid-1" / "subagents" / "workflows" / "wf_x"
    run_dir.mkdir(parents=True)
    journal = run_dir / "journal.jsonl"
    journal.write_bytes(
        b'{"type":"launched"}\n'
        b"not json\n"
        b'{"type":"started"}\n'  # no agentId
        b'{"type":"result","agentId":"a9"}\n'  # no started line names it
        b'{"type":"phase_started","index":1}\n'
        b'{"type":"started","agentId":"a1","label":"x"}\n'
    )
    assert classify(str(journal)).harness == "claude-code"
    frames = claude_code.parse(str(journal))
    assert frames.diagnostics.select("line", "code").rows() == [
        (2, "invalid_json"),
        (3, "wrong_type"),
        (4, "unmatched_result"),
        (5, "unknown_record_type"),
    ]
    assert frames.sessions["session_id"].to_list() == ["claude-code:sid-1/wf_x"]
    assert frames.calls.select("call_id", "result_agent_id").rows() == [("line6", "a1")]
