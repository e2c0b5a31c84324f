"""OCP 0.3 export: conformance under the reference checker, privacy, prices, file names."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.ocp.files import export_ocp, safe_name
from sessiongraph.pipeline import ingest
from sessiongraph.pricing import Prices
from tests.conftest import CORPUS, MARKER, SAMPLES, plant_logs


def validate(files: list[str]) -> dict:
    """The reference checker (loopmath, from PyPI) as a separate process: our oracle."""
    res = subprocess.run(
        [sys.executable, "-m", "loopmath", "ocp", "validate", "--json", *files],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert res.stdout, res.stderr
    return json.loads(res.stdout)


def _export(tmp_path: Path, logs: Path, **kw):
    """Ingest ``logs`` under the export's privacy profile, then export."""
    db = tmp_path / "s.duckdb"
    prices = kw.pop("prices", None)  # dollars are priced at ingest
    ingest([str(logs)], db=str(db), workers=1, privacy=kw.get("privacy", "metadata_only"), prices=prices)
    return export_ocp(tmp_path / "ocp", db=str(db), **kw)


def _assert_clean(report: dict, n: int):
    assert len(report["files"]) == n
    findings = [(Path(f["path"]).name, x["code"], x["message"]) for f in report["files"] for x in f["findings"]]
    assert findings == []
    assert all(f["errors"] == 0 and f["warnings"] == 0 for f in report["files"])


def test_every_sample_run_conforms(tmp_path):
    summary = _export(tmp_path, SAMPLES)
    assert summary.documents == len(list((tmp_path / "ocp").glob("*.ocp.json"))) > 20
    _assert_clean(validate(summary.files), summary.documents)


def test_every_corpus_run_conforms(tmp_path):
    if not CORPUS.is_dir():
        pytest.skip(f"real-log corpus not found at {CORPUS}")
    summary = _export(tmp_path, CORPUS)
    from sessiongraph.store import Store

    with Store(tmp_path / "s.duckdb", read_only=True) as s:
        assert summary.documents == s.query("SELECT count(*) FROM runs").item() >= 7
    _assert_clean(validate(summary.files), summary.documents)


def test_a_run_document_holds_its_graph(tmp_path):
    summary = _export(tmp_path, SAMPLES / "claude-code", runs=["b720e73d"])
    [path] = summary.files
    doc = json.loads(Path(path).read_text())
    kinds = sorted((e["kind"], e["tier"]) for e in doc["edges"])
    assert kinds == [
        ("artifact", "verified"),
        ("launch", "verified"),
        ("spawn", "verified"),
        ("spawn", "verified"),
        ("spawn", "verified"),
        ("spawn", "verified"),  # the workflow agent: its folder is the Workflow call's runId
    ]
    assert len(doc["nodes"]) == len(doc["attempts"]) == 6
    # A Claude log records no outcome: every node and attempt says only what a bare log can.
    assert {n["state"] for n in doc["nodes"]} == {a["status"] for a in doc["attempts"]} == {"settled_unverified"}
    assert {(a["outcome"]["result"], a["outcome"]["evidence"]) for a in doc["attempts"]} == {
        ("settled_unverified", "heuristic")
    }
    assert "signals" not in doc["run"] and not [e for e in doc["events"] if e["type"] in ("note", "signal_observed")]
    launched = next(a for a in doc["attempts"] if "origin" in a)
    assert launched["origin"]["how"] == "claude -p" and launched["origin"]["tier"] == "verified"
    assert doc["producer"]["capabilities"]["edges_launch"] is True
    cost = next(a["cost"] for a in doc["attempts"] if a["node"] == "claude-code:b720e73d-763d-4c3c-8ff8-264d88d63693")
    assert cost["cache_creation_5m_tokens"] + cost["cache_creation_1h_tokens"] == cost["cache_creation_tokens"]
    assert cost["cache_creation_1h_tokens"] > 0 and cost["usd"] > 0
    artifact = doc["artifacts"][0]
    assert artifact["path"] == "/home/dev/projects/orbit-cli/CHANGELOG.md"


def test_task_repo_and_base_commit(tmp_path):
    # sample_logs/scenarios/commits: the Codex thread's session_meta.git names both; the Claude
    # session names no repository but its pr-link does, and no commit it started from
    summary = _export(tmp_path, SAMPLES / "scenarios" / "commits")
    tasks = {}
    for path in summary.files:
        doc = json.loads(Path(path).read_text())
        tasks[doc["run"]["ext"]["dev.sessiongraph.run"]["root_session_id"].split(":")[0]] = doc["run"]["task"]
    assert tasks["codex"]["repo"] == "https://github.com/example/ferry.git"
    assert tasks["codex"]["base_commit"] == "e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"
    assert tasks["claude-code"]["repo"] == "example/beacon" and "base_commit" not in tasks["claude-code"]
    _assert_clean(validate(summary.files), 2)


