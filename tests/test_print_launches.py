"""Real print-mode launches (issue 26 item 4): `claude -p` runs a Claude Code session on Windows made
from its Bash tool, tied to the sessions they wrote by the hash of the call's output and the
session's final answer, checked against the claude-print-windows scenario's expected.json, under
every spelling of its Windows folder; and the real `claude --print` session whose launched sessions
were never published (every launch unmatched, none invented).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES
from tests.test_ocp import _assert_clean, validate

SCENARIO = SAMPLES / "scenarios/claude-print-windows"
EXP = json.loads((SCENARIO / "expected.json").read_text())
N = EXP["sessions"]
WRITTEN = "C:\\Users\\me\\proj"
REAL = ROOT.parent / "shared" / "real-families" / "claude-print-launches-2.1.20"
LAUNCHER = dict([EXP["launcher"].split("=")])


def _ingest(root: Path, db: Path, launchers: dict | None = None) -> tuple[Store, object]:
    summary = ingest([str(root)], db=str(db), workers=1, launchers=launchers)
    return Store(db, read_only=True), summary


def _launches(store: Store) -> set[tuple]:
    rows = store.query("SELECT src, dst, tier, src_call_id FROM all_edges WHERE kind = 'launch'").rows()
    return set(rows)


def _want(tier: str | None = None, wrapper: bool = True) -> set[tuple]:
    return {
        (N[e["src"]], N[e["dst"]], tier or e["tier"], e["src_call_id"])
        for e in EXP["edges"]
        if wrapper or not e.get("wrapper")
    }


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("print-windows")
    store, summary = _ingest(SCENARIO, root / "s.duckdb")
    with store:
        yield store, summary, root


def test_every_launch_is_verified_by_the_output_hash(stored):
    store, _summary, _root = stored
    assert _launches(store) == _want()
    evidence = dict(store.query("SELECT dst, evidence FROM edges WHERE kind = 'launch'").rows())
    for e in EXP["edges"]:
        assert "final answer = the call's output (sha256)" in evidence[N[e["dst"]]]
        assert ("read as no agent CLI (a wrapper)" in evidence[N[e["dst"]]]) == bool(e.get("wrapper"))
    for bad in EXP["not_edges"]:
        assert not [r for r in _launches(store) if r[1] == N[bad["dst"]]], bad["why"]
    assert store.query("SELECT count(*) FROM launches").item() == EXP["launches"]


def test_counters_and_the_cwd_as_written(stored):
    store, _summary, _root = stored
    rows = store.query("SELECT pass, code, session_id, call_id, count FROM inference_diagnostics ORDER BY ALL").rows()
    want = sorted((c["pass"], c["code"], N[c["session"]], c["call_id"], c["count"]) for c in EXP["counters"])
    assert sorted(rows) == want
    cwds = store.query("SELECT DISTINCT cwd, cwd_as_written FROM sessions").rows()
    assert cwds == [("C:/Users/me/proj", WRITTEN)]


def test_no_text_only_hashes(stored):
    store, _summary, _root = stored
    for table, col in (("calls", "output_hash"), ("sessions", "final_answer_hash")):
        values = store.query(f"SELECT {col} FROM {table} WHERE {col} IS NOT NULL")[col].to_list()
        assert values and all(len(v) == 64 and int(v, 16) >= 0 for v in values)
    assert store.query("SELECT count(*) FROM calls WHERE command IS NOT NULL").item() == 0


def test_a_named_wrapper_is_a_launch_and_still_verified(tmp_path):
    store, _summary = _ingest(SCENARIO, tmp_path / "s.duckdb", LAUNCHER)
    with store:
        assert _launches(store) == _want()
        assert store.query("SELECT count(*) FROM launches").item() == EXP["launches"] + 1
        evidence = store.query("SELECT evidence FROM edges WHERE src_call_id = $1", [EXP["edges"][2]["src_call_id"]])
        assert "wrapper" not in evidence.item()


def test_ocp_export_is_clean(stored, tmp_path):
    _store, _summary, root = stored
    files = export_ocp(tmp_path / "ocp", db=str(root / "s.duckdb")).files
    _assert_clean(validate(files), len(files))
    docs = [json.loads(Path(f).read_text()) for f in files]
    lead = [d for d in docs if len(d["nodes"]) == 4]
    origins = [a.get("origin") for a in lead[0]["attempts"] if a.get("origin")]
    assert sorted(o["tier"] for o in origins) == ["verified"] * 3


# -- every spelling of the folder ----------------------------------------------------------------

SPELLINGS = [
    "C:\\Users\\me\\proj",
    "C:/Users/me/proj",
    "c:\\Users\\me\\proj",
    "/c/Users/me/proj",  # Git Bash / MSYS: a Windows drive only because the file is from Windows
    "/mnt/c/Users/me/proj",  # WSL
    "\\\\?\\C:\\Users\\me\\proj",  # long-path prefix
    "C:\\Users\\me\\proj\\",
    "C:/Users/me/proj/",
]
CD = "cd C:/Users/me/proj && "


def _respelled(dst: Path, spelling: str, *, cd: bool = True, answers: bool = True) -> Path:
    """The scenario with every record's cwd written ``spelling``, the `cd` dropped from the
    commands unless ``cd``, and the launched sessions' answers changed unless ``answers`` (then
    only the cwd and the time can tie them). Git Bash's ``/c/x`` is a drive only in a file from
    Windows (``ingest.paths``: it is also a plain POSIX path), so with it each file's first record
    keeps the backslash form: the session's cwd, and the calls' are ``/c/x``."""
    msys = spelling.startswith("/c/")
    for src in SCENARIO.rglob("*.jsonl"):
        out = dst / src.relative_to(SCENARIO)
        out.parent.mkdir(parents=True, exist_ok=True)
        recs = [json.loads(line) for line in src.read_text().splitlines()]
        for rec in [r for r in recs if "cwd" in r][1 if msys else 0 :]:
            rec["cwd"] = spelling
        for rec in recs:
            for block in (rec.get("message") or {}).get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and not cd:
                    block["input"]["command"] = block["input"]["command"].replace(CD, "")
                if block.get("type") == "text" and not answers and rec.get("entrypoint") == "sdk-cli":
                    block["text"] += " (changed)"
        out.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return dst


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_the_folder_gives_the_same_verified_launches(tmp_path, spelling):
    store, _summary = _ingest(_respelled(tmp_path / "logs", spelling), tmp_path / "s.duckdb")
    with store:
        assert _launches(store) == _want()
        assert store.query("SELECT DISTINCT cwd FROM sessions").item() == "C:/Users/me/proj"


@pytest.mark.parametrize("cd", [True, False], ids=["cd", "no-cd"])
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_without_the_hash_every_spelling_still_pairs_by_folder_and_time(tmp_path, spelling, cd):
    logs = _respelled(tmp_path / "logs", spelling, cd=cd, answers=False)
    store, _summary = _ingest(logs, tmp_path / "s.duckdb", LAUNCHER)
    with store:
        assert _launches(store) == _want("heuristic")
        cwds = store.query("SELECT DISTINCT cwd FROM launches").rows()
        assert cwds == [("C:/Users/me/proj",)]


# -- the real session whose launched sessions were never published --------------------------------


def test_real_claude_print_calls_are_all_unmatched(tmp_path):
    if not REAL.is_dir():
        pytest.skip("../shared/real-families is absent")
    store, _summary = _ingest(REAL, tmp_path / "s.duckdb")
    with store:
        launches = store.query("SELECT call_id, print_mode, cwd FROM launches")
        assert launches.height == 9 and launches["print_mode"].all()
        assert launches.filter(pl.col("cwd") == "/tmp").height == 1  # `(cd /tmp && ... claude --print)`
        got = store.query(
            "SELECT code, sum(count)::BIGINT FROM inference_diagnostics WHERE pass = 'launch' GROUP BY code"
        ).rows()
        assert got == [("unmatched_launch", 9)]
        assert store.query("SELECT count(*) FROM edges WHERE kind = 'launch'").item() == 0
        hashed = store.query("SELECT count(*) FROM calls WHERE output_hash IS NOT NULL AND kind = 'shell'").item()
        assert hashed > 0


def test_the_sample_files_are_what_the_generator_writes(tmp_path):
    copy = tmp_path / "gen"
    shutil.copytree(SCENARIO, copy)
    shutil.rmtree(copy / "claude-code")
    import runpy

    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for src in SCENARIO.rglob("*"):
        if src.is_file() and src.suffix in (".jsonl", ".json"):
            assert (copy / src.relative_to(SCENARIO)).read_bytes() == src.read_bytes(), src.name
