"""show --format html: the page's data equals the store, it loads nothing, and hostile ids stay text."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import UTC, datetime
from html import unescape

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.pricing import Prices
from sessiongraph.store import Store
from sessiongraph.views import html
from tests.conftest import ROOT, SAMPLES

ORBIT = "claude-code:b720e73d-763d-4c3c-8ff8-264d88d63693"
HOSTILE_RUN = 'run-"><script>alert(1)</script>'
HOSTILE_ROOT = "claude-code:<script>alert('root')</script>"
HOSTILE_CHILD = 'claude-code:x/"><img src=x onerror=alert(2)>'
HOSTILE_PATH = "/tmp/</script><img src=x onerror=alert(3)>&amp;.md"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "s.duckdb"
    # A full store keeps commands and descriptions: the page must still show none of them.
    res = cli("ingest", SAMPLES, "--db", path, "--json", "--privacy", "full")
    assert res.exit_code == 0, res.output
    return path


@pytest.fixture(scope="module")
def orbit_run(db):
    with Store(db, read_only=True) as store:
        return store.query("SELECT run_id FROM run_sessions WHERE session_id = $1", [ORBIT]).item()


def page_data(text: str) -> dict:
    m = re.search(r'<script type="application/json" id="sg-data">(.*?)</script>', text, re.S)
    assert m, "no data block"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def orbit_page(db, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "run.html"
    res = cli("show", "b720e73d", "--db", db, "--format", "html", "--out", out)
    assert res.exit_code == 0, res.output
    return out.read_text(encoding="utf-8")


def test_page_holds_every_session_and_edge_of_the_run(db, orbit_run, orbit_page):
    data = page_data(orbit_page)
    with Store(db, read_only=True) as store:
        members = set(store.query("SELECT session_id FROM run_sessions WHERE run_id = $1", [orbit_run])["session_id"])
        edges = store.query(
            "SELECT edge_id, kind, tier, src, dst FROM edges WHERE run_id = $1 UNION ALL "
            "SELECT edge_id, kind, tier, src, dst FROM lineage WHERE src IN (SELECT session_id FROM run_sessions "
            "WHERE run_id = $1) OR dst IN (SELECT session_id FROM run_sessions WHERE run_id = $1)",
            [orbit_run],
        )
    inside = [s for s in data["sessions"] if not s["external"]]
    assert len(inside) == len(members) == 6
    assert {s["id"] for s in inside} == members
    assert sorted(e["id"] for e in data["edges"]) == sorted(edges["edge_id"]) and len(data["edges"]) == 7
    # the far end of a cross-run edge gets a lane of its own, marked external
    outside = {s["id"] for s in data["sessions"] if s["external"]}
    assert (
        outside
        == (set(edges["src"]) | set(edges["dst"])) - members
        == {"claude-code:45e626f5-ff95-4312-8d3e-f9f04e2bb73a"}
    )
    assert sorted(s["lane"] for s in data["sessions"]) == list(range(7))
    assert set(data["legend"]["kinds"]) >= set(edges["kind"])
    assert set(data["legend"]["tiers"]) >= set(edges["tier"])
    for kind in set(edges["kind"]):
        assert f'data-legend-kind="{kind}" class="present"' in orbit_page
    for tier in ("verified", "heuristic", "reported"):
        assert f'data-legend-tier="{tier}"' in orbit_page
    assert data["run"]["id"] == orbit_run and data["run"]["n_sessions"] == 6


def test_lanes_nest_children_under_their_parent(orbit_page):
    lanes = [s["id"] for s in sorted(page_data(orbit_page)["sessions"], key=lambda s: s["lane"])]
    assert lanes[0] == ORBIT
    # the nested subagent follows its parent directly; the external session comes last
    assert lanes.index(f"{ORBIT}/a19accb617638ba33") == lanes.index(f"{ORBIT}/aba3165e31922a567") + 1
    assert lanes[-1] == "claude-code:45e626f5-ff95-4312-8d3e-f9f04e2bb73a"


def test_tokens_and_dollars_per_session_equal_the_usage_rows(db, orbit_page):
    prices = Prices.load()
    want: dict[str, dict] = {}
    with Store(db, read_only=True) as store:
        rows = store.query(
            "SELECT u.*, s.harness, coalesce(u.ts, s.started_at) AS req_at FROM usage_dedup u JOIN (SELECT session_id, "
            "any_value(harness) AS harness, min(started_at) AS started_at FROM sessions GROUP BY 1) s USING (session_id) "
            "WHERE session_id IN (SELECT session_id FROM run_sessions "
            "WHERE run_id = (SELECT run_id FROM run_sessions WHERE session_id = $1))",
            [ORBIT],
        )
    for r in rows.iter_rows(named=True):  # one response at a time, not the page's grouping
        w = want.setdefault(r["session_id"], {"input": 0, "output": 0, "cache_read": 0, "usd": 0.0})
        w["input"] += r["input_tokens"]
        w["output"] += r["output_tokens"]
        w["cache_read"] += r["cache_read_tokens"]
        w["usd"] += prices.usd(
            r["model"],
            harness=r["harness"],
            when=r["req_at"],
            input_tokens=r["input_tokens"],
            output_tokens=r["output_tokens"],
            cache_read_tokens=r["cache_read_tokens"],
            cache_creation_5m_tokens=r["cache_creation_5m_tokens"],
            cache_creation_1h_tokens=r["cache_creation_1h_tokens"],
        )
    got = {s["id"]: s for s in page_data(orbit_page)["sessions"] if not s["external"]}
    assert set(got) == set(want)
    for sid, w in want.items():
        t = got[sid]["tokens"]
        assert (t["input"], t["output"], t["cache_read"]) == (w["input"], w["output"], w["cache_read"])
        assert got[sid]["usd"] == pytest.approx(w["usd"], abs=1e-5)
    assert page_data(orbit_page)["run"]["usd"] == pytest.approx(sum(w["usd"] for w in want.values()), abs=1e-5)


def test_unpriced_model_is_null_never_zero(db):
    with Store(db, read_only=True) as store:
        sid = store.query("SELECT session_id FROM usage_dedup WHERE model = 'gpt-5.5-mini' LIMIT 1").item()
        page = html.run_page(store, sid)
    data = page_data(page)
    s = next(s for s in data["sessions"] if s["id"] == sid)
    assert s["usd"] is None and s["unpriced"] == ["gpt-5.5-mini"]
    assert data["run"]["usd"] is None
    assert Prices.load().resolve("gpt-5.5-mini", "codex").source is None


def test_session_totals_and_reported_dollars(db):
    """Crush's sessions: no request, no token, no dollars of ours (n/a, and no model named as
    unpriced), Crush's own figure apart; a Droid session's totals: dollars, no request."""
    crush = "crush:3f0c6a2e-1b7d-4e58-9a41-0c2d5e8f7a10"
    droid = "factory-droid:5b2e8c14-7a3f-4d69-b1e0-2c8f9a6d3e71"
    with Store(db, read_only=True) as store:
        data = {sid: page_data(html.run_page(store, sid)) for sid in (crush, droid)}
    got = {
        sid: next((s["requests"], s["session_totals"], s["usd"], s["unpriced"], s["reported_usd"])
                  for s in d["sessions"] if s["id"] == sid)
        for sid, d in data.items()
    }  # fmt: skip
    assert got == {crush: (0, True, None, [], 0.0224), droid: (0, True, 0.028154, [], None)}
    assert data[crush]["run"]["usd"] is None and data[droid]["run"]["usd"] == 0.037154


def test_artifacts_table_lists_every_file_the_run_wrote_or_read(db, orbit_run, orbit_page):
    with Store(db, read_only=True) as store:
        want = store.query(
            "SELECT a.path, a.version, a.producer FROM artifacts a WHERE a.producer IN (SELECT session_id FROM "
            "run_sessions WHERE run_id = $1) OR EXISTS (SELECT 1 FROM run_sessions m WHERE m.run_id = $1 AND "
            "list_contains(a.consumers, m.session_id)) ORDER BY 1, 2",
            [orbit_run],
        )
    arts = page_data(orbit_page)["artifacts"]
    got = [(a["path"], v["version"], v["producer"]) for a in arts for v in a["versions"]]
    assert got == list(want.iter_rows()) and len(got) == 2
    sync = next(a for a in arts if a["path"].endswith("sync.py"))
    assert sync["writers"] == ["claude-code:45e626f5-ff95-4312-8d3e-f9f04e2bb73a"]
    assert sync["readers"] == [f"{ORBIT}/a19accb617638ba33"]


def test_page_is_self_contained(orbit_page):
    assert "http://" not in orbit_page and "https://" not in orbit_page
    assert not re.search(r"""\s(?:src|href)\s*=\s*["']?[a-z]""", orbit_page, re.I)
    assert "@import" not in orbit_page and not re.search(r"""url\(\s*["']?(?!#)""", orbit_page)
    csp = unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', orbit_page).group(1))
    assert "default-src 'none'" in csp
    # only the page's own inline style and script may apply: their hashes are the whole allow-list
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", orbit_page, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{tag}-src 'sha256-{digest}'" in csp
    assert orbit_page.count("<script") == 2


