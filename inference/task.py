"""The OCP ``run.task`` of a run, inferred from the files it wrote (heuristic): shared by the OCP
documents (``sessiongraph.ocp.writer``) and the Parquet ``run_features`` table."""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import Any

from sessiongraph.inference.edges import short_hash

MAX_SHORT = 500  # OCP's limit on a short text (a repo name here; the writer's titles and evidence)
MAX_ID = 200  # OCP's limit on task.base_commit
# file name -> kind of file (by name only)
DOC_EXT = {".md", ".rst", ".txt", ".adoc"}
CODE_LANG = {
    ".py": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
    ".ex": "elixir",
    ".exs": "elixir",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cs": "csharp",
    ".swift": "swift",
    ".php": "php",
    ".scala": "scala",
    ".sh": "shell",
    ".sql": "sql",
}


def is_test(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return "/test" in path.lower() or name.startswith("test_") or ".test." in name or ".spec." in name


def task(run_id: str, paths: list[str], repo: str | None = None, base_commit: str | None = None) -> dict:
    """The OCP ``run.task`` of a run that wrote ``paths``: a type and features inferred from the
    files alone (heuristic), with the ``repo`` and ``base_commit`` the root session's log names
    (Codex ``session_meta.git``; a Claude Code pr-link's repository). Shared with the Parquet
    ``run_features`` table."""
    unique = sorted(set(paths))
    n = len(unique)
    tests = [p for p in unique if is_test(p)]
    docs = [p for p in unique if posixpath.splitext(p)[1].lower() in DOC_EXT]
    if not unique:
        kind = "research"
    elif len(docs) == n:
        kind = "docs"
    elif len(tests) == n:
        kind = "tests"
    else:
        kind = "feature"
    langs = Counter(CODE_LANG[e] for p in unique if (e := posixpath.splitext(p)[1].lower()) in CODE_LANG)
    features: dict = {
        "size": "xs" if n <= 1 else "s" if n <= 3 else "m" if n <= 10 else "l" if n <= 30 else "xl",
        "has_tests": bool(tests),
        "touches": "1" if n <= 1 else "2-3" if n <= 3 else "4+",
        "files_written": n,
    }
    if langs:
        features["lang"] = langs.most_common(1)[0][0]
    out: dict[str, Any] = {
        "id": f"task_{short_hash(run_id)}",
        "type": kind,
        "features": features,
        "labeled_by": {"how": "inferred", "tier": "heuristic"},
        "source": {"kind": "history"},
    }
    if repo:
        out["repo"] = repo[:MAX_SHORT]
    if base_commit:
        out["base_commit"] = base_commit[:MAX_ID]
    return out
