"""The distribution: `python -m build` makes an sdist and a wheel; the wheel installs only `sessiongraph`,
works beside packages that own the generic names `inference`, `ingest` and `sql`, and carries its data.

Marked ``wheel`` (deselect with ``-m 'not wheel'``); ``make test`` runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from sessiongraph.ingest import registry
from tests.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.wheel

GENERIC = ("inference", "ingest", "sql")
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "demo", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def run(*cmd, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done


def package_files() -> set[str]:
    """Every file the wheel must hold under sessiongraph/, from the source folders pyproject.toml maps:
    modules and data, not the notes kept beside them (``*.md``)."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    out = set()
    for package, folder in mapping.items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".md"):
                out.add("/".join((*package.split("."), *path.relative_to(ROOT / folder).parts)))
    return out


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist, then the wheel built from the sdist, from a copy of the source (the checkout stays untouched).
    Without build isolation: the test extra brings build and setuptools, so nothing is downloaded."""
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=SKIP)
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp / "out", src)
    return tmp / "out"


def test_wheel_holds_only_sessiongraph_and_its_data(dist):
    (wheel,) = dist.glob("sessiongraph-*.whl")
    names = {n for n in zipfile.ZipFile(wheel).namelist() if not n.endswith("/")}
    tops = {n.split("/")[0] for n in names}
    info = next(t for t in tops if t.endswith(".dist-info"))
    assert tops == {"sessiongraph", info}
    # Every module, SQL file, HTML asset and data file of the source, and nothing else.
    assert {n for n in names if not n.startswith(info)} == package_files()
    assert {
        "sessiongraph/sql/schema.sql",
        "sessiongraph/views/assets/run.html",
        "sessiongraph/ingest/frames.py",
    } <= names
    assert f"{info}/licenses/LICENSE" in names


def test_wheel_metadata_is_complete(dist):
    (wheel,) = dist.glob("sessiongraph-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        info = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(info).decode())
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["Requires-Python"] == ">=3.11"
    classifiers = meta.get_all("Classifier")
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert any(c.startswith("Operating System ::") for c in classifiers)
    assert meta["Author"] and meta["Keywords"] and meta["Summary"]
    assert meta["Description-Content-Type"] == "text/markdown" and "sessiongraph" in meta.get_payload()
    assert {r.split(">=")[0] for r in meta.get_all("Requires-Dist") if "extra ==" not in r} >= {"polars", "duckdb"}


def test_sdist_is_the_whole_source(dist):
    (sdist,) = dist.glob("sessiongraph-*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for wanted in ("pyproject.toml", "LICENSE", "Makefile", "ingest/frames.py", "sql/schema.sql", "tests/conftest.py"):
        assert wanted in names
    assert any(n.startswith("sample_logs/") for n in names)


def test_installed_wheel_runs_beside_generic_top_level_modules(dist, tmp_path):
    # A stand-in distribution owning the generic top-level names that sessiongraph must not touch.
    standin = tmp_path / "standin"
    for name in GENERIC:
        (standin / name).mkdir(parents=True)
        (standin / name / "__init__.py").write_text(f"OWNER = 'standin'\nNAME = {name!r}\n")
    (standin / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "standin"\nversion = "1.0"\n'
        f"[tool.setuptools]\npackages = {list(GENERIC)}\n"
    )
    run(sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", tmp_path / "standin-dist", standin)

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())

    def pip_install(wheel: Path) -> None:
        # The project's pip installs into the fresh venv (--python): no pip in it, nothing downloaded.
        run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel)

    pip_install(next((tmp_path / "standin-dist").glob("*.whl")))
    # Third-party dependencies come from the project venv, not the index: a path line in a .pth file puts
    # its site-packages at the END of sys.path. Only the fresh venv's own site dir has its .pth files run,
    # so the project's editable-install hook (a .pth in the project venv) never activates here, and
    # sessiongraph can only come from the wheel (checked below).
    project_site = sysconfig.get_paths()["purelib"]
    (site / "zz_project_deps.pth").write_text(project_site + "\n")
    before = {p.name: p for p in site.iterdir()}
    stand_in_bytes = {n: (site / n / "__init__.py").read_bytes() for n in GENERIC}

    (wheel,) = dist.glob("sessiongraph-*.whl")
    pip_install(wheel)
    added = {p.name for p in site.iterdir()} - set(before)
    assert {n for n in added if n != "__pycache__"} == {
        "sessiongraph",
        f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info",
    }
    assert {n: (site / n / "__init__.py").read_bytes() for n in GENERIC} == stand_in_bytes

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SESSIONGRAPH_DB")}
    env["HOME"] = str(tmp_path / "home")  # no user data dir of this machine
    probe = (
        "import importlib.metadata as md, json, sys, inference, ingest, sql, sessiongraph.ingest.frames, "
        "sessiongraph.inference, sessiongraph.sql\n"
        "print(json.dumps({'standin': [m.OWNER for m in (inference, ingest, sql)],"
        " 'files': [sessiongraph.__file__, sessiongraph.ingest.frames.__file__, sessiongraph.inference.__file__],"
        " 'dist': str(md.distribution('sessiongraph').locate_file('')),"
        " 'hooks': [type(f).__module__ for f in sys.meta_path if 'editable' in type(f).__module__],"
        " 'editable': [m for m in sys.modules if 'editable' in m]}))"
    )
    seen = json.loads(run(python, "-c", probe, cwd=tmp_path, env=env).stdout)
    assert seen["standin"] == ["standin"] * 3
    assert all(Path(f).is_relative_to(site / "sessiongraph") for f in seen["files"]), seen["files"]
    assert Path(seen["dist"]) == site
    assert seen["hooks"] == [] and seen["editable"] == []

    cli = venv / "bin" / "sessiongraph"
    db = tmp_path / "store.duckdb"
    summary = json.loads(
        run(cli, "ingest", SAMPLES, "--db", db, "--json", "--workers", "1", cwd=tmp_path, env=env).stdout
    )
    assert summary["files_read"] > 0 and summary["runs"] > 0, summary
    assert set(registry.names()) <= set(summary["sessions_by_harness"])  # every adapter is in the wheel
    run(cli, "export", "parquet", "--out", tmp_path / "ds", "--db", db, cwd=tmp_path, env=env)
    assert list((tmp_path / "ds" / "run_features").rglob("*.parquet"))
    # The packaged SQL (schema, views) built the store; the packaged price table and HTML assets render.
    run(cli, "report", "--format", "html", "--out", tmp_path / "report.html", "--db", db, cwd=tmp_path, env=env)
    assert "<svg" in (tmp_path / "report.html").read_text()