def test_page_has_no_prompt_command_or_output_text(db, orbit_run, orbit_page):
    with Store(db, read_only=True) as store:
        texts = store.query(
            "SELECT command AS t FROM calls WHERE session_id IN (SELECT session_id FROM run_sessions WHERE run_id = $1)"
            " UNION SELECT description FROM calls WHERE session_id IN (SELECT session_id FROM run_sessions "
            "WHERE run_id = $1)",
            [orbit_run],
        )["t"].drop_nulls()
    assert len(texts) >= 3
    for t in texts:
        if len(t) >= 12:
            assert t not in orbit_page and html.json_text(t)[1:-1] not in orbit_page


def hostile_store(path) -> str:
    """A store whose ids, run id and file path try to break out of HTML, attributes and the script."""
    t0 = datetime(2026, 2, 1, 10, 0, tzinfo=UTC)
    t1 = datetime(2026, 2, 1, 10, 5, tzinfo=UTC)
    with Store(path) as store:
        con = store.con
        for sid, start in ((HOSTILE_ROOT, t0), (HOSTILE_CHILD, t0.replace(minute=1))):
            con.execute(
                "INSERT INTO sessions (session_id, harness, session_kind, source_path, started_at, ended_at,"
                " model, ingest_id) VALUES (?, 'claude-code', 'main', '/x.jsonl', ?, ?, 'claude-haiku-4-5', 1)",
                [sid, start, t1],
            )
            con.execute(
                "INSERT INTO usage (session_id, ts, model, message_id, input_tokens, output_tokens, "
                "cache_read_tokens, cache_creation_tokens, cache_creation_5m_tokens, cache_creation_1h_tokens,"
                " reasoning_tokens, source_path, ingest_id) VALUES (?, ?, 'claude-haiku-4-5', 'm', 1000, 100,"
                " 0, 0, 0, 0, 0, '/x.jsonl', 1)",
                [sid, start],
            )
        con.execute(
            "INSERT INTO runs (run_id, root_session_id, root_harness, started_at, ended_at, n_sessions, "
            "n_spawns, n_launches, n_artifact_edges, max_depth) VALUES (?, ?, 'claude-code', ?, ?, 2, 1, 0, 1, 1)",
            [HOSTILE_RUN, HOSTILE_ROOT, t0, t1],
        )
        con.execute(
            "INSERT INTO run_sessions (run_id, session_id, parent_session_id, via, depth, role) VALUES "
            "(?, ?, NULL, NULL, 0, 'lead'), (?, ?, ?, 'spawn', 1, '<b>role</b>')",
            [HOSTILE_RUN, HOSTILE_ROOT, HOSTILE_RUN, HOSTILE_CHILD, HOSTILE_ROOT],
        )
        con.execute(
            "INSERT INTO edges (edge_id, kind, src, dst, tier, evidence, pass, ts, lag_s, path, version, "
            "run_id) VALUES ('e1\"><svg onload=alert(4)>', 'spawn', ?, ?, 'verified', '</script><b>ev</b>',"
            " 'spawn', ?, 1.0, NULL, NULL, ?), ('e2', 'artifact', ?, ?, 'heuristic', 'w', 'artifacts', ?, "
            "30.0, ?, 1, ?)",
            [
                HOSTILE_ROOT,
                HOSTILE_CHILD,
                t0.replace(minute=1),
                HOSTILE_RUN,
                HOSTILE_CHILD,
                HOSTILE_ROOT,
                t0.replace(minute=3),
                HOSTILE_PATH,
                HOSTILE_RUN,
            ],
        )
        con.execute(
            "INSERT INTO artifacts (path, version, producer, ts, how, tier, n_writes, n_reads, writers, "
            "consumers) VALUES (?, 1, ?, ?, 'Write', 'verified', 1, 1, [?], [?])",
            [HOSTILE_PATH, HOSTILE_CHILD, t0.replace(minute=2), HOSTILE_CHILD, HOSTILE_ROOT],
        )
    return HOSTILE_RUN


