"""The layers of ARCHITECTURE.md point one way, and every module has exactly one name.

Read from the source with ``ast`` (nothing is imported), so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first; a module may import from its own layer and the layers below it, never above.
# A module of the ``sessiongraph/`` folder not named here is an output (layer 3).
LAYERS = ["ingest", "inference", "core", "outputs", "cli"]
CORE = {
    "sessiongraph",
    "sessiongraph.errors",
    "sessiongraph.pricing",
    "sessiongraph.costs",
    "sessiongraph.store",
    "sessiongraph.pipeline",
}
CLI = {"sessiongraph.cli", "sessiongraph.__main__"}


def package_dirs() -> dict[str, Path]:
    """Installed package name -> its folder, as pyproject.toml maps them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: ROOT / folder for name, folder in config["package-dir"].items()}


def modules() -> dict[str, Path]:
    """Every Python module of the library by its installed name."""
    found: dict[str, Path] = {}
    for package, folder in package_dirs().items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((package, *parts))
            # sessiongraph/ holds only its own modules; the mapped folders are walked on their own.
            found.setdefault(name, path)
    return found


def layer(module: str) -> str:
    if module == "sessiongraph.ingest" or module.startswith("sessiongraph.ingest."):
        return "ingest"
    if module == "sessiongraph.inference" or module.startswith("sessiongraph.inference."):
        return "inference"
    if module in CORE or module.startswith("sessiongraph.engines"):
        return "core"
    if module in CLI:
        return "cli"
    return "outputs"


def imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The first-party modules ``path`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else base)
    return {m for m in out if m.split(".")[0] in {"sessiongraph", "ingest", "inference", "sql"}}


def test_every_mapped_folder_is_walked():
    names = modules()
    for expected in ("sessiongraph.ingest.frames", "sessiongraph.inference.edges", "sessiongraph.store"):
        assert expected in names
    assert not any(name.startswith(("ingest", "inference", "sql")) for name in names)


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_point_down(module):
    known = set(modules())
    path = modules()[module]
    mine = LAYERS.index(layer(module))
    for target in sorted(imports(path, module, known)):
        assert target.startswith("sessiongraph"), (
            f"{path.relative_to(ROOT)} imports {target!r}: a second name for a sessiongraph module "
            f"(use sessiongraph.{target})"
        )
        theirs = LAYERS.index(layer(target))
        assert theirs <= mine, (
            f"{path.relative_to(ROOT)} ({layer(module)}) imports {target} ({layer(target)}), a layer above it; "
            "see ARCHITECTURE.md, Layers"
        )


def test_no_second_name_anywhere():
    """Tests and benchmarks import the library by its one name too: under pytest the repository root is on
    sys.path (for ``from tests.conftest import ...``), so ``import ingest`` would load a second copy of every
    module, with its own classes and registries."""
    known = set(modules())
    for path in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/**/*.py")]:
        bad = {m for m in imports(path, "tests.x", known) if not m.startswith("sessiongraph")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}; use sessiongraph.<name>"


@pytest.mark.parametrize("name", ["ingest", "inference.edges", "sql"])
def test_bare_folder_names_do_not_import(name):
    """The same at run time (tests/conftest.py): a name built from a string cannot slip through."""
    with pytest.raises(ImportError, match=f"import sessiongraph.{name.split('.')[0]}, not"):
        importlib.import_module(name)
    assert importlib.import_module(f"sessiongraph.{name}").__file__.startswith(str(ROOT))


def test_checker_sees_an_upward_import(tmp_path):
    """The walk itself: a lazy import inside a function, and a relative one, are both found."""
    src = tmp_path / "adapter.py"
    src.write_text("def parse():\n    from sessiongraph.store import Store\n    from . import frames\n")
    known = {"sessiongraph.store", "sessiongraph.ingest.frames"}
    found = imports(src, "sessiongraph.ingest.adapter", known)
    assert found == {"sessiongraph.store", "sessiongraph.ingest.frames"}
    assert LAYERS.index(layer("sessiongraph.store")) > LAYERS.index(layer("sessiongraph.ingest.adapter"))
