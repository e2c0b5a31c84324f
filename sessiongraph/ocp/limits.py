"""OCP 0.3's string length limits, applied to a whole document before it is written.

Logs and imported documents can hold values of any length (a 100k-character title, cwd or id);
the schema caps most strings (``../shared/specs/ocp-0.3-digest.md``: ids 1-200, short texts and
label values 500, paths 1000, vocabulary words 100). :func:`fit` cuts every over-long value to
its key's limit, the tightest the schema sets for that key anywhere (a ``value`` is 100 in a
role, 500 in a signal: 100), as ``<head>~<hash of the whole value>``: the same value is cut the
same way wherever it is, so an edge still names its node. The document's
``ext[<namespace>]["truncated"]`` (``dev.sessiongraph``) says how many values were cut and where (the first few
paths). ``ext``, ``task.features``, ``options`` and ``capabilities`` are not capped by OCP and
are left alone.
"""

from __future__ import annotations

from typing import Any

from sessiongraph.inference.edges import short_hash

_HASH = 1 + 16  # "~" and short_hash
MAX_PATHS = 20  # paths of cut values kept in the marker; the count covers all

_BY_LIMIT = {
    40: ("date",),
    100: (
        "chooser context_policy effort family harness how kind level provider role rule state type unit value version"
    ).split(),
    200: (
        "actor artifact at_attempt attempt base_commit by consumers edges excludes_events fit fit_after framework"
        " from from_attempt gates group id launched_by members model name node org parent producer raw rec"
        " repair ref requires slate source_contract supersedes to to_attempt vertex via winner writers"
    ).split(),
    500: (
        "definition detail evidence grammar labels note reason receipt repo rubric session severity_map source"
        " subtype title workspace"
    ).split(),
    1000: ("command", "cwd", "path"),
}
LIMITS = {key: limit for limit, keys in _BY_LIMIT.items() for key in keys}
UNCAPPED = {"ext", "features", "options", "capabilities"}


def cut(value: str, limit: int) -> str:
    """``value`` if it fits ``limit``, else its head and a hash of all of it (stable, distinct)."""
    return value if len(value) <= limit else f"{value[: limit - _HASH]}~{short_hash(value)}"


def fit(doc: dict, namespace: str) -> dict:
    """``doc`` with every string over its key's OCP limit cut (see the module doc), in place;
    the marker goes under ``ext[namespace]``."""
    cuts: list[str] = []
    _walk(doc, "$", None, cuts)
    if cuts:
        mine = doc.setdefault("ext", {}).setdefault(namespace, {})
        mine["truncated"] = {"values": len(cuts), "at": cuts[:MAX_PATHS]}
    return doc


def _walk(node: Any, where: str, limit: int | None, cuts: list[str]) -> Any:
    """Cut ``node``'s strings over ``limit`` (a list's items share it); a dict's values take
    their own key's limit, except under ``labels``, whose values all take the labels' limit."""
    if isinstance(node, str):
        if limit is not None and len(node) > limit:
            cuts.append(where)
            return cut(node, limit)
        return node
    if isinstance(node, list):
        for i, item in enumerate(node):
            node[i] = _walk(item, f"{where}[{i}]", limit, cuts)
    elif isinstance(node, dict):
        labels = where.endswith(".labels")
        for key, item in node.items():
            if key not in UNCAPPED:
                node[key] = _walk(item, f"{where}.{key}", limit if labels else LIMITS.get(key), cuts)
    return node
