"""An ingest re-infers only the partitions its changed files reach, and the store it leaves is the
store a cold ingest of the same files makes, table by table, ids included: random new files,
appends (whole lines, and cut mid-line), rewrites and deletions applied to a copy of
sample_logs/, with an ingest after each step. ``SESSIONGRAPH_INCREMENTAL_EXAMPLES`` runs more."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessiongraph.ingest.discover import classify
from sessiongraph.pipeline import ingest
from sessiongraph.store import FILE_TABLES, INFERENCE_TABLES, Store
from tests.conftest import SAMPLES

EXAMPLES = int(os.environ.get("SESSIONGRAPH_INCREMENTAL_EXAMPLES", "8"))
# Columns that say when or by which ingest a row was written: everything else must match.
VOLATILE = {"ingest_id", "ingested_at"}
TABLES = (*FILE_TABLES, *INFERENCE_TABLES, "file_partitions", "session_partitions", "dirty_files")
# Logs and Claude sidecars. Not opencode's message and part files: a change to one of them alone
# is not seen (its session file is what the store fingerprints).
LOGS = sorted(
    p.relative_to(SAMPLES).as_posix()
    for p in SAMPLES.rglob("*")
    if p.suffix in (".jsonl", ".json") and (classify(str(p)).harness or p.name.endswith(".meta.json"))
)


def dump(db: Path) -> dict[str, list]:
    with Store(db, read_only=True) as s:
        out = {}
        for t in TABLES:
            cols = [c for c in s.query(f"SELECT * FROM {t} LIMIT 0").columns if c not in VOLATILE]
            out[t] = s.query(f"SELECT {', '.join(cols)} FROM {t} ORDER BY ALL").rows()
        return out


@pytest.fixture(scope="module")
def workdir():
    # One fixed folder, so that the stored paths of the template store stay valid in every example.
    root = Path(tempfile.mkdtemp(prefix="sg-incr-"))
    logs, template = root / "logs", root / "template.duckdb"
    shutil.copytree(SAMPLES, logs)  # copy2: sizes and mtimes kept
    ingest([str(logs)], db=str(template), workers=1)
    shutil.rmtree(logs)
    yield root
    shutil.rmtree(root, ignore_errors=True)


step = st.one_of(
    st.tuples(st.just("new"), st.sampled_from(LOGS), st.integers(0, 10**6)),
    st.tuples(st.just("append"), st.sampled_from(LOGS), st.integers(1, 3)),
    st.tuples(st.just("cut"), st.sampled_from(LOGS), st.integers(1, 200)),
    st.tuples(st.just("rewrite"), st.sampled_from(LOGS), st.integers(0, 10**6)),
    st.tuples(st.just("delete"), st.sampled_from(LOGS), st.just(0)),
)


def apply(logs: Path, action: str, rel: str, n: int, tick: int) -> None:
    path = logs / rel
    if not path.exists():
        return
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    if action == "new":  # a copy of a log in another folder (the same sessions logged twice)
        target = logs / f"new-{n % 3}" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data[: max(1, len(data) * (n % 4 + 1) // 4)])
        path = target
    elif action == "append":  # whole lines of its own, again
        more = b"".join(lines[-n:]) or b"{}\n"
        path.write_bytes(data + more if data.endswith(b"\n") or not data else data + b"\n" + more)
    elif action == "cut":  # a line cut short, as a harness still writing it leaves it
        line = lines[len(lines) // 2] if lines else b"{}"
        path.write_bytes(data + line[: max(1, len(line) * n // 200)].rstrip(b"\n"))
    elif action == "rewrite":  # another content of the same name: a shorter one, or another log's
        other = SAMPLES / LOGS[n % len(LOGS)]
        path.write_bytes(b"".join(lines[: len(lines) // 2]) if n % 2 else other.read_bytes())
    else:
        path.unlink()
        return
    os.utime(path, ns=(1_900_000_000_000_000_000 + tick, 1_900_000_000_000_000_000 + tick))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=4))
def test_incremental_ingest_equals_cold_ingest(workdir, steps):
    logs, db, cold = workdir / "logs", workdir / "inc.duckdb", workdir / "cold.duckdb"
    for p in (logs, db, cold):
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    shutil.copytree(SAMPLES, logs)
    shutil.copy(workdir / "template.duckdb", db)
    for tick, (action, rel, n) in enumerate(steps):
        apply(logs, action, rel, n, tick)
        summary = ingest([str(logs)], db=str(db), workers=1, prune=True)
        # only what the change reaches is inferred again, never the whole store
        assert summary.files_inferred < 64 or action == "rewrite"
    ingest([str(logs)], db=str(cold), workers=1)
    got, want = dump(db), dump(cold)
    for t in TABLES:
        assert got[t] == want[t], t


def _outside(db: Path, partition: str) -> dict[str, list]:
    """Inference rows of every session not in ``partition``."""
    others = f"(SELECT session_id FROM session_partitions WHERE partition_id != '{partition}')"
    with Store(db, read_only=True) as s:
        return {
            "runs": s.query(f"SELECT * FROM runs WHERE root_session_id IN {others} ORDER BY run_id").rows(),
            "run_sessions": s.query(f"SELECT * FROM run_sessions WHERE session_id IN {others} ORDER BY ALL").rows(),
            "edges": s.query(f"SELECT * FROM all_edges WHERE src IN {others} ORDER BY edge_id").rows(),
            "artifacts": s.query(f"SELECT * FROM artifacts WHERE producer IN {others} ORDER BY ALL").rows(),
        }


def test_one_appended_line_reinfers_only_its_partition(tmp_path):
    logs, db = tmp_path / "logs", tmp_path / "s.duckdb"
    shutil.copytree(SAMPLES, logs)
    ingest([str(logs)], db=str(db), workers=1)
    path = sorted((logs / "codex").rglob("*.jsonl"))[0]
    with Store(db, read_only=True) as s:
        total = s.counts("SELECT 'n', count(DISTINCT partition_id) FROM file_partitions")["n"]
        part = s.query("SELECT partition_id FROM file_partitions WHERE source_path = $1", [str(path)]).item()
    before = _outside(db, part)
    assert before["runs"] and before["edges"]
    path.write_bytes(path.read_bytes() + path.read_bytes().splitlines(keepends=True)[-1])
    summary = ingest([str(logs)], db=str(db), workers=1)
    assert summary.inferred and summary.partitions_inferred == 1 < total
    assert _outside(db, part) == before  # every other partition's rows as they were
    nothing = ingest([str(logs)], db=str(db), workers=1)
    assert not nothing.inferred and nothing.files_inferred == 0


def test_a_written_path_lists_its_writers_once(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        rows = s.query(
            "SELECT path, count(*) FILTER (WHERE len(writers) > 0) AS listed,"
            " bool_and((len(writers) > 0) = (version = n_writes)) AS on_latest FROM artifacts GROUP BY path"
        )
    assert rows.height and rows["listed"].eq(1).all() and rows["on_latest"].all()


def test_prune_drops_deleted_files_only_when_asked(tmp_path):
    logs, db = tmp_path / "logs", tmp_path / "s.duckdb"
    shutil.copytree(SAMPLES / "codex", logs)
    ingest([str(logs)], db=str(db), workers=1)
    victim = sorted(logs.rglob("*.jsonl"))[0]
    victim.unlink()
    kept = ingest([str(logs)], db=str(db), workers=1)
    assert kept.files_removed == 0
    with Store(db, read_only=True) as s:
        assert s.counts(f"SELECT 'n', count(*) FROM sessions WHERE source_path = '{victim}'")["n"] > 0
    pruned = ingest([str(logs)], db=str(db), workers=1, prune=True)
    assert pruned.files_removed == 1 and pruned.inferred
    with Store(db, read_only=True) as s:
        for t in FILE_TABLES:
            assert s.counts(f"SELECT 'n', count(*) FROM {t} WHERE source_path = '{victim}'")["n"] == 0, t


def test_a_transcript_holding_its_parents_records_is_not_its_own_parent(tmp_path):
    # Found by the property above: a subagent's file rewritten with its parent's transcript names,
    # through the parent's Task call, its own agent id. Two sessions then hold that call; the
    # child's parent must be the real one, in an incremental ingest as in a cold one.
    logs, inc, cold = tmp_path / "logs", tmp_path / "inc.duckdb", tmp_path / "cold.duckdb"
    shutil.copytree(SAMPLES, logs)
    ingest([str(logs)], db=str(inc), workers=1)
    folder = logs / "claude-code" / "projects" / "-home-dev-projects-ink-well-v2"
    child = folder / "agent-0fce5e76.jsonl"
    child.write_bytes((folder / "b7ff63c1-1ce1-4867-8acb-8574d4cd7c25.jsonl").read_bytes())
    ingest([str(logs)], db=str(inc), workers=1)
    ingest([str(logs)], db=str(cold), workers=1)
    got, want = dump(inc), dump(cold)
    assert got["edges"] == want["edges"]
    with Store(cold, read_only=True) as s:
        assert s.query("SELECT count(*) FROM all_edges WHERE src = dst").item() == 0
        parent = s.query(
            "SELECT src FROM edges WHERE kind = 'spawn' AND dst = $1",
            ["claude-code:b7ff63c1-1ce1-4867-8acb-8574d4cd7c25/0fce5e76"],
        ).item()
    assert parent == "claude-code:b7ff63c1-1ce1-4867-8acb-8574d4cd7c25"


def test_a_changed_sidecar_reads_its_transcript_again(tmp_path):
    """Only a subagent's sidecar changes: the transcript it belongs to (the adapter's ``log_of``
    hook) is read again, so its session's row says what the sidecar says now."""
    logs, db = tmp_path / "logs", tmp_path / "s.duckdb"
    shutil.copytree(SAMPLES, logs)
    side = sorted(logs.rglob("agent-*.meta.json"))[0]
    transcript = str(side)[: -len(".meta.json")] + ".jsonl"
    ingest([str(logs)], db=str(db), workers=1)
    meta = json.loads(side.read_text())
    side.write_text(json.dumps({**meta, "agentType": "renamed-agent"}))
    summary = ingest([str(logs)], db=str(db), workers=1)
    assert summary.files_read == 1  # the transcript (the sidecar itself is no log)
    with Store(db, read_only=True) as s:
        types = s.query("SELECT agent_type FROM sessions WHERE source_path = ?", [transcript])["agent_type"]
    assert types.to_list() == ["renamed-agent"]


