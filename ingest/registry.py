"""Adapter registry: harness name -> adapter module, imported lazily.

An adapter is a module with ``NAME`` (the harness name), ``detect(path, head) -> bool``
(``head`` is the file's first bytes) and ``parse(path) -> Frames``. An adapter of append-only
transcripts may also offer ``parse_from(path, checkpoint, scrub) -> (Frames, Checkpoint | None)``
to read only what was appended since the last ingest (``ingest.resume``). An adapter whose
logs have side files read as part of them (Claude's subagent ``.meta.json``) offers
``log_of(side_path) -> str | None``: the log a side file belongs to (None: not its side file),
so that an ingest reads the log again when only its side file changed (:func:`log_of`).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
from types import ModuleType

from sessiongraph.ingest.errors import SessiongraphError

# Order matters for detection: the first adapter whose detect() accepts a file parses it.
ADAPTERS: dict[str, str] = {
    "ocp": "sessiongraph.ingest.ocp",
    "codex": "sessiongraph.ingest.codex",
    # Before claude-code: Qwen chats share Claude's record envelope (each detector also refuses
    # the other's content, so the order is a second guard, not the only one).
    "qwen-code": "sessiongraph.ingest.qwen",
    # Before claude-code: its transcripts lie under ~/.claude (the Claude detector refuses them too).
    "oh-my-opencode": "sessiongraph.ingest.oh_my_opencode",
    "claude-code": "sessiongraph.ingest.claude_code",
    "omp": "sessiongraph.ingest.omp",
    "pi": "sessiongraph.ingest.pi",
    "gemini-cli": "sessiongraph.ingest.gemini",
    "cursor": "sessiongraph.ingest.cursor",
    "kimi-code": "sessiongraph.ingest.kimi_code",
    "kimi-cli": "sessiongraph.ingest.kimi_cli",
    "copilot-cli": "sessiongraph.ingest.copilot",
    "opencode": "sessiongraph.ingest.opencode",
    "crush": "sessiongraph.ingest.crush",
    "factory-droid": "sessiongraph.ingest.droid",
    "prickle": "sessiongraph.ingest.prickle",
}


def load(table: dict[str, str], name: str, what: str) -> ModuleType:
    """Import the module ``table`` names for ``name``; an unknown name is an error with a
    "did you mean" hint (``what`` says what kind of name it is)."""
    try:
        module_name = table[name]
    except KeyError:
        hint = difflib.get_close_matches(name, table, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise SessiongraphError(f"unknown {what} {name!r}{suggestion} (known: {', '.join(table)})") from None
    return importlib.import_module(module_name)


def get(name: str) -> ModuleType:
    return _adapter(name) if name in ADAPTERS else load(ADAPTERS, name, "harness")


# Both are asked once per file classified: the import machinery's lookups would cost more than
# reading the file's head.
@functools.cache
def _adapter(name: str) -> ModuleType:
    return load(ADAPTERS, name, "harness")


def names() -> list[str]:
    """Adapters that are installed (a module still being written is left out, not an error)."""
    return list(_installed())


@functools.cache
def _installed() -> tuple[str, ...]:
    return tuple(n for n, mod in ADAPTERS.items() if importlib.util.find_spec(mod) is not None)


def log_of(side_path: str) -> str | None:
    """The log that ``side_path`` is a side file of, by the first adapter whose ``log_of`` hook
    claims it; None when it is nobody's side file."""
    for hook in _side_hooks():
        log = hook(side_path)
        if log is not None:
            return log
    return None


@functools.cache
def _side_hooks() -> tuple:
    return tuple(hook for n in names() if (hook := getattr(get(n), "log_of", None)) is not None)
