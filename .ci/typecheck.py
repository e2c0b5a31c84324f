"""mypy over the library under its installed names (``make lint`` runs it; settings in pyproject.toml).

mypy cannot follow setuptools' package-dir mapping (``ingest/`` installs as ``sessiongraph.ingest``), nor
the editable install's import hook. So this lays the installed shape out as links under
``build/typecheck/sessiongraph/`` (one per entry of ``sessiongraph/``, one per mapped folder; folder links,
so a new module needs nothing here), runs mypy on it, and prints its messages with the repository's paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"


def main() -> int:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = TREE / "sessiongraph"
    shutil.rmtree(TREE, ignore_errors=True)
    top.mkdir(parents=True)
    for entry in (ROOT / mapping["sessiongraph"]).iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, top / entry.name)
    # Repository path of each installed prefix, the longest first so sessiongraph/ingest/ wins over sessiongraph/.
    back: list[tuple[str, str]] = []
    for name, folder in mapping.items():
        if name != "sessiongraph":
            os.symlink(ROOT / folder, TREE / name.replace(".", "/"))
        back.append((f"build/typecheck/{name.replace('.', '/')}/", f"{folder}/"))
    back.sort(key=lambda pair: -len(pair[0]))
    run = subprocess.run([sys.executable, "-m", "mypy", *sys.argv[1:]], cwd=ROOT, capture_output=True, text=True)
    for line in (run.stdout + run.stderr).splitlines():
        for installed, folder in back:
            if line.startswith(installed):
                line = folder + line[len(installed) :]
                break
        print(line)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
