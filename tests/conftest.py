from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
from collections import Counter
from datetime import UTC, datetime
from importlib.abc import MetaPathFinder
from importlib.machinery import PathFinder
from pathlib import Path

import orjson
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
CORPUS = ROOT.parent / "shared" / "corpus"
MARKER = "SGMARK7f3a"  # planted into log text by plant_logs; must never come out under metadata_only
MAPPED = ("ingest", "inference", "sql")  # folders that install as sessiongraph.<name>


class OneName(MetaPathFinder):
    """Under pytest the repository root is on sys.path (for ``from tests.conftest import ...``), so the
    folders ``ingest/``, ``inference/`` and ``sql/`` would also import under their bare names: a second
    copy of every module, and code that works here but not from the wheel. Refuse those names."""

    def find_spec(self, name, path=None, target=None):
        if path is None and name in MAPPED:
            spec = PathFinder.find_spec(name)
            if spec is not None and spec.origin and Path(spec.origin).is_relative_to(ROOT):
                raise ImportError(f"import sessiongraph.{name}, not {name}: {name}/ installs as sessiongraph.{name}")
        return None


if not any(isinstance(f, OneName) for f in sys.meta_path):
    sys.meta_path.insert(0, OneName())


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real logs; tests that need it skip where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-log corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def copy_tree(tmp_path: Path):
    """Copy a file or folder into tmp_path (shared/ is read-only in CI)."""

    def copy(src: Path, name: str | None = None) -> Path:
        dst = tmp_path / (name or src.name)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        return dst

    return copy


# Small helpers the adapter tests share (imported from tests.conftest).


def ts(text: str) -> datetime:
    """An ISO timestamp from a test's expectations, as the aware UTC datetime frames hold."""
    return datetime.fromisoformat(text).astimezone(UTC)


def sha(text: str) -> str:
    """sha256 of a prompt, computed here independently of ingest.jsonl.text_hash."""
    return hashlib.sha256(text.strip().encode()).hexdigest()


def head(path: Path, n: int = 65536) -> bytes:
    """The first bytes of a file, as discovery hands them to ``detect``."""
    with open(path, "rb") as fh:
        return fh.read(n)


def kinds(frames) -> dict[str, int]:
    """Calls per kind."""
    return dict(frames.calls.group_by("kind").len().sort("kind").iter_rows())


# Planting a marker into every text a log holds: the privacy tests look for it in every output.

# Keys whose string values are log text in some harness's samples: prompts and completions, tool
# inputs and outputs, file bodies and patches, titles and summaries written from them.
TEXT_KEYS = frozenset(
    "text content prompt stdout stderr output message input thinking new_string old_string newString oldString "
    "newText oldText aggregated_output last_agent_message summary description planContent plan originalFile "
    "originalFileContents lastPrompt aiTitle title display activeForm lines query results script toolUseResult "
    "error errorMessage objective subject assignment context intent previousTitle systemPrompt task value where "
    "patchText diff acceptance_criteria note step user_input think reasoningText".split()
)


def plant(value, key=None, marker: str = MARKER):
    """``value`` with ``marker`` appended to every text in it; a shell command gets it as a comment
    (so no path or launch is made of it), a JSON-encoded ``arguments`` string inside its JSON."""
    if isinstance(value, dict):
        return {k: plant(v, k, marker) for k, v in value.items()}
    if isinstance(value, list):
        if key in ("command", "cmd") and value and isinstance(value[-1], str):  # argv: the script is last
            return [*value[:-1], plant(value[-1], key, marker)]
        return [plant(v, key, marker) for v in value]
    if isinstance(value, str):
        if key == "arguments":
            try:
                return orjson.dumps(plant(orjson.loads(value), None, marker)).decode()
            except orjson.JSONDecodeError:
                return value
        if key in ("command", "cmd"):
            return value + f" # {marker}"
        if key in TEXT_KEYS:
            return value + f" {marker}"
    return value


def plant_logs(root: Path, marker: str = MARKER) -> Counter:
    """Plant ``marker`` into every log under ``root`` (JSONL, JSON, YAML, opencode.db, omp .patch files),
    in place; returns the plants per top-level folder. OCP documents are left alone: they hold no
    log text unless written under ``full``, and then only in ``ext`` (tests plant those themselves)."""
    planted: Counter = Counter()
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.name.endswith((".ocp.json", ".md", ".py")) or f.name.startswith(("expected", "_")):
            continue
        if f.suffix == ".jsonl":
            lines = []
            for raw in f.read_bytes().splitlines():
                try:
                    lines.append(orjson.dumps(plant(orjson.loads(raw), None, marker)))
                except orjson.JSONDecodeError:
                    lines.append(raw)
            f.write_bytes(b"\n".join(lines) + b"\n")
        elif f.suffix == ".json":
            try:
                f.write_bytes(orjson.dumps(plant(orjson.loads(f.read_bytes()), None, marker)))
            except orjson.JSONDecodeError:
                continue
        elif f.suffix == ".db":
            _plant_db(f, marker)
        elif f.suffix == ".patch":
            f.write_text(f.read_text() + f"# {marker}\n")
        elif f.suffix == ".yaml":  # Copilot CLI's workspace.yaml: its title and summary are log text
            try:
                data = plant(yaml.safe_load(f.read_text()), None, marker)
            except yaml.YAMLError:
                continue
            if isinstance(data, dict) and isinstance(data.get("name"), str):  # the session's title
                data["name"] += f" {marker}"
            f.write_text(yaml.safe_dump(data))
        else:
            continue
        n = f.read_bytes().count(marker.encode())
        planted[f.relative_to(root).parts[0] if f.parent != root else "."] += n
    return planted


def _plant_db(path: Path, marker: str) -> None:
    """opencode.db: message and part rows hold JSON, session titles and todos plain text;
    crush.db: message parts hold JSON, session titles plain text."""
    con = sqlite3.connect(path)
    try:
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages'").fetchone():
            rows = con.execute("SELECT id, parts FROM messages").fetchall()
            con.executemany(
                "UPDATE messages SET parts = ? WHERE id = ?",
                [(orjson.dumps(plant(orjson.loads(d), None, marker)).decode(), i) for i, d in rows],
            )
            con.execute("UPDATE sessions SET title = title || ?", [f" {marker}"])
            con.commit()
            return
        for table in ("message", "part"):
            rows = con.execute(f"SELECT id, data FROM {table}").fetchall()
            con.executemany(
                f"UPDATE {table} SET data = ? WHERE id = ?",
                [(orjson.dumps(plant(orjson.loads(d), None, marker)).decode(), i) for i, d in rows],
            )
        con.execute("UPDATE session SET title = title || ?", [f" {marker}"])
        con.execute("UPDATE todo SET content = content || ?", [f" {marker}"])
        con.commit()
    finally:
        con.close()
