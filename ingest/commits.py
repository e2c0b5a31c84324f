"""Commits and pull requests a session's log shows it made, as metadata rows (the ``commits`` frame).

A commit hash, a branch and a PR URL are metadata; a commit message or PR title is log text and
is never taken. The adapters read them while the command and its output are still at hand, before
the privacy profile (``ingest.privacy``) drops both:

- a shell call whose command runs ``git commit`` and whose output names the new commit
  (``[branch abc1234] msg``, ``[branch (root-commit) abc1234] msg``): evidence ``git_commit_output``;
- a shell call whose command runs ``gh pr create`` and whose output prints a PR URL
  (``https://github.com/o/r/pull/N``): evidence ``gh_pr_create_output``;
- a shell call whose command runs ``git push`` and whose output names a new branch
  (`` * [new branch]  b -> b``) or a PR URL: evidence ``git_push_output``;
- a Claude Code ``pr-link`` record (``prNumber``, ``prUrl``, ``prRepository``): evidence ``pr_link``.

All of these are ``verified``. ``heuristic`` rows (a commit in the session's repository whose
changed files match the files it wrote: evidence ``files_equal`` or ``files_contain``,
``GIT_EVIDENCE``) come only from ``sessiongraph ingest --git`` (``sessiongraph.gitlog``), which
also fills ``in_branch``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, get_args

CommitKind = Literal["commit", "pr", "push"]
COMMIT_KINDS: tuple[CommitKind, ...] = get_args(CommitKind)
LogEvidence = Literal["git_commit_output", "gh_pr_create_output", "git_push_output", "pr_link"]
# What `ingest --git` (sessiongraph.gitlog) found: its rows are the store's own, not a log's, so a
# log read again keeps them (store.Store.write).
GitEvidence = Literal["files_equal", "files_contain"]
Evidence = Literal[LogEvidence, GitEvidence]
EVIDENCE: tuple[Evidence, ...] = (*get_args(LogEvidence), *get_args(GitEvidence))
GIT_EVIDENCE: tuple[GitEvidence, ...] = get_args(GitEvidence)

# `git commit` prints "[<branch> <abbrev>] <subject>" (root commits "(root-commit)" between): the
# branch and the hash only; the subject is log text.
_COMMIT = re.compile(r"^\[(?P<branch>[^\s\]]+)(?: \(root-commit\))? (?P<hash>[0-9a-f]{7,40})\] ", re.M)
# _COMMIT less its `^`: a pattern that starts with a literal is searched for with a fast scan, where
# `^` is tried at every position; a match never spans a line, so the ones at a line start are
# _COMMIT's matches (tests/test_commits.py holds the two equal).
_COMMIT_AT = re.compile(_COMMIT.pattern[1:])
_PR_URL = re.compile(r"https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/pull/(?P<number>\d+)\b")
_NEW_BRANCH = re.compile(r"^\s*\*\s+\[new branch\]\s+\S+\s+->\s+(?P<branch>\S+)\s*$", re.M)
_GIT_COMMIT = re.compile(r"(^|[\s;&|(])git(\s+-[Cc]\s+\S+)*\s+commit\b")
_GH_PR_CREATE = re.compile(r"(^|[\s;&|(])gh\s+pr\s+create\b")
_GIT_PUSH = re.compile(r"(^|[\s;&|(])git(\s+-[Cc]\s+\S+)*\s+push\b")
MAX_ROWS = 20  # per call: a command that prints more is not one agent's commit
MAX_PR_NUMBER = 2**63 - 1  # pr_number is a BIGINT: a larger number in a record is no PR's


def _number(digits: str) -> int | None:
    """A PR URL's number, None past what a BIGINT holds (no PR's)."""
    n = int(digits)
    return n if n <= MAX_PR_NUMBER else None


def made_by(command: object) -> bool:
    """Whether a shell ``command`` is one whose output may name a commit, PR or pushed branch."""
    if not isinstance(command, str):
        return False
    # The words each pattern needs, tested first: a pattern that starts with a group is tried at
    # every position of the command, and most commands hold neither `git` nor `gh`.
    git = "git" in command
    return bool(
        (git and "commit" in command and _GIT_COMMIT.search(command))
        or ("gh" in command and "create" in command and _GH_PR_CREATE.search(command))
        or (git and "push" in command and _GIT_PUSH.search(command))
    )


def output_facts(texts: Iterable[str | None]) -> list[tuple]:
    """What an output prints that a commit-making command would vouch for, whichever command it
    was (an adapter that pairs outputs with calls only later keeps these, not the text):
    ``("commit", branch, hash)``, ``("pr", repo, url, number)``, ``("push", branch)``; at most
    MAX_ROWS of each."""
    output = "\n".join(t for t in texts if isinstance(t, str))
    if not output:
        return []
    # What each pattern's match must hold, tested first: the two anchored at line starts are
    # otherwise tried at every position of outputs that are mostly long and name no commit.
    facts: list[tuple] = []
    if output.startswith("[") or "\n[" in output:
        at_line_start = (m for m in _COMMIT_AT.finditer(output) if m.start() == 0 or output[m.start() - 1] == "\n")
        facts += [("commit", m["branch"], m["hash"]) for m in at_line_start][:MAX_ROWS]
    if "https://github.com/" in output:
        facts += [("pr", m["repo"], m[0], _number(m["number"])) for m in _PR_URL.finditer(output)][:MAX_ROWS]
    if "[new branch]" in output:
        facts += [("push", m["branch"]) for m in _NEW_BRANCH.finditer(output)][:MAX_ROWS]
    return facts


def from_facts(call: dict, facts: Iterable[tuple]) -> list[dict]:
    """The commits rows of one shell ``call`` (a calls row with its ``command``) from the
    :func:`output_facts` of its outputs; without ``session_id``/``source_path`` (the adapter
    adds them)."""
    command = call.get("command")
    if not isinstance(command, str):
        return []
    facts = list(facts)
    at = call.get("ended_at") or call.get("started_at")
    base = {"call_id": call.get("call_id"), "ts": at, "tier": "verified", "line": call.get("line")}
    rows: list[dict] = []
    seen: set[tuple] = set()

    def add(**row) -> None:
        key = (row.get("kind"), row.get("commit_hash"), row.get("pr_url"), row.get("branch"))
        if key not in seen and len(rows) < MAX_ROWS:
            seen.add(key)
            rows.append({**base, **row})

    if _GIT_COMMIT.search(command):
        for _, branch, sha in (f for f in facts if f[0] == "commit"):
            add(kind="commit", evidence="git_commit_output", branch=branch, commit_hash=sha)
    for pattern, evidence in ((_GH_PR_CREATE, "gh_pr_create_output"), (_GIT_PUSH, "git_push_output")):
        if not pattern.search(command):
            continue
        for _, repo, url, number in (f for f in facts if f[0] == "pr"):
            add(kind="pr", evidence=evidence, repo=repo, pr_url=url, pr_number=number)
        if evidence == "git_push_output":
            for _, branch in (f for f in facts if f[0] == "push"):
                add(kind="push", evidence=evidence, branch=branch)
    return rows


def from_shell(call: dict, texts: Iterable[str | None]) -> list[dict]:
    """The commits rows of one shell ``call`` from the texts its output holds (:func:`from_facts`)."""
    if not made_by(call.get("command")):
        return []
    return from_facts(call, output_facts(texts))


def from_pr_link(rec: dict, ts, line: int) -> list[dict]:
    """The commits row of a Claude Code ``pr-link`` record (none if it names no PR URL)."""
    url, number, repo = rec.get("prUrl"), rec.get("prNumber"), rec.get("prRepository")
    if not isinstance(url, str) or not url:
        return []
    m = _PR_URL.search(url)
    if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= MAX_PR_NUMBER:
        number = _number(m["number"]) if m else None
    if not isinstance(repo, str):
        repo = m["repo"] if m else None
    return [
        {
            "ts": ts,
            "kind": "pr",
            "tier": "verified",
            "evidence": "pr_link",
            "repo": repo,
            "pr_url": url[:500],
            "pr_number": number,
            "line": line,
        }
    ]
