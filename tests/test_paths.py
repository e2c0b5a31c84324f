"""One path form (issue 26): ingest/paths.py's canonical form, the frames boundary that applies
it, and the paths scenario end to end: a launch through a workspace script that shares nothing
else with its children, and a family written on Windows, under every spelling of its paths."""

from __future__ import annotations

import importlib.util
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.paths import canonical, canonical_frames, normalise
from sessiongraph.ingest.shell_facts import shell_facts
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES
from tests.test_ocp import _assert_clean, validate

SCENARIO = SAMPLES / "scenarios/paths"
LOGGED = "/home/dev/projects"
EXPECTED = json.loads((SCENARIO / "expected.json").read_text())
N = EXPECTED["sessions"]
WINDOWS_FAMILY = {"W", "X1", "X2", "XD"}


def _generator():
    spec = importlib.util.spec_from_file_location("paths_generate", SCENARIO / "_generate.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _generator()

# Every spelling ingest/paths.py makes one: (as written, canonical).
SAME = [
    ("C:\\Users\\me\\proj", "C:/Users/me/proj"),
    ("C:/Users/me/proj", "C:/Users/me/proj"),
    ("c:\\Users\\me\\proj", "C:/Users/me/proj"),
    ("c:/Users/me/proj/", "C:/Users/me/proj"),
    ("C:\\Users\\me\\proj\\", "C:/Users/me/proj"),
    ("\\\\?\\C:\\Users\\me\\proj", "C:/Users/me/proj"),
    ("//?/C:/Users/me/proj", "C:/Users/me/proj"),
    ("C:\\Users\\me\\.\\other\\..\\proj", "C:/Users/me/proj"),
    ("/mnt/c/Users/me/proj", "C:/Users/me/proj"),
    ("/mnt/c/Users/me/proj/", "C:/Users/me/proj"),
    ("/cygdrive/c/Users/me/proj", "C:/Users/me/proj"),
    ("C:", "C:/"),
    ("C:\\", "C:/"),
    ("\\\\srv\\share\\x\\..\\y", "//srv/share/y"),
    ("\\\\?\\UNC\\srv\\share\\y", "//srv/share/y"),
    ("/home/u/p/", "/home/u/p"),
    ("/home/u/./a/../p", "/home/u/p"),
    ("//home/u/p", "/home/u/p"),
    ("/..", "/"),
    ("/", "/"),
    ("~", "~"),
    ("~/x/../y/", "~/y"),
]


@pytest.mark.parametrize(("written", "want"), SAME)
def test_every_spelling_has_one_canonical_form(written, want):
    assert canonical(written) == want
    assert canonical(want, windows=want.startswith("//")) == want  # twice is once


def test_git_bash_drives_only_in_a_windows_context():
    # /c/x is Git Bash's drive C only where the log is known to be Windows; elsewhere a POSIX path
    assert canonical("/c/Users/me/proj") == "/c/Users/me/proj"
    assert canonical("/c/Users/me/proj", windows=True) == "C:/Users/me/proj"
    assert canonical("/c/Users/me/proj/a.py", "C:\\Users\\me") == "C:/Users/me/proj/a.py"
    assert canonical("/c/x", "/mnt/c/Users/me") == "C:/x"  # a WSL cwd names a drive too
    # a rooted path with no drive stays rooted (Git Bash's /tmp, /dev/null)
    assert canonical("/dev/null", "C:\\Users\\me") == "/dev/null"


def test_relative_paths_and_homes():
    assert normalise("src/a.py", "/home/u/p/") == "/home/u/p/src/a.py"
    assert normalise("..\\notes\\plan.md", "C:\\Users\\me\\proj\\sub") == "C:/Users/me/proj/notes/plan.md"
    assert normalise("src/a.py", "~/proj") == "~/proj/src/a.py"
    assert normalise("~/a.py", "/home/u/p") == "~/a.py"  # a home is never joined to a cwd
    assert normalise("~bob/a.py", "/home/u/p") == "~bob/a.py"
    assert normalise("~/a.py", "/home/u/p") != normalise("/home/u/a.py", "/home/u/p")  # nor expanded
    for bad in ("", "a\x00b", None, 3):
        assert canonical(bad, "/x") is None
    assert normalise("a.py", None) is None and normalise("a.py", "rel/dir") is None


SEGMENT = st.sampled_from(["a", "b", ".", "..", "Users", "me"])
PREFIX = st.sampled_from(["C:\\", "c:/", "\\\\?\\C:\\", "/mnt/c/", "/", "/c/", "~/", "", "\\\\srv\\share\\"])


def test_a_dot_before_an_msys_drive_is_still_the_drive():
    """Found by the property below: `/./a` in a Windows context is Git Bash's drive A, as `/a` is."""
    assert canonical("/./a", windows=True) == canonical("/a", windows=True) == "A:/"
    assert canonical("/./c/x/../y", windows=True) == "C:/y"
    assert canonical("/./a") == "/a"


@given(prefix=PREFIX, segs=st.lists(SEGMENT, max_size=6), sep=st.sampled_from(["/", "\\"]), win=st.booleans())
def test_canonical_is_idempotent(prefix, segs, sep, win):
    got = canonical(prefix + sep.join(segs), "C:\\w" if win else "/w")
    if got is not None:
        assert canonical(got, None, windows=win or got.startswith("//")) == got
        assert "\\" not in got or not win
        assert got in ("/", "~") or got.endswith(":/") or not got.endswith("/")


def test_the_frames_boundary_makes_every_path_column_canonical_and_keeps_the_written_cwd():
    t = datetime(2026, 3, 4, 10, tzinfo=UTC)
    frames = Frames.from_rows(
        sessions=[{"session_id": "claude-code:w", "harness": "claude-code", "cwd": "C:\\Users\\me\\proj\\"}],
        calls=[
            {
                "session_id": "claude-code:w",
                "call_id": "k",
                "kind": "shell",
                "tool": "Bash",
                "cwd": "c:\\Users\\me\\proj",
                "command": "cd /c/Users/me/proj/sub && codex exec hi > out.txt",
                "paths": ["/c/Users/me/proj/x.py"],
                "started_at": t,
                "source_path": "f",
                "line": 1,
            }
        ],
        file_events=[{"session_id": "claude-code:w", "path": "/c/Users/me/proj/x.py", "op": "read", "ts": t}],
    )
    out = shell_facts(frames)
    assert out.rows("sessions")[0]["cwd"] == "C:/Users/me/proj"
    assert out.rows("sessions")[0]["cwd_as_written"] == "C:\\Users\\me\\proj\\"
    assert out.rows("calls")[0]["cwd"] == "C:/Users/me/proj"
    assert out.rows("calls")[0]["paths"] == ["C:/Users/me/proj/x.py"]  # /c/ in a Windows file
    assert [r["cwd"] for r in out.rows("launches")] == ["C:/Users/me/proj/sub"]
    assert sorted(r["path"] for r in out.rows("file_events")) == [
        "C:/Users/me/proj/sub/out.txt",
        "C:/Users/me/proj/x.py",
    ]
    assert canonical_frames(out).rows("sessions") == out.rows("sessions")  # twice is once
    # A file whose only cwds are /c/...: a POSIX machine's /c folder, kept.
    posix = Frames.from_rows(sessions=[{"session_id": "codex:p", "harness": "codex", "cwd": "/c/work/"}])
    assert canonical_frames(posix).rows("sessions")[0]["cwd"] == "/c/work"


# -- the scenario ------------------------------------------------------------------------------


def copy_relay(dst: Path) -> Path:
    """The relay family with its logs pointing at ``dst/projects`` (where its script now is)."""
    shutil.copytree(SCENARIO / "projects", dst / "projects")
    for sub in ("claude-code", "codex"):
        for src in (SCENARIO / sub).rglob("*.jsonl"):
            text = src.read_text()
            if LOGGED in text:
                out = dst / "logs" / src.relative_to(SCENARIO)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(text.replace(LOGGED, str(dst / "projects")))
    return dst / "logs"


def write_windows(dst: Path, spelled: dict[str, str]) -> Path:
    """The Windows family written again with each role's paths in its own spelling."""
    GEN.windows(dst, spelled)
    return dst


def _edges(db: Path) -> tuple[set, pl.DataFrame, dict]:
    with Store(db, read_only=True) as s:
        got = s.query("SELECT * FROM all_edges")
        counts = s.counts("SELECT pass || '.' || code, sum(count) FROM inference_diagnostics GROUP BY ALL")
    names = {v: k for k, v in N.items()}
    pairs = {(r["kind"], names[r["src"]], names[r["dst"]], r["tier"]) for r in got.iter_rows(named=True)}
    return pairs, got, counts


def _want(family: set[str]) -> set:
    return {(e["kind"], e["src"], e["dst"], e["tier"]) for e in EXPECTED["edges"] if e["src"] in family}


def _check_rows(got: pl.DataFrame, family: set[str], projects: str | None = None) -> None:
    for e in EXPECTED["edges"]:
        if e["src"] not in family:
            continue
        row = got.filter((pl.col("src") == N[e["src"]]) & (pl.col("dst") == N[e["dst"]])).row(0, named=True)
        for key in ("src_call_id", "dst_call_id", "path", "version", "src_tier", "dst_tier"):
            if key in e:
                assert row[key] == e[key], (e["dst"], key)
        if "script" in e:
            assert "through the workspace script " + e["script"].replace(LOGGED, projects or LOGGED) in row["evidence"]


def test_a_launch_through_a_script_that_moves_to_the_workspace_root(tmp_path):
    """tools/review.sh runs `cd "$(dirname "$0")/.."` then `codex exec`: the launch's own cwd is
    unknown, its effective cwd is the call's, and the pass pairs it (before, a null cwd matched
    nothing: 3 unmatched launches)."""
    logs = copy_relay(tmp_path)
    ingest([str(logs)], db=str(tmp_path / "s.duckdb"), workers=1)
    pairs, got, counts = _edges(tmp_path / "s.duckdb")
    relay = {"L", "R1", "R2", "R3", "RD"}
    assert pairs == _want(relay)
    _check_rows(got, relay, str(tmp_path / "projects"))
    assert counts == {"launch.ambiguous_launch": 1, "launch.ambiguous_launcher": 2}
    with Store(tmp_path / "s.duckdb", read_only=True) as s:
        cwds = s.query("SELECT DISTINCT cwd FROM launches").rows()
    assert cwds == [(str(tmp_path / "projects/relay"),)]


def _spellings() -> list[tuple[str, dict[str, str]]]:
    """Every spelling in every role: all files one spelling, and each file another one."""
    names = list(GEN.SPELLINGS)
    cwd = [n for n in names if n != "gitbash"]  # a cwd of /c/... alone is a POSIX folder
    shell = list(GEN.SHELL_SPELLINGS)
    out = [(f"all-{s}", dict.fromkeys(("W", "W-read", "X1", "X2", "XD"), s)) for s in cwd]
    for i, name in enumerate(names):
        w = cwd[i % len(cwd)]
        roles = {
            "W": w,
            "X1": cwd[(i + 1) % len(cwd)],
            "X2": cwd[(i + 2) % len(cwd)],
            "XD": cwd[(i + 3) % len(cwd)],
            "W-read": name,
            "W-cd": shell[i % len(shell)],
            "W-C": shell[(i + 1) % len(shell)],
        }
        out.append((f"mixed-{name}", roles))
    return out


@pytest.mark.parametrize(("label", "spelled"), _spellings(), ids=[s[0] for s in _spellings()])
def test_the_windows_family_gives_the_same_edges_under_every_spelling(tmp_path, label, spelled):
    logs = write_windows(tmp_path / "logs", spelled)
    ingest([str(logs)], db=str(tmp_path / "s.duckdb"), workers=1)
    pairs, got, counts = _edges(tmp_path / "s.duckdb")
    assert pairs == _want(WINDOWS_FAMILY), label
    _check_rows(got, WINDOWS_FAMILY)
    assert counts == {}, label
    with Store(tmp_path / "s.duckdb", read_only=True) as s:
        cwds = dict(s.query("SELECT session_id, cwd FROM sessions").rows())
    assert cwds[N["W"]] == cwds[N["X1"]] == "C:/Users/me/proj"
    assert cwds[N["X2"]] == "C:/Users/me/proj/sub" and cwds[N["XD"]] == "C:/Users/me/other"


def test_the_committed_windows_files_are_the_generators_defaults(tmp_path):
    write_windows(tmp_path, {})
    for p in tmp_path.rglob("*.jsonl"):
        assert p.read_text() == (SCENARIO / p.relative_to(tmp_path)).read_text(), p.name


def test_the_scenario_in_place_and_its_ocp_export(tmp_path):
    """Ingested where it lies the script is not followed (its workspace is not on this machine:
    counted, never reported missing), the Windows family stands, and
    every run exports clean under the reference checker."""
    if Path(LOGGED).exists():
        pytest.skip(f"{LOGGED} exists here")
    db = tmp_path / "s.duckdb"
    ingest([str(SCENARIO)], db=str(db), workers=1)
    pairs, _got, _counts = _edges(db)
    assert pairs == _want(WINDOWS_FAMILY)
    with Store(db, read_only=True) as s:
        got = s.query(
            "SELECT detail, sum(coalesce(count, 1))::INT FROM diagnostics WHERE code = 'script_not_followed' GROUP BY 1"
        ).rows()
        assert got == [("outside_workspace", 2)]
    summary = export_ocp(tmp_path / "ocp", db=str(db))
    assert summary.documents >= 4
    _assert_clean(validate(summary.files), summary.documents)


def test_the_relay_family_exports_clean(tmp_path):
    logs = copy_relay(tmp_path)
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    summary = export_ocp(tmp_path / "ocp", db=str(db))
    _assert_clean(validate(summary.files), summary.documents)
