"""The store's SQL: ``schema.sql`` (its tables), ``views/`` (views and macros, made with the
store) and ``queries/`` (example questions for ``sessiongraph query --file``)."""

from __future__ import annotations

import re
from importlib import resources

_NAMES = {
    "tables": re.compile(r"^CREATE TABLE IF NOT EXISTS (\w+)", re.M),
    "views": re.compile(r"^CREATE OR REPLACE VIEW (\w+)", re.M),
    "macros": re.compile(r"^CREATE OR REPLACE MACRO (\w+)", re.M),
}


def names() -> dict[str, list[str]]:
    """The tables, views and macros a store holds, read from the SQL that creates them (cheap:
    ``query --help`` lists them without opening a store)."""
    here = resources.files(__name__)
    texts = [here.joinpath("schema.sql").read_text(encoding="utf-8")]
    views = here.joinpath("views")
    texts += [
        views.joinpath(n).read_text(encoding="utf-8")
        for n in sorted(p.name for p in views.iterdir())
        if n.endswith(".sql")
    ]
    return {kind: sorted({m for t in texts for m in rx.findall(t)}) for kind, rx in _NAMES.items()}
