"""The layers of ARCHITECTURE.md point one way, the output packages stand apart, no import cycle
exists, and every module has exactly one name.

Read from the source with ``ast`` (nothing is imported), so a lazy import inside a function counts
too, and so does a load by name: a string constant that names a first-party module (the registries
``ingest.registry.ADAPTERS``, ``engines.ENGINES`` and ``sessiongraph.COMMANDS`` hold such names;
``"module:attr"`` counts as ``module``).
"""

from __future__ import annotations

import ast
import functools
import importlib
import tomllib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first; a module may import from its own layer and the layers below it, never above.
LAYERS = ["ingest", "inference", "core", "outputs", "cli"]
CORE = {
    "sessiongraph.version",
    "sessiongraph.errors",
    "sessiongraph.pricing",
    "sessiongraph.costs",
    "sessiongraph.config",
    "sessiongraph.store",
    "sessiongraph.pipeline",
    "sessiongraph.watcher",
    "sessiongraph.work",
    "sessiongraph.gitlog",
}
# The package root holds the command functions (loaded by name from the outputs), so it sits on top.
CLI = {"sessiongraph", "sessiongraph.cli", "sessiongraph.__main__"}
# The outputs, each a package that imports none of the others.
OUTPUT_PACKAGES = ("sessiongraph.ocp", "sessiongraph.otlp", "sessiongraph.dataset", "sessiongraph.views")


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


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer(module: str) -> str:
    if within(module, "sessiongraph.ingest"):
        return "ingest"
    if within(module, "sessiongraph.inference"):
        return "inference"
    if module in CORE or any(
        within(module, p) for p in ("sessiongraph.engines", "sessiongraph.store", "sessiongraph.sql")
    ):
        return "core"
    if module in CLI:
        return "cli"
    if output_package(module):
        return "outputs"
    raise AssertionError(f"{module} is in no layer: a sink goes in one of {OUTPUT_PACKAGES} (ARCHITECTURE.md)")


def output_package(module: str) -> str | None:
    return next((p for p in OUTPUT_PACKAGES if within(module, p)), None)


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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = node.value.partition(":")[0]  # a load by name: "sessiongraph.engines.local"
            if "." in named and named in known and named != module:  # "sessiongraph" alone is the app's name
                out.add(named)
    return {m for m in out if m.split(".")[0] in {"sessiongraph", "ingest", "inference", "sql"}}


def graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the first-party modules it imports, lazily or by name included. Importing a
    submodule also runs its packages' ``__init__``; that is not counted (every package would be
    in a cycle with its own modules)."""
    known = set(found)
    return {m: imports(path, m, known) & known for m, path in found.items()}


def cycles(edges: dict[str, set[str]], exempt: list[set[str]]) -> list[list[str]]:
    """Import cycles left once the edges inside an ``exempt`` cycle are taken out, one per search."""
    edges = {m: {t for t in ts if not any({m, t} <= c for c in exempt)} for m, ts in edges.items()}
    found = []
    while True:
        try:
            TopologicalSorter(edges).prepare()
            return found
        except CycleError as exc:
            cycle = exc.args[1]  # [a, b, ..., a], consecutive modules joined by an import one way or the other
            found.append(cycle[:-1])
            a, b = cycle[0], cycle[1]  # break it, and look for the next one
            if b in edges[a]:
                edges[a].discard(b)
            else:
                edges[b].discard(a)


def output_crossings(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where one output package imports another."""
    return sorted(
        (m, t)
        for m, ts in edges.items()
        for t in ts
        if output_package(m) and output_package(t) and output_package(m) != output_package(t)
    )


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


def test_every_module_is_in_a_layer():
    for module in modules():
        layer(module)


@functools.cache
def repo_graph() -> dict[str, frozenset[str]]:
    return {m: frozenset(ts) for m, ts in graph(modules()).items()}


def test_output_packages_import_none_of_the_others():
    assert output_crossings({m: set(ts) for m, ts in repo_graph().items()}) == []


def test_no_import_cycle():
    assert cycles({m: set(ts) for m, ts in repo_graph().items()}, []) == []


def planted(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    """A small source tree under tmp_path, module name -> path, as ``modules()`` gives."""
    found = {}
    for name, text in files.items():
        path = tmp_path / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        found[name] = path
    return found


def test_checker_sees_one_output_package_importing_another(tmp_path):
    tree = planted(
        tmp_path,
        {
            "sessiongraph.store": "",
            "sessiongraph.views.show": "from sessiongraph.store import Store\n",
            "sessiongraph.ocp.bundle": "def run():\n    from sessiongraph.views.show import run_graph\n",
            "sessiongraph.ocp.writer": "from sessiongraph.ocp import bundle\n",
        },
    )
    assert output_crossings(graph(tree)) == [("sessiongraph.ocp.bundle", "sessiongraph.views.show")]


def test_checker_sees_cycles_through_lazy_and_by_name_imports(tmp_path):
    tree = planted(
        tmp_path,
        {
            # a lazy import closes this one
            "sessiongraph.dataset.tables": "def build():\n    from sessiongraph.dataset import trajectories\n",
            "sessiongraph.dataset.trajectories": "from sessiongraph.dataset.tables import TS\n",
            # a load by name closes this one
            "sessiongraph.engines": 'ENGINES = {"local": "sessiongraph.engines.local"}\n',
            "sessiongraph.engines.local": "from sessiongraph import pipeline\n",
            "sessiongraph.pipeline": "from sessiongraph import engines\n",
            "sessiongraph.store": '"""Not a load: sessiongraph.pipeline is named in a sentence."""\n',
        },
    )
    found = [set(c) for c in cycles(graph(tree), [])]
    assert {"sessiongraph.dataset.tables", "sessiongraph.dataset.trajectories"} in found
    assert {"sessiongraph.engines", "sessiongraph.engines.local", "sessiongraph.pipeline"} in found
    assert len(found) == 2
    exempt = [{"sessiongraph.pipeline", "sessiongraph.engines", "sessiongraph.engines.local"}]
    assert [set(c) for c in cycles(graph(tree), exempt)] == [
        {"sessiongraph.dataset.tables", "sessiongraph.dataset.trajectories"}
    ]
