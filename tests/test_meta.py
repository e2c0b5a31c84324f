"""Gates that keep the project complete as it grows: every adapter registered in
``ingest/registry.py`` has sample logs it detects, a test module and a row in the adapters table
of ``ingest/FORMATS.md``; every pass of ``inference._passes()`` has a golden file (checked by
``tests/test_inference_samples.py``). Each check is also run on a planted violation, so a check
that could never fail shows up here.
"""

from __future__ import annotations

import functools
import re
import shutil
from pathlib import Path

import pytest

from sessiongraph.inference import _passes
from sessiongraph.ingest import discover, registry
from tests.conftest import ROOT, SAMPLES

FORMATS = ROOT / "ingest/FORMATS.md"
GOLDEN = ROOT / "tests/golden"
# An adapter's tests are tests/test_<name>.py (dashes as underscores) unless named here.
TEST_MODULES = {
    "ocp": "test_ocp_import.py",  # test_ocp.py is the OCP export
    "claude-code": "test_claude_code_samples.py",
    "gemini-cli": "test_gemini.py",
}


@functools.cache
def _detected() -> frozenset[str]:
    """The harnesses some file under sample_logs/ is classified as."""
    return frozenset(f.harness for f in discover.discover([SAMPLES]) if f.harness)


def adapter_gaps(name: str, *, detected: frozenset[str], tests: Path, formats: str) -> list[str]:
    """What adapter ``name`` lacks, given the harnesses the samples hold, the tests folder and
    the text of FORMATS.md."""
    gaps = []
    if name not in detected:
        gaps.append(f"{name}: no file under sample_logs/ is detected as {name}")
    module = TEST_MODULES.get(name, f"test_{name.replace('-', '_')}.py")
    if not (tests / module).is_file():
        gaps.append(f"{name}: no tests/{module} (or name it in TEST_MODULES)")
    table = formats.split("## Adapters", 1)[-1].split("\n## ", 1)[0] if "## Adapters" in formats else ""
    if not re.search(rf"^\| `{re.escape(name)}` \|", table, re.M):
        gaps.append(f"{name}: no row in the adapters table of ingest/FORMATS.md")
    return gaps


def missing_goldens(pass_names: list[str], folder: Path) -> list[str]:
    return [n for n in pass_names if not (folder / f"{n}.json").is_file()]


@pytest.mark.parametrize("name", list(registry.ADAPTERS))
def test_every_adapter_has_samples_a_test_module_and_a_formats_row(name):
    assert adapter_gaps(name, detected=_detected(), tests=ROOT / "tests", formats=FORMATS.read_text()) == []


def test_every_pass_has_a_golden_file():
    assert missing_goldens([p.__name__ for p in _passes()], GOLDEN) == []


# -- the checks fail on planted violations ---------------------------------------------------


def test_a_planted_registry_entry_fails_every_adapter_check(monkeypatch):
    monkeypatch.setitem(registry.ADAPTERS, "fake-harness", "sessiongraph.ingest.fake_harness")
    gaps = [
        gap
        for name in registry.ADAPTERS
        for gap in adapter_gaps(name, detected=_detected(), tests=ROOT / "tests", formats=FORMATS.read_text())
    ]
    assert [g.split(":")[0] for g in gaps] == ["fake-harness"] * 3


@pytest.mark.parametrize("planted", ["samples", "test module", "formats row"])
def test_each_adapter_check_fails_alone(tmp_path, planted):
    """A copy of the real tests folder and FORMATS.md with one thing taken away from one
    adapter: only that gap is reported."""
    name = "opencode"
    tests = tmp_path / "tests"
    tests.mkdir()
    for module in (ROOT / "tests").glob("test_*.py"):
        shutil.copy(module, tests)
    formats = FORMATS.read_text()
    detected = _detected()
    if planted == "samples":
        detected = detected - {name}
    elif planted == "test module":
        (tests / "test_opencode.py").unlink()
    else:
        formats = re.sub(r"^\| `opencode` \|.*\n", "", formats, flags=re.M)
    gaps = adapter_gaps(name, detected=detected, tests=tests, formats=formats)
    assert len(gaps) == 1
    assert {"samples": "sample_logs", "test module": "tests/", "formats row": "FORMATS.md"}[planted] in gaps[0]


def test_a_planted_pass_without_a_golden_file_fails(tmp_path):
    for golden in GOLDEN.glob("*.json"):
        shutil.copy(golden, tmp_path)
    names = [p.__name__ for p in _passes()]
    assert missing_goldens(names, tmp_path) == []
    assert missing_goldens([*names, "fake_pass"], tmp_path) == ["fake_pass"]
    (tmp_path / "runs.json").unlink()
    assert missing_goldens(names, tmp_path) == ["runs"]
