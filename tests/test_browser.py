"""The run page in a real headless Chromium: every session and edge is drawn, the legend names every
kind and tier present, the address sorts and selects, hostile values stay text, nothing is fetched.

Needs Debian's chromium at /usr/bin/chromium (`.ci/run` installs it); skips without it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.store import Store
from sessiongraph.views import html
from tests.conftest import SAMPLES
from tests.test_html import HOSTILE_CHILD, HOSTILE_PATH, HOSTILE_ROOT, ORBIT, hostile_store

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT_COPY = Path("/tmp/sessiongraph-run.png")
# Chromium's own switches: no sandbox (root in CI), no GPU, and none of its background fetching.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
)

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) to run the browser tests",
)


def chromium(tmp: Path, url: str, *args: str) -> str:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    res = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args, url],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "HOME": str(tmp)},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def dump_dom(tmp: Path, page: Path, fragment: str = "") -> str:
    dom = chromium(tmp, page.as_uri() + fragment, "--dump-dom")
    assert "data-sg-ready=" in dom, "the page script did not finish"
    return dom


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text under each element with an id."""

    def __init__(self, dom: str):
        super().__init__(convert_charrefs=True)
        self.all: list[tuple[str, dict]] = []
        self.text: dict[str, list[str]] = {}
        self._open: list[tuple[str, str | None]] = []
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.all.append((tag, a))
        if tag not in ("meta", "link", "br", "img", "input", "line", "rect", "path", "stop"):
            self._open.append((tag, a.get("id")))

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data):
        for _, ident in self._open:
            if ident:
                self.text.setdefault(ident, []).append(data)

    def find(self, tag: str | None = None, cls: str | None = None, attr: str | None = None) -> list[dict]:
        return [
            a
            for t, a in self.all
            if (tag is None or t == tag)
            and (cls is None or cls in a.get("class", "").split())
            and (attr is None or attr in a)
        ]

    def text_of(self, ident: str) -> str:
        return re.sub(r"\s+", " ", " ".join(self.text.get(ident, []))).strip()


@pytest.fixture(scope="module")
def store_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("browser") / "s.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(SAMPLES), "--db", str(path), "--json"])
    assert res.exit_code == 0, res.output
    return path