def test_unpriced_models_leave_usd_out_and_are_counted(tmp_path):
    summary = _export(tmp_path, SAMPLES / "codex")
    # Attempts per model (sample_logs/codex/README.md): gpt-5.5 (genai-prices knows it) in the cli,
    # desktop and parent rollouts, gpt-5.5-mini (a name no provider sells) in the desktop rollout and
    # the spawned child.
    assert summary.unpriced_models == {"gpt-5.5-mini": 2}
    costs = [a.get("cost", {}) for f in summary.files for a in json.loads(Path(f).read_text())["attempts"]]
    unpriced = [c for c in costs if c and "usd" not in c]
    assert len(unpriced) == 2  # desktop, child
    assert all(c.get("usd", 1) != 0 for c in costs)


def test_prices_file_overrides_the_table(tmp_path):
    table = tmp_path / "prices.csv"
    table.write_text(
        "pattern,provider,input_usd_per_mtok,output_usd_per_mtok,cache_read_usd_per_mtok,"
        "cache_write_5m_usd_per_mtok,cache_write_1h_usd_per_mtok,as_of,source\n"
        "gpt-5.5-mini,openai,1000000,0,0,0,0,2026-01-01,test\n"
    )
    summary = _export(tmp_path, SAMPLES / "codex", prices=str(table))
    assert summary.unpriced_models == {}
    assert set(summary.priced_by) == {"prices.csv", Prices.load().library}


def test_metadata_only_documents_hold_no_log_text(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES, logs, ignore=shutil.ignore_patterns("broken", "*.md", "*.json", "*.py"))
    assert sum(plant_logs(logs).values()) > 500
    summary = _export(tmp_path, logs)
    assert summary.documents > 15
    for path in summary.files:
        assert MARKER not in Path(path).read_text(), path
    _assert_clean(validate(summary.files), summary.documents)


@pytest.mark.parametrize(
    "run_id", ["../../etc/passwd", "/abs/path", "a\x00b", "x" * 500, "..", "", "run:a/b", "ok_run-1.2"]
)
def test_file_names_are_safe(tmp_path, run_id):
    name = safe_name(run_id)
    assert "/" not in name and "\x00" not in name and not name.startswith(".")
    assert name.endswith(".ocp.json") and len(name) <= 130
    (tmp_path / name).write_text("{}")  # writable, inside the folder
    assert (tmp_path / name).resolve().parent == tmp_path.resolve()
    assert safe_name(run_id) == name and (safe_name(run_id + "x") != name)


