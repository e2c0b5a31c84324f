"""Every command is documented and has its library function: help text on each click command and
group, a mention in the README, and a function of the same name in ``sessiongraph`` (the package
docstring says why ``ingest`` is ``ingest_logs``)."""

from __future__ import annotations

import inspect

import click
import pytest

import sessiongraph
from sessiongraph.cli import main
from tests.conftest import ROOT


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    """Every command and group under ``group``, by its words (``("export", "ocp")``)."""
    out: dict[tuple[str, ...], click.Command] = {}
    for name, cmd in group.commands.items():
        out[(*prefix, name)] = cmd
        if isinstance(cmd, click.Group):
            out.update(commands(cmd, (*prefix, name)))
    return out


def leaves() -> list[tuple[str, ...]]:
    return [words for words, cmd in commands().items() if not isinstance(cmd, click.Group)]


def function_name(words: tuple[str, ...]) -> str:
    return "ingest_logs" if words == ("ingest",) else "_".join(words)


def test_the_tree_is_walked():
    assert {("ingest",), ("export",), ("export", "ocp"), ("load",)} <= set(commands())


@pytest.mark.parametrize("words", sorted(commands()), ids=" ".join)
def test_every_command_has_help(words):
    cmd = commands()[words]
    assert (cmd.help or "").strip(), f"sessiongraph {' '.join(words)} has no help text (give it a docstring)"


@pytest.mark.parametrize("words", sorted(leaves()), ids=" ".join)
def test_every_command_is_in_the_readme(words):
    assert f"sessiongraph {' '.join(words)}" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("words", sorted(leaves()), ids=" ".join)
def test_every_command_has_its_library_function(words):
    name = function_name(words)
    assert name in sessiongraph.__all__ and name in sessiongraph.COMMANDS
    assert inspect.isfunction(getattr(sessiongraph, name))


def test_no_library_function_without_its_command():
    assert set(sessiongraph.COMMANDS) == {function_name(w) for w in leaves()}