@pytest.fixture(scope="module")
def run_page(store_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("browser-page") / "run.html"
    res = CliRunner().invoke(main, ["show", "b720e73d", "--db", str(store_db), "--format", "html", "--out", str(out)])
    assert res.exit_code == 0, res.output
    with Store(store_db, read_only=True) as store:
        run_id = store.query("SELECT run_id FROM run_sessions WHERE session_id = $1", [ORBIT]).item()
        members = store.query("SELECT session_id FROM run_sessions WHERE run_id = $1", [run_id])
        edges = store.query(
            "SELECT edge_id, kind, tier FROM all_edges WHERE run_id = $1 OR src IN (SELECT session_id FROM "
            "run_sessions WHERE run_id = $1) OR dst IN (SELECT session_id FROM run_sessions WHERE run_id = $1)",
            [run_id],
        )
    return out, set(members["session_id"]), edges


def test_every_session_and_edge_is_drawn_and_the_legend_names_them(run_page, tmp_path):
    page, members, edges = run_page
    dom = Elements(dump_dom(tmp_path, page))
    bars = [a for a in dom.find("rect", "bar") if "external" not in a["class"].split()]
    assert sorted(a["data-session"] for a in bars) == sorted(members) and len(bars) == 6
    assert all(float(a["width"]) > 0 for a in bars)
    drawn = dom.find("g", "edge")
    assert sorted(a["data-edge"] for a in drawn) == sorted(edges["edge_id"]) and len(drawn) == 7
    lines = [a for a in dom.find("path", "line")]
    assert len(lines) == 7 and all(a["d"].startswith("M") for a in lines)
    kinds = {a["data-legend-kind"] for a in dom.find("li", attr="data-legend-kind")}
    tiers = {a["data-legend-tier"] for a in dom.find("li", attr="data-legend-tier")}
    assert set(edges["kind"]) <= kinds and set(edges["tier"]) <= tiers
    assert {"verified", "heuristic", "reported"} <= tiers
    # one visual weight per tier: the drawn edge carries its tier's class, as the legend sample does
    for a in drawn:
        assert f"t-{a['data-tier']}" in a["class"].split() and f"k-{a['data-kind']}" in a["class"].split()
    rows = dom.find("tr", attr="data-session")
    assert sorted(a["data-session"] for a in rows) == sorted(members)
    assert len(dom.find("tr", attr="data-artifact")) == 2
    # the screenshot: a picture of the same page, kept for the record
    shot = tmp_path / "run.png"
    chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1400,900", "--hide-scrollbars")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    shutil.copyfile(shot, SCREENSHOT_COPY)


def test_nothing_is_fetched(run_page, tmp_path):
    page, _, _ = run_page
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    dom_text = dump_dom(tmp_path, page)
    dom = Elements(dom_text)
    assert dom.find("html")[0]["data-sg-resources"] == "0"  # performance.getEntriesByType("resource")
    for tag, attrs in dom.all:
        for key in ("src", "href", "xlink:href", "srcset", "poster", "data", "action"):
            value = attrs.get(key, "")
            assert not value or value.startswith("#"), (tag, key, value)
    assert not re.search(r"url\(\s*['\"]?(?!#)", dom_text)
    assert "http://" not in dom_text and "https://" not in dom_text


def test_the_address_sorts_the_table_and_selects_an_edge(run_page, store_db, tmp_path):
    page, members, edges = run_page
    with Store(store_db, read_only=True) as store:
        heuristic = store.query(
            "SELECT edge_id, evidence FROM all_edges WHERE kind = 'spawn' AND tier = 'heuristic' AND src = $1", [ORBIT]
        ).row(0)
        n_root_edges = store.query("SELECT count(*) FROM all_edges WHERE $1 IN (src, dst)", [ORBIT]).item()
    dom = Elements(dump_dom(tmp_path, page, f"#sort=usd:desc&select=edge:{quote(heuristic[0], safe='')}"))
    usd = [float(a["data-v"]) for a in dom.find("td") if a.get("data-key") == "usd"]
    assert len(usd) == 6 and usd == sorted(usd, reverse=True) and usd[0] > usd[-1]
    header = next(a for a in dom.find("th") if a.get("data-key") == "usd")
    assert header["aria-sort"] == "descending"
    details = dom.text_of("details")
    assert details.startswith("Edge: spawn [heuristic]")
    for want in (heuristic[0], heuristic[1], "tier heuristic", "lag 0 ms", ORBIT, f"{ORBIT}/ab91b662353a9c460"):
        assert want in details, want
    selected = [a["data-edge"] for a in dom.find("g", "on")]
    assert selected == [heuristic[0]]

    dom = Elements(dump_dom(tmp_path, page, "#sort=start:asc&select=session:" + quote(ORBIT, safe="")))
    starts = [float(a["data-v"]) for a in dom.find("td") if a.get("data-key") == "start"]
    assert starts == sorted(starts) and len(starts) == 6
    details = dom.text_of("details")
    assert details.startswith("Session") and "role lead (heuristic)" in details
    assert f"Edges ({n_root_edges})" in details and n_root_edges == 5  # 3 spawns, 1 launch, 1 artifact read


def test_hostile_values_stay_text_in_the_browser(tmp_path):
    db = tmp_path / "hostile.duckdb"
    run = hostile_store(db)
    with Store(db, read_only=True) as store:
        page = tmp_path / "hostile.html"
        page.write_text(html.run_page(store, run), encoding="utf-8")
    dom_text = dump_dom(tmp_path, page, "#select=artifact:" + quote(HOSTILE_PATH, safe=""))
    dom = Elements(dom_text)
    assert not dom.find("img") and not [a for _, a in dom.all if "onerror" in a or "onload" in a]
    assert len(dom.find("script")) == 2
    assert sorted(a["data-session"] for a in dom.find("rect", "bar")) == sorted([HOSTILE_ROOT, HOSTILE_CHILD])
    assert dom.text_of("details").startswith(f"Artifact path {HOSTILE_PATH} versions 1")


def test_a_thousand_session_run_is_drawn_whole(tmp_path):
    """The benchmark's synthetic run: every lane and edge drawn; the table keeps only a window of rows
    in the DOM, in sorted order."""
    spec = importlib.util.spec_from_file_location(
        "html_render", Path(__file__).parents[1] / "benchmarks" / "html_render.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    db = tmp_path / "big.duckdb"
    bench.synthetic_store(db, 1000)
    with Store(db, read_only=True) as store:
        n_edges = store.query("SELECT count(*) FROM all_edges WHERE run_id = $1", [bench.RUN]).item()
        text = html.run_page(store, bench.RUN)
    page = tmp_path / "big.html"
    page.write_text(text, encoding="utf-8")
    data = re.search(r'id="sg-data">(.*?)</script>', text, re.S).group(1)
    usd = sorted((s["usd"] for s in json.loads(data)["sessions"]), reverse=True)
    dom = Elements(dump_dom(tmp_path, page, "#sort=usd:desc"))
    assert len(dom.find("rect", "bar")) == 1000 and len(dom.find("g", "edge")) == n_edges > 1000
    rows = [float(a["data-v"]) for a in dom.find("td") if a.get("data-key") == "usd"]
    assert 20 <= len(rows) < 200 and rows == pytest.approx(usd[: len(rows)])
    assert dom.find("table")[0]["aria-rowcount"] == "1001"