def test_export_through_the_cli(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES / "claude-code")], db=str(db), workers=1)
    res = CliRunner().invoke(main, ["export", "ocp", "--out", str(tmp_path / "o"), "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["documents"] == len(out["files"]) > 0
    res = CliRunner().invoke(main, ["export", "ocp", "--out", str(tmp_path / "o"), "--db", str(db), "--run", "zzz"])
    assert res.exit_code == 1 and res.output.startswith("Error: no run 'zzz'")


def _text_outside_ext(value, inside=False):
    """Strings holding the marker that are not under an ``ext`` key."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _text_outside_ext(v, inside or k == "ext")]
    if isinstance(value, list):
        return [s for v in value for s in _text_outside_ext(v, inside)]
    return [value] if isinstance(value, str) and MARKER in value and not inside else []


def test_full_profile_carries_text_only_under_ext(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", logs, ignore=shutil.ignore_patterns("*.md", "*.json", "*.py"))
    plant_logs(logs)
    summary = _export(tmp_path, logs, privacy="full")
    docs = [json.loads(Path(p).read_text()) for p in summary.files]
    assert all(d["privacy"]["profile"] == "full" for d in docs)
    assert any(MARKER in json.dumps(d) for d in docs)  # launch commands and Task descriptions
    assert [s for d in docs for s in _text_outside_ext(d)] == []
    _assert_clean(validate(summary.files), summary.documents)


def test_events_ascend_in_time_not_in_text(tmp_path):
    """``03:04:05.250Z`` sorts before ``03:04:05Z`` as text: a task created on the whole second
    and first updated a quarter second later must still start before its first state note."""
    task = json.loads((SAMPLES / "prickle" / "tasks" / "tsk_ship_retry.json").read_text())
    snaps = [
        dict(
            task,
            state="accepted",
            waiting_on=None,
            created_at="2026-01-02T03:04:05Z",
            updated_at=f"2026-01-02T03:04:{at}Z",
        )
        for at in ("05.250", "05.750", "06")
    ]
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "t.jsonl").write_text(
        "".join(
            json.dumps(dict(s, state=st)) + "\n"
            for s, st in zip(snaps, ("accepted", "working", "cancelled"), strict=True)
        )
    )
    summary = _export(tmp_path, logs)
    [doc] = [json.loads(Path(p).read_text()) for p in summary.files]
    assert [(e["at"], e["type"]) for e in doc["events"]] == [
        ("2026-01-02T03:04:05Z", "attempt_started"),
        ("2026-01-02T03:04:05.250000Z", "note"),
        ("2026-01-02T03:04:05.750000Z", "note"),
        ("2026-01-02T03:04:06Z", "note"),
        ("2026-01-02T03:04:06Z", "attempt_settled"),
    ]
    _assert_clean(validate(summary.files), 1)


def test_event_order_is_by_time_then_kind():
    from sessiongraph.ocp.time import event_order

    events = [
        {"at": "2026-01-02T03:04:05.1Z", "type": "attempt_settled", "attempt": "a#1"},
        {"at": "2026-01-02T03:04:05Z", "type": "attempt_settled", "attempt": "a#1"},
        {"at": "2026-01-02T03:04:05+00:00", "type": "attempt_started", "attempt": "a#1"},
        {"at": "2026-01-02T04:04:04+01:00", "type": "note", "node": "a"},
    ]
    assert [(e["at"], e["type"]) for e in sorted(events, key=event_order)] == [
        ("2026-01-02T04:04:04+01:00", "note"),
        ("2026-01-02T03:04:05+00:00", "attempt_started"),
        ("2026-01-02T03:04:05Z", "attempt_settled"),
        ("2026-01-02T03:04:05.1Z", "attempt_settled"),
    ]


def _at(s: int | None) -> datetime | None:
    return None if s is None else datetime(2026, 1, 2, tzinfo=UTC) + timedelta(seconds=s)


def _tries(*spans: tuple[int | None, int | None]) -> list[dict]:
    """One node's attempts as the writer holds them, from (start, end) seconds."""
    return [{"id": f"n#{i}", "_start": _at(a), "_end": _at(b)} for i, (a, b) in enumerate(spans, 1)]


def test_the_attempt_a_time_falls_in():
    from sessiongraph.ocp.time import attempt_from, attempt_until

    back_to_back = _tries((0, 10), (10, 20))  # attempt 2 starts the instant attempt 1 ends
    # What the session did at 10 is attempt 1's work; a spawn or launch at 10 starts attempt 2.
    assert [attempt_until(back_to_back, _at(s)) for s in (0, 5, 10, 15, 20, 25)] == [
        "n#1",
        "n#1",
        "n#1",
        "n#2",
        "n#2",
        "n#2",
    ]
    assert [attempt_from(back_to_back, _at(s)) for s in (-5, 0, 10, 15, 25)] == ["n#1", "n#1", "n#2", "n#2", "n#2"]
    gap = _tries((0, 10), (20, 30))  # a resumed session: the first record of attempt 2 is at 20
    assert [attempt_until(gap, _at(s)) for s in (10, 15, 20, 25)] == ["n#1", "n#1", "n#2", "n#2"]
    assert [attempt_from(gap, _at(s)) for s in (5, 15)] == ["n#1", "n#2"]
    assert attempt_until(gap, None) == attempt_from(gap, None) == "n#1"
    open_ended = _tries((0, None), (10, 20))
    assert [attempt_until(open_ended, _at(s)) for s in (10, 15)] == ["n#1", "n#2"]


def test_ocp_export_reads_the_store_in_groups_of_runs(tmp_path):
    """A group of one session per read gives the same documents as one read of every run."""
    from sessiongraph.ocp import bundle
    from sessiongraph.pipeline import ingest
    from sessiongraph.store import Store
    from tests.conftest import SAMPLES

    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as store:
        chosen = store.chosen_runs()
        whole = list(bundle.bundles(store, chosen))
        queries = 0
        real = store.query

        def counting(*a, **k):
            nonlocal queries
            queries += 1
            return real(*a, **k)

        store.query = counting  # type: ignore[method-assign]
        grouped = list(bundle.bundles(store, chosen, batch_sessions=1))
    assert chosen.height > 5 and queries == 7 * chosen.height  # seven queries per run
    assert [b.run for b in grouped] == [b.run for b in whole]
    for a, b in zip(whole, grouped, strict=True):
        for name in ("members", "attempts", "usage", "edges", "versions", "writes", "outcomes"):
            assert getattr(a, name).equals(getattr(b, name)), name