def test_hostile_ids_and_paths_stay_text(tmp_path):
    path = tmp_path / "hostile.duckdb"
    run = hostile_store(path)
    with Store(path, read_only=True) as store:
        page = html.run_page(store, run)
    # nothing a value carries becomes markup: two script elements, ours, and no injected tags
    assert page.count("<script") == 2 and page.count("</script>") == 2
    for bad in ("<img", "<svg onload", "<b>", "alert(1)</script>"):
        assert bad not in page
    assert not re.search(r"<[^>]*\son(?:error|load)=", page)
    assert "run-&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the header and title, escaped
    data = page_data(page)  # and the data round-trips exactly
    assert {s["id"] for s in data["sessions"]} == {HOSTILE_ROOT, HOSTILE_CHILD}
    assert {e["id"] for e in data["edges"]} == {'e1"><svg onload=alert(4)>', "e2"}
    assert data["artifacts"][0]["path"] == HOSTILE_PATH
    assert next(e for e in data["edges"] if e["id"] == "e2")["path"] == HOSTILE_PATH


def test_json_text_cannot_close_its_script():
    text = html.json_text({"a": "</script><!-- & >"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & >"}


def test_short_ids():
    assert html.short_id(ORBIT) == "b720e73d"
    assert html.short_id(f"{ORBIT}/aba3165e31922a567") == "aba3165e31922a567"
    assert html.short_id("ocp:acme-run-0042/lead") == "lead"


def test_cli_prints_the_page_and_reports_errors(db):
    res = cli("show", "b720e73d", "--db", db, "--format", "html")
    assert res.exit_code == 0 and res.output.startswith("<!doctype html>")
    assert res.output.rstrip().endswith("</html>")
    res = CliRunner().invoke(main, ["show", "nope-no-such-run", "--db", str(db), "--format", "html"])
    assert res.exit_code == 1 and res.output.startswith("Error: no run 'nope-no-such-run'")
    res = CliRunner().invoke(
        main, ["show", "b720e73d", "--db", str(db), "--format", "html", "--out", str(db.parent / "missing" / "x.html")]
    )
    assert res.exit_code == 1 and res.output.startswith("Error: cannot write")


def test_short_ids_are_unique_on_a_page():
    twins = ["codex:019ce419-22a5-7321-baa1-5d0152ca561e", "codex:019ce419-22de-7f50-80eb-86a44f32465b"]
    shorts = html.short_ids([*twins, "codex:019ce419-2314-7450-93de-70915b5c62d2", ORBIT, f"{ORBIT}/aba3165e31922a567"])
    assert shorts[twins[0]] == "019ce419-22a" and shorts[twins[1]] == "019ce419-22d"
    assert shorts[ORBIT] == "b720e73d" and shorts[f"{ORBIT}/aba3165e31922a567"] == "aba3165e31922a567"
    same_tail = html.short_ids(["ocp:acme/lead", "ocp:other/lead"])
    assert same_tail == {"ocp:acme/lead": "ocp:acme/lead", "ocp:other/lead": "ocp:other/lead"}


def test_a_codex_family_with_near_identical_ids(tmp_path):
    """Three workers spawned in one millisecond: their ids share 12 characters (real logs)."""
    family = ROOT.parent / "shared" / "real-families" / "codex-multi-agent-0.114"
    if not family.exists():
        pytest.skip("../shared/real-families not present")
    db = tmp_path / "s.duckdb"
    assert cli("ingest", family, "--db", db, "--json").exit_code == 0
    text = cli("show", "019ce3fb", "--db", db, "--format", "html").output
    shorts = [s["short"] for s in page_data(text)["sessions"]]
    assert len(shorts) == 4 and len(set(shorts)) == 4
    assert sum(s.startswith("019ce419-2") for s in shorts) == 3


def test_no_debug_text_on_the_page(orbit_page):
    assert "drawn in" not in orbit_page and 'id="perf"' not in orbit_page