def test_every_edge_and_run_lies_in_one_partition(tmp_path):
    """The partitions are closed under the passes: no edge joins, and no run holds, sessions of two
    partitions (else an ingest re-inferring one of them alone gives other rows than a cold one)."""
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        split = s.query(
            "SELECT e.kind, e.evidence, e.src, e.dst FROM all_edges e"
            " JOIN session_partitions a ON a.session_id = e.src JOIN session_partitions b ON b.session_id = e.dst"
            " WHERE a.partition_id != b.partition_id ORDER BY ALL"
        ).rows()
        runs = s.query(
            "SELECT r.run_id FROM run_sessions r JOIN session_partitions p USING (session_id)"
            " GROUP BY r.run_id HAVING count(DISTINCT p.partition_id) > 1 ORDER BY ALL"
        ).rows()
        edges = s.query("SELECT count(*) FROM all_edges").item()
    assert edges > 50 and split == [] and runs == []


def test_an_oh_my_opencode_child_changed_alone_keeps_its_spawn(tmp_path):
    # Found by the property above: an oh-my-opencode task result names its child session, which
    # names no parent; no partition key tied the two, so a change to the child alone re-inferred it
    # without the parent's call and dropped (or, cold, kept) the spawn edge.
    logs, inc, cold = tmp_path / "logs", tmp_path / "inc.duckdb", tmp_path / "cold.duckdb"
    shutil.copytree(SAMPLES, logs)
    ingest([str(logs)], db=str(inc), workers=1)
    for child in sorted((logs / "oh-my-opencode").rglob("*.jsonl")):
        child.write_bytes(child.read_bytes() + child.read_bytes().splitlines(keepends=True)[-1])
        ingest([str(logs)], db=str(inc), workers=1)
    ingest([str(logs)], db=str(cold), workers=1)
    got, want = dump(inc), dump(cold)
    spawns = [e for e in want["edges"] if "task_metadata" in str(e)]
    assert len(spawns) == 4  # transcripts/: two task results; omo-agents/: a sync call and a delegate_task
    for t in TABLES:
        assert got[t] == want[t], t


def test_an_ingest_without_store_totals_stores_the_same(tmp_path):
    # `watch` asks for no store totals (four whole-table reads per batch): the store must not
    # differ, and the summary still counts what this ingest read.
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES, logs)
    full = ingest([str(logs)], db=str(tmp_path / "a.duckdb"), workers=1)
    bare = ingest([str(logs)], db=str(tmp_path / "b.duckdb"), workers=1, totals=False)
    assert full.runs > 0 and full.edges_by_kind and full.store_sessions_by_harness
    assert (bare.runs, bare.edges_by_kind, bare.store_sessions_by_harness, bare.inference_counts) == (0, {}, {}, {})
    assert (bare.files_read, bare.sessions_by_harness, bare.diagnostics_by_code) == (
        full.files_read,
        full.sessions_by_harness,
        full.diagnostics_by_code,
    )
    assert dump(tmp_path / "b.duckdb") == dump(tmp_path / "a.duckdb")
