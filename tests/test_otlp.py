"""OpenTelemetry export: each run one trace, its sessions nested only by verified spawn and launch
edges (weaker ones and artifact flows are links), tokens and dollars as the store sums them; the
OTLP/JSON files, and the same spans sent to a real receiver (Arize Phoenix, started here on
loopback) and read back with Phoenix's own client; a receiver that goes away mid-export is an
error that says how much was sent."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.errors import SessiongraphError
from sessiongraph.otlp import spans as names
from sessiongraph.otlp.export import export_otlp
from sessiongraph.pipeline import ingest
from tests.conftest import MARKER, SAMPLES, plant_logs

# Phoenix's client imports all of Phoenix, whose ldap3 still uses pyasn1's old names.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ldap3")

LAMP = "run_1bc098617790fdf8"  # scenarios/launch-lamp: a Claude root launching Codex three times, one verified
ORBIT = "run_d0b6b48bf1149ae1"  # claude-code orbit-cli: four subagents (two levels) and a launch


def cli(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    db = tmp_path_factory.mktemp("otlp") / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    return str(db)


@pytest.fixture(scope="module")
def files(store, tmp_path_factory) -> dict[str, dict]:
    """run id -> its OTLP/JSON file, parsed."""
    out = tmp_path_factory.mktemp("otlp-files")
    summary = export_otlp(out, db=store)
    assert len(summary.files) == summary.runs > 30
    return {Path(f).name.removesuffix(".otlp.json"): json.loads(Path(f).read_text()) for f in summary.files}


def sql(db: str, text: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(text, params or []).fetchall()
    finally:
        con.close()


def spans_of(doc: dict) -> list[dict]:
    return [s for r in doc["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]


def attrs(obj: dict) -> dict:
    """OTLP/JSON key-value list -> plain values (int64 come as strings)."""
    out = {}
    for kv in obj.get("attributes", []):
        ((kind, value),) = kv["value"].items()
        out[kv["key"]] = int(value) if kind == "intValue" else value
    return out


def sessions(doc: dict) -> dict[str, dict]:
    """session id -> its invoke_agent span."""
    return {attrs(s)[names.AGENT_ID]: s for s in spans_of(doc) if attrs(s)[names.OPERATION] == "invoke_agent"}


def test_one_trace_per_run_with_unique_deterministic_ids(store, files, tmp_path):
    traces = set()
    for doc in files.values():
        ids = {s["traceId"] for s in spans_of(doc)}
        assert len(ids) == 1 and len(next(iter(ids))) == 32
        traces |= ids
        span_ids = [s["spanId"] for s in spans_of(doc)]
        assert len(span_ids) == len(set(span_ids))
    assert len(traces) == len(files)
    again = export_otlp(tmp_path / "again", db=store)
    for f in again.files:
        assert json.loads(Path(f).read_text()) == files[Path(f).name.removesuffix(".otlp.json")]


def test_every_member_and_call_is_a_span(store, files):
    members = Counter(r for (r,) in sql(store, "SELECT run_id FROM run_sessions"))
    calls = dict(
        sql(
            store,
            "SELECT m.run_id, count(DISTINCT (c.session_id, coalesce(c.call_id, c.source_path || c.line))) "
            "FROM calls c JOIN run_sessions m USING (session_id) GROUP BY ALL",
        )
    )
    for run_id, doc in files.items():
        ops = Counter(attrs(s)[names.OPERATION] for s in spans_of(doc))
        assert ops["invoke_agent"] == members[run_id], run_id
        assert ops["execute_tool"] == calls.get(run_id, 0), run_id


def test_verified_edges_nest_weaker_ones_link(store, files):
    """The run tree: a verified spawn or launch puts the child under its parent (the spawning call's
    span when known); any other tie leaves the child at the root, linked to its candidate parent."""
    edges = {
        (dst, src, kind): (tier, call)
        for dst, src, kind, tier, call in sql(
            store,
            "SELECT dst, src, kind, min(tier), any_value(src_call_id) FROM edges "
            "WHERE kind IN ('spawn', 'launch') GROUP BY ALL",
        )
    }
    nested = linked = 0
    for run_id, parent, child, via in sql(
        store, "SELECT run_id, parent_session_id, session_id, via FROM run_sessions WHERE parent_session_id IS NOT NULL"
    ):
        doc = files[run_id]
        by_id = {s["spanId"]: s for s in spans_of(doc)}
        span = sessions(doc)[child]
        tier, call = edges.get((child, parent, via), (None, None))
        own = {
            sid
            for sid, s in by_id.items()
            if sid == sessions(doc)[parent]["spanId"] or s.get("parentSpanId") == sessions(doc)[parent]["spanId"]
        }
        if tier == "verified":
            nested += 1
            assert span["parentSpanId"] in own
            assert all(attrs(link)["sessiongraph.link.kind"] == "artifact" for link in span.get("links", []))
            if call and any(attrs(s).get(names.TOOL_CALL_ID) == call for s in by_id.values()):
                assert attrs(by_id[span["parentSpanId"]])[names.TOOL_CALL_ID] == call
            assert attrs(span)["sessiongraph.edge.tier"] == "verified"
        else:
            linked += 1
            assert "parentSpanId" not in span, (run_id, child)
            (link, *_) = span["links"]
            assert link["traceId"] == span["traceId"] and link["spanId"] in own
            assert attrs(link)["sessiongraph.link.kind"] == "candidate_parent"
            assert attrs(link)["sessiongraph.edge.kind"] == via
            # no edge: a placeholder's child is a reported spawn (only the child names the parent, as
            # in OCP); a helper (compaction, warm-up, reviewer) has no tier to give
            placeholder = not sql(store, "SELECT 1 FROM sessions WHERE session_id = $1", [parent])
            assert attrs(link).get("sessiongraph.edge.tier") == (tier or ("reported" if placeholder else None))
    assert nested > 30 and linked > 10


def test_the_launch_lamp_family(files):
    """One Claude session launched Codex three times: the verified launch hangs under its Bash call,
    the two heuristic ones are root-level spans linked to theirs."""
    doc = files[LAMP]
    by_id = {s["spanId"]: s for s in spans_of(doc)}
    codex = [s for sid, s in sessions(doc).items() if sid.startswith("codex:")]
    assert len(codex) == 3
    under = [s for s in codex if "parentSpanId" in s]
    assert len(under) == 1
    call = by_id[under[0]["parentSpanId"]]
    assert attrs(call)[names.TOOL_NAME] == "Bash" and attrs(call)[names.OPERATION] == "execute_tool"
    roots = [s for s in spans_of(doc) if "parentSpanId" not in s]
    assert len(roots) == 3  # the Claude root and the two heuristic launches
    tiers = sorted(attrs(s["links"][0])["sessiongraph.edge.tier"] for s in codex if "parentSpanId" not in s)
    assert tiers == ["heuristic", "heuristic"]
    depth = {attrs(s)[names.AGENT_ID]: attrs(s)["sessiongraph.session.depth"] for s in sessions(files[ORBIT]).values()}
    assert sorted(depth.values()) == [0, 1, 1, 1, 1, 2]


def test_artifact_flows_are_links_with_the_path(store, files):
    flows = sql(
        store,
        "SELECT d.run_id, a.path, a.version, a.dst FROM (SELECT * FROM edges UNION ALL BY NAME SELECT * FROM lineage) a "
        "JOIN run_sessions d ON d.session_id = a.dst WHERE a.kind = 'artifact'",
    )
    assert len(flows) > 15
    found = Counter()
    for run_id, doc in files.items():
        for s in spans_of(doc):
            for link in s.get("links", []):
                a = attrs(link)
                if a["sessiongraph.link.kind"] == "artifact":
                    found[(run_id, a["sessiongraph.artifact.path"], a["sessiongraph.artifact.version"])] += 1
    assert found == Counter((r, p, v) for r, p, v, _ in flows)


def test_tokens_and_dollars_are_the_stores(store, files):
    """Per run, the sessions' usage attributes add up to the store's sums (input counts cache reads
    and writes, as the conventions do); dollars to run_costs."""
    cols = "input_tokens + cache_read_tokens + cache_creation_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens"
    want = {
        r: vals
        for r, *vals in sql(
            store,
            "SELECT run_id, "
            + ", ".join(f"coalesce(sum({c.strip()}), 0)::BIGINT" for c in cols.split(", "))
            + " FROM usage_costs WHERE run_id IS NOT NULL GROUP BY run_id",
        )
    }
    # the usage columns are filled (0 rather than null) by usage_costs' coalesce above
    keys = (names.INPUT_TOKENS, names.OUTPUT_TOKENS, names.CACHE_READ, names.CACHE_CREATION, names.REASONING)
    usd = dict(sql(store, "SELECT run_id, usd FROM run_costs"))
    assert sum(1 for v in want.values() if v[0]) > 30
    for run_id, doc in files.items():
        spans = [attrs(s) for s in sessions(doc).values()]
        got = [sum(a.get(k, 0) for a in spans) for k in keys]
        assert got == list(want.get(run_id, [0] * 5)), run_id
        if usd.get(run_id) is not None and any(names.USD in a for a in spans):
            assert sum(a.get(names.USD, 0) for a in spans) == pytest.approx(usd[run_id], abs=1e-5)
    assert all(
        not k.startswith("gen_ai.usage") for s in spans_of(files[LAMP]) if "execute_tool" in s["name"] for k in attrs(s)
    )


def test_spans_carry_the_logs_times(store, files):
    (start, end) = sql(
        store,
        "SELECT epoch_us(min(started_at)) * 1000, epoch_us(max(ended_at)) * 1000 FROM sessions "
        "WHERE session_id = (SELECT root_session_id FROM runs WHERE run_id = $1)",
        [LAMP],
    )[0]
    root = next(s for s in spans_of(files[LAMP]) if "parentSpanId" not in s and not s.get("links"))
    assert (int(root["startTimeUnixNano"]), int(root["endTimeUnixNano"])) == (start, end)
    assert all(
        int(s["endTimeUnixNano"]) >= int(s["startTimeUnixNano"]) > 0 for d in files.values() for s in spans_of(d)
    )


def test_attribute_names_are_the_semantic_conventions():
    semconv = pytest.importorskip("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")
    for ours, theirs in [
        (names.OPERATION, "GEN_AI_OPERATION_NAME"),
        (names.AGENT_NAME, "GEN_AI_AGENT_NAME"),
        (names.AGENT_ID, "GEN_AI_AGENT_ID"),
        (names.CONVERSATION, "GEN_AI_CONVERSATION_ID"),
        (names.REQUEST_MODEL, "GEN_AI_REQUEST_MODEL"),
        (names.TOOL_NAME, "GEN_AI_TOOL_NAME"),
        (names.TOOL_CALL_ID, "GEN_AI_TOOL_CALL_ID"),
        (names.INPUT_TOKENS, "GEN_AI_USAGE_INPUT_TOKENS"),
        (names.OUTPUT_TOKENS, "GEN_AI_USAGE_OUTPUT_TOKENS"),
        (names.CACHE_READ, "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS"),
        (names.CACHE_CREATION, "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS"),
        (names.REASONING, "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS"),
    ]:
        assert getattr(semconv, theirs) == ours
    ops = semconv.GenAiOperationNameValues
    assert (ops.INVOKE_AGENT.value, ops.EXECUTE_TOOL.value) == (names.INVOKE_AGENT, names.EXECUTE_TOOL)


def test_bad_arguments_are_clear_errors(store):
    res = CliRunner().invoke(main, ["export", "otlp", "--db", store])
    assert res.exit_code == 2 and "--out DIR, --endpoint URL or both" in res.output
    res = CliRunner().invoke(main, ["export", "otlp", "--db", store, "--endpoint", "localhost:4318"])
    assert res.exit_code == 1 and "is not an http(s) URL" in res.output


# A real receiver: Arize Phoenix, one server for the module, on loopback, in a temp working dir.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Phoenix:
    def __init__(self, root: Path):
        self.root = root
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> None:
        port, grpc = free_port(), free_port()
        work = self.root / f"phoenix-{port}"
        work.mkdir()
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(work),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc),
            "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{work / 'phoenix.db'}",
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        self.log = work / "server.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
            )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        tail = self.log.read_text(errors="replace")[-1500:]
        self.stop()
        pytest.skip(f"Phoenix did not start on {self.url}: {tail}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        self.proc = None

    def running(self) -> Phoenix:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        return self

    def spans(self, expected: int, timeout: float = 60) -> list[dict]:
        """Every span of the default project, once ``expected`` arrived (Phoenix inserts in the background)."""
        from phoenix.client import Client

        client = Client(base_url=self.url)
        deadline = time.monotonic() + timeout
        while True:
            got = client.spans.get_spans(project_identifier="default", limit=expected + 1000, timeout=30)
            if len(got) >= expected or time.monotonic() > deadline:
                return got
            time.sleep(0.5)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    if importlib.util.find_spec("phoenix") is None or importlib.util.find_spec("phoenix.client") is None:
        pytest.skip("arize-phoenix and arize-phoenix-client are not installed (the test extra has them)")
    server = Phoenix(tmp_path_factory.mktemp("phoenix"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def planted_store(tmp_path_factory) -> str:
    """The samples with the privacy marker planted into every text, ingested under metadata_only."""
    root = tmp_path_factory.mktemp("otlp-planted")
    logs = root / "logs"
    import shutil

    shutil.copytree(SAMPLES, logs, ignore=shutil.ignore_patterns("*.md", "*.py"))
    plant_logs(logs)
    db = root / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    return str(db)


def test_phoenix_receives_every_run_as_one_trace(phoenix, planted_store, tmp_path):
    phoenix.running()
    out = cli("export", "otlp", "--endpoint", phoenix.url, "--out", tmp_path, "--db", planted_store, "--json")
    summary = json.loads(out)
    assert summary["endpoint"] == phoenix.url + "/v1/traces" and summary["runs"] > 30
    sent = {}
    for f in summary["files"]:
        for s in spans_of(json.loads(Path(f).read_text())):
            sent[s["spanId"]] = s
    assert len(sent) == summary["spans"]
    got = phoenix.spans(len(sent))
    assert len(got) == len(sent)  # none dropped, none twice
    assert MARKER not in json.dumps(got, default=str) and MARKER not in out
    by_id = {s["context"]["span_id"]: s for s in got}
    assert set(by_id) == set(sent)
    assert len({s["context"]["trace_id"] for s in got}) == summary["runs"]
    for sid, s in by_id.items():
        mine = sent[sid]
        assert s["context"]["trace_id"] == mine["traceId"]
        assert s.get("parent_id") == mine.get("parentSpanId"), s["name"]
        assert s["name"] == mine["name"]
        for key in (names.INPUT_TOKENS, names.OUTPUT_TOKENS, names.CACHE_READ, names.REASONING):
            assert s["attributes"].get(key) == attrs(mine).get(key), (s["name"], key)
    lamp = [s for s in got if s["attributes"].get("sessiongraph.run.id") == LAMP]
    assert len(lamp) == 4 and sum(1 for s in lamp if s.get("parent_id") is None) == 3
    want = sql(planted_store, "SELECT sum(output_tokens) FROM usage_costs WHERE run_id IS NOT NULL")[0][0]
    assert sum(s["attributes"].get(names.OUTPUT_TOKENS, 0) for s in got) == want


def test_a_receiver_gone_mid_export_is_an_error_saying_what_was_sent(phoenix, store, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2")  # give up on the dead receiver quickly
    server = phoenix.running()
    batches: list[tuple[int, int]] = []

    def stop_after_first(runs: int, spans: int) -> None:
        batches.append((runs, spans))
        if len(batches) == 1:
            server.stop()

    with pytest.raises(SessiongraphError) as err:
        export_otlp(endpoint=server.url, db=store, batch_spans=50, on_batch=stop_after_first)
    message = str(err.value)
    assert batches == [(batches[0][0], 50)] and batches[0][0] > 0
    assert f"failed after 50 spans ({batches[0][0]} whole runs) were sent" in message
    assert "a batch of 50 spans was not delivered" in message
    # the command: an error line and exit status 1, never a success line
    res = CliRunner().invoke(main, ["export", "otlp", "--endpoint", server.url, "--db", store])
    assert res.exit_code == 1 and "failed after 0 spans" in res.output and "OTLP:" not in res.output


def test_session_totals_are_no_requests_and_reported_dollars_ride_apart(store, files):
    """A harness's session totals (Factory Droid's tokenUsage) carry tokens and dollars but no
    request count; Crush's sessions carry no token attribute (none is recorded), only Crush's own
    dollars, apart from ours."""
    run_of = dict(sql(store, "SELECT session_id, run_id FROM run_sessions"))
    droid = "factory-droid:5b2e8c14-7a3f-4d69-b1e0-2c8f9a6d3e71"
    a = attrs(sessions(files[run_of[droid]])[droid])
    assert (a[names.INPUT_TOKENS], a[names.OUTPUT_TOKENS], a[names.USD]) == (5120 + 2048, 812, 0.028154)
    assert f"{names.EXT}.usage.requests" not in a and f"{names.EXT}.usage.reported_usd" not in a
    crush = "crush:3f0c6a2e-1b7d-4e58-9a41-0c2d5e8f7a10"
    a = attrs(sessions(files[run_of[crush]])[crush])
    assert not [k for k in a if k.startswith("gen_ai.usage")] and names.USD not in a
    assert a[f"{names.EXT}.usage.reported_usd"] == 0.0224
