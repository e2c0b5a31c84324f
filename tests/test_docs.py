"""The help matches the store and the README: `query --help` names every table and view a store
has; every command and option in README.md is in `--help`, and every command and option of the
CLI is in README.md."""

from __future__ import annotations

import re
import shlex

import click
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.dataset.tables import TABLES
from sessiongraph.store import Store
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
# Flags README shows for other programs (pip, ray, benchmarks/repeat_samples.py).
OTHER_PROGRAMS = {"--head", "--address", "--size-mb", "--debug", "--print"}  # benchmarks, Ray, `claude`


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    out: dict[tuple[str, ...], click.Command] = {}
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            out.update(commands(cmd, (*path, name)))
        else:
            out[(*path, name)] = cmd
    return out


def options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")} - {"--help"}


def readme_table() -> dict[tuple[str, ...], set[str]]:
    """The "Commands and options" table: command path -> options."""
    section = README.split("## Commands and options", 1)[1].split("\n## ", 1)[0]
    out = {}
    for cmd, opts in re.findall(r"^\| `sessiongraph ([^`]+)` \| (.*?) \|$", section, re.M):
        path = tuple(w for w in cmd.split() if not (w.isupper() or w.startswith("[")))
        out[path] = set(re.findall(r"`(--[a-z0-9-]+)`", opts))
    return out


def help_text(*args: str) -> str:
    res = CliRunner().invoke(main, [*args, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    return res.output


def test_query_help_names_every_table_and_view_of_a_store(tmp_path):
    with Store(tmp_path / "s.duckdb") as store:
        held = store.query(
            "SELECT table_name AS name FROM duckdb_tables() WHERE NOT internal UNION "
            "SELECT view_name FROM duckdb_views() WHERE NOT internal"
        )["name"].to_list()
    assert {"runs", "run_sessions", "edges", "all_edges", "artifacts", "steps", "lineage", "run_costs"} <= set(held)
    words = set(re.findall(r"[a-z_]+", help_text("query")))
    assert sorted(set(held) - words) == []
    assert {"usd_total", "usd_priced"} <= words
    assert set(TABLES) <= words  # the dataset's tables, for --parquet


def test_export_help_lists_every_export():
    text = help_text("export")
    for name in ("ocp", "otlp", "parquet", "trajectories"):
        assert re.search(rf"^\s+{name}\s", text, re.M), name


def test_readme_table_is_the_cli():
    table = readme_table()
    cli = commands()
    assert sorted(table) == sorted(cli)
    for path, cmd in cli.items():
        assert table[path] == options(cmd), " ".join(path)


def test_every_readme_example_runs_with_real_options():
    cli = commands()
    groups = {p[:-1] for p in cli if len(p) > 1}
    examples = [
        line.split("  #", 1)[0].rstrip(" \\")
        for block in re.findall(r"```sh\n(.*?)```", README, re.S)
        for line in block.splitlines()
        if line.startswith("sessiongraph ")
    ]
    assert len(examples) > 25
    for line in examples:
        words = shlex.split(line)[1:]
        path = (words[0], words[1]) if words[0] in {g[0] for g in groups} else (words[0],)
        assert path in cli, line
        used = {w.split("=", 1)[0] for w in words if w.startswith("--")}
        assert used <= options(cli[path]), line


def test_every_option_readme_names_exists():
    known = set().union(*(options(c) for c in commands().values()), {"--version", "--help"})
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", README))
    assert sorted(named - known - OTHER_PROGRAMS) == []


@pytest.mark.parametrize("path", sorted(commands()), ids=" ".join)
def test_every_command_and_option_is_in_readme(path):
    assert f"sessiongraph {' '.join(path)}" in README
    for opt in options(commands()[path]):
        assert opt in README, (path, opt)
