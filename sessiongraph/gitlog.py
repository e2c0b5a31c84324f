"""``sessiongraph ingest --git``: the commits a session's own repository holds, read on disk.

Off by default: a plain ``ingest`` neither reads a repository nor imports pygit2 (the pipeline
imports this module only when asked). pygit2 (libgit2) reads the repository in-process: no git
binary, linked working trees, shallow clones and bare repositories as git sees them.

For every stored session whose ``cwd`` lies inside a git working tree on this machine:

- **heuristic rows**: a commit of that repository made from the session's start until
  ``AFTER_S`` after its end (a person reviewing and committing the agent's work right after it; a
  longer window lets a later session's or person's edits be what the commit holds), whose changed
  files match the session's *pending* writes: the files it wrote or deleted there (``file_events``
  rows with op ``write``/``delete``; ignored files and ``.git/`` left out) since the last commit
  that changed them. Evidence ``files_equal`` when the commit changed exactly those files,
  ``files_contain`` when it changed all of them and more (a lockfile, a formatter's or a person's
  edits beside the agent's work). A commit that takes only part of the pending files matches no
  session: each commits row carries its session's whole dollars. Every session whose pending
  writes match gets a row (a parent and its subagents, two sessions in a row: the commit holds
  the work of each); a commit some log already shows being made (a verified row whose hash is a
  prefix of it) gets none. Merge commits are nobody's writes and are skipped. With several
  working trees of one repository, a commit that another working tree's HEAD reflog records and
  this one's does not was made there, not here.
- **in_branch** for every commit row of those sessions (verified or heuristic): whether the
  commit is still reachable from its branch, when that branch exists locally, else from any
  local branch or HEAD. A hash the repository does not hold stays null.

The walk starts at the local branches, HEAD, the commits HEAD's reflog records (a commit reset or
rebased away is still found, in_branch false) and the commits stored for these sessions, and goes
back, newest first, only to a day before the earliest session (``LOOKBACK_S``: commit times may be
a little out of order), at most ``MAX_WALK`` commits a repository (newer ones count: a walk cannot
skip them). A session whose window starts before where a cut walk stopped gets no new heuristic
rows and keeps those an earlier run found (its matches would be missing commits). Only hashes, branches, the
``owner/name`` of the ``origin`` remote and times are kept: a commit message, an author and a
remote's credentials are never read into a row.

Each run replaces the heuristic rows and ``in_branch`` of the sessions whose repository it read
(less those a cut walk did not reach), in one transaction (``Store.write_git``); sessions whose repository it cannot read now keep what
an earlier run found. A plain ingest keeps both (``Store.write``). What could not be read is
counted by ``PROBLEMS`` code, never raised.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

import polars as pl
import pygit2
from pygit2.enums import SortMode

from sessiongraph.ingest.commits import GIT_EVIDENCE, GitEvidence
from sessiongraph.ingest.frames import COMMITS
from sessiongraph.ingest.paths import on_this_machine
from sessiongraph.store import Store

AFTER_S = 30 * 60  # a commit up to 30 minutes after the session's end may be its work
SKEW_S = 2.0  # commit times are whole seconds: a write up to 2 s after a commit's time is before it
LOOKBACK_S = 86_400  # how far before the earliest session the walk goes on (out-of-order commit times)
MAX_WALK = 20_000  # commits walked per repository at most
MAX_MESSAGES = 10  # unreadable repositories named in the summary

PROBLEMS: dict[str, str] = {
    "cwd_missing": "a session's workspace (cwd) is not a folder on this machine (removed, another machine's, or ~)",
    "not_a_repository": "a session's workspace lies in no git repository",
    "bare_repository": "a session's workspace lies in a bare repository: no working tree to match writes with",
    "unreadable_repository": "a repository that could not be opened or read (corrupt, not this user's ...): "
    "its sessions keep what an earlier ingest --git found",
    "shallow_boundary": "a commit at a shallow clone's edge: its parents are not there, so its changes are unknown",
    "walk_cut": f"a session older than the newest {MAX_WALK:,} commits of its repository: the walk stopped "
    "before its window, so its heuristic rows stay as an earlier ingest --git found them",
    "commit_not_found": "a commit row whose hash its session's repository does not hold: in_branch stays null",
}

_SESSIONS = """
SELECT session_id, min(cwd) AS cwd, min(coalesce(started_at, ended_at)) AS started_at,
       max(coalesce(ended_at, started_at)) AS ended_at, max(git_branch) AS git_branch,
       min(source_path) AS source_path
FROM sessions WHERE cwd IS NOT NULL GROUP BY session_id
HAVING min(coalesce(started_at, ended_at)) IS NOT NULL
ORDER BY session_id
"""
_WRITES = """
SELECT session_id, path, ts, source_path FROM file_events
WHERE op IN ('write', 'delete') AND ts IS NOT NULL AND path IS NOT NULL
ORDER BY session_id, ts, path
"""
_STORED = f"""
SELECT session_id, commit_hash, branch, evidence IN ({", ".join(f"'{e}'" for e in GIT_EVIDENCE)}) AS git
FROM commits WHERE kind = 'commit' AND commit_hash IS NOT NULL
ORDER BY session_id, commit_hash
"""
# owner/name of a remote URL (https://[user@]host/o/r.git, ssh://..., git@host:o/r.git): never its user part.
_REMOTE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://(?:[^@/]*@)?[^/]+/|[^@/:]+@[^/:]+:)(?:.*/)?(?P<repo>[^/]+/[^/]+?)(?:\.git)?/?$"
)


@dataclass
class GitSummary:
    """What one ``ingest --git`` read and found (``IngestSummary.git``)."""

    repositories: int = 0  # working trees read
    sessions: int = 0  # sessions whose working tree was read
    heuristic: dict[str, int] = field(default_factory=dict)  # rows by evidence
    in_branch: dict[str, int] = field(default_factory=dict)  # commit rows checked: true / false / unknown
    problems: dict[str, int] = field(default_factory=dict)  # PROBLEMS code -> count
    messages: list[str] = field(default_factory=list)  # the unreadable repositories, and why

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Session:
    session_id: str
    start: float
    end: float
    branch: str | None
    source_path: str
    writes: dict[str, list[float]] = field(default_factory=dict)  # path in the working tree -> write times


@dataclass(frozen=True)
class _Commit:
    oid: pygit2.Oid
    time: float
    changed: frozenset[str]
    shallow: bool = False  # a shallow clone's edge: its changes are unknown, it matches no session


@dataclass
class _Found:
    rows: list[dict] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)  # sessions a cut walk did not reach: keep their rows
    problems: Counter[str] = field(default_factory=Counter)


def read_git(store: Store, ingest_id: int) -> GitSummary:
    """Read the repositories of the store's sessions and write what they show (module docstring)."""
    summary = GitSummary()
    problems: Counter[str] = Counter()
    sessions = store.query(_SESSIONS)
    writes = store.query(_WRITES)
    stored = store.query(_STORED)
    by_cwd: dict[str, list[dict]] = defaultdict(list)
    for s in sessions.iter_rows(named=True):
        by_cwd[s["cwd"]].append(s)
    trees: dict[str, tuple[pygit2.Repository, list[tuple[str, dict]]]] = {}  # git dir -> repo, (cwd, session)
    for cwd, members in by_cwd.items():
        repo, problem, why = _open(cwd)
        if repo is None:
            problems[problem] += len(members)
            if why:
                _note(summary, cwd, why)
            continue
        trees.setdefault(repo.path, (repo, []))[1].extend((cwd, s) for s in members)
    writes_of = _grouped(writes)
    stored_of = _grouped(stored)
    verified = {h for h, git in zip(stored["commit_hash"], stored["git"], strict=True) if not git}
    read_ids: list[str] = []
    cut_ids: list[str] = []
    rows: list[dict] = []
    checks: list[dict] = []
    for repo, placed in trees.values():
        try:
            found = _read_tree(repo, placed, writes_of, stored_of, verified)
        except (pygit2.GitError, KeyError, ValueError, OSError) as exc:  # a corrupt object, a vanished file
            problems["unreadable_repository"] += len(placed)
            _note(summary, repo.workdir or repo.path, _first_line(exc))
            continue
        summary.repositories += 1
        read_ids += [s["session_id"] for _cwd, s in placed]
        rows += found.rows
        checks += found.checks
        cut_ids += found.cut
        problems.update(found.problems)
    summary.sessions = len(read_ids)
    frame = pl.DataFrame(rows, schema=COMMITS, orient="row") if rows else pl.DataFrame(schema=COMMITS)
    check_schema = {"session_id": pl.String, "commit_hash": pl.String, "in_branch": pl.Boolean}
    check_frame = pl.DataFrame(checks, schema=check_schema).unique(["session_id", "commit_hash"], keep="first")
    matched = sorted(set(read_ids) - set(cut_ids))
    store.write_git(read_ids, matched, frame, check_frame, ingest_id)
    summary.heuristic = dict(sorted(Counter(frame["evidence"].to_list()).items()))
    flags = [*frame["in_branch"].to_list(), *check_frame["in_branch"].to_list()]
    summary.in_branch = {
        k: v
        for k, v in (("true", flags.count(True)), ("false", flags.count(False)), ("unknown", flags.count(None)))
        if v
    }
    summary.problems = dict(sorted((+problems).items()))
    return summary


def _note(summary: GitSummary, where: str, why: str | None) -> None:
    if len(summary.messages) < MAX_MESSAGES:
        summary.messages.append(f"{where}: {why or 'cannot be read'}")


def _grouped(df: pl.DataFrame) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for row in df.iter_rows(named=True):
        out[row["session_id"]].append(row)
    return out


def _open(cwd: str) -> tuple[pygit2.Repository | None, str, str | None]:
    """The working tree ``cwd`` lies in, else the PROBLEMS code of why there is none (and
    libgit2's message, for an unreadable one)."""
    place = on_this_machine(cwd)
    if place.startswith("~") or not os.path.isdir(place):
        return None, "cwd_missing", None
    try:
        found = pygit2.discover_repository(place)
        if found is None:
            return None, "not_a_repository", None
        repo = pygit2.Repository(found)
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        return None, "unreadable_repository", _first_line(exc)
    if repo.is_bare or not repo.workdir:
        return None, "bare_repository", None
    return repo, "", None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _roots(repo: pygit2.Repository, cwd: str) -> list[str]:
    """The working tree's root as its real path and as the session spelled it (its cwd less the
    part below the root), so a written path matches in either spelling."""
    real = os.path.realpath(repo.workdir).rstrip("/")
    place = on_this_machine(cwd).rstrip("/")
    roots = [real]
    below = os.path.relpath(os.path.realpath(place), real)
    if below == ".":
        roots.append(place)
    elif not below.startswith("..") and place.endswith("/" + below):
        roots.append(place[: -len(below) - 1])
    return list(dict.fromkeys(roots))


def _read_tree(
    repo: pygit2.Repository,
    members: list[tuple[str, dict]],
    writes_of: dict[str, list[dict]],
    stored_of: dict[str, list[dict]],
    verified: set[str],
) -> _Found:
    found = _Found()
    ignored: dict[str, bool] = {}

    def relative(path: str, roots: list[str]) -> str | None:
        path = on_this_machine(path)
        for root in roots:
            if path.startswith(root + "/"):
                rel = path[len(root) + 1 :]
                if rel == ".git" or rel.startswith(".git/"):
                    return None
                if rel not in ignored:
                    ignored[rel] = repo.path_is_ignored(rel)
                return None if ignored[rel] else rel
        return None

    sessions: list[_Session] = []
    for cwd, s in members:
        roots = _roots(repo, cwd)
        session = _Session(
            s["session_id"], s["started_at"].timestamp(), s["ended_at"].timestamp(), s["git_branch"], s["source_path"]
        )
        for w in writes_of.get(s["session_id"], ()):
            rel = relative(w["path"], roots)
            if rel is not None:
                session.writes.setdefault(rel, []).append(w["ts"].timestamp())
                session.source_path = w["source_path"]  # the log of its latest write, the rows' evidence
        sessions.append(session)
    lo = min(s.start for s in sessions) - SKEW_S
    hi = max(s.end for s in sessions) + AFTER_S
    branches = _branches(repo)
    head = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit).id
    made_here, made_elsewhere = _reflogs(repo)
    stored_hashes = [r["commit_hash"] for _c, s in members for r in stored_of.get(s["session_id"], ())]
    tips = [*branches.values(), *([head] if head else []), *made_here, *_resolved(repo, stored_hashes)]
    # No session wrote there: no commit can be its work, only its commit rows' in_branch is wanted.
    commits, floor = _walk(repo, tips, lo, hi) if any(s.writes for s in sessions) else ([], None)
    if floor is not None:  # the walk stopped at `floor`: a session whose window starts there or before misses commits
        found.cut = [s.session_id for s in sessions if s.writes and s.start - SKEW_S <= floor]
        found.problems["walk_cut"] += len(found.cut)
    reach = _Reach(repo, branches, head)
    cut = set(found.cut)
    reached = [s for s in sessions if s.session_id not in cut]
    heuristic = _match(reached, commits, verified, made_elsewhere, repo)
    found.problems["shallow_boundary"] += sum(c.shallow for c in commits)
    origin = _origin(repo)
    for session, c, evidence in heuristic:
        branch, in_branch = reach.branch_of(c.oid, session.branch)
        found.rows.append(
            {
                "session_id": session.session_id,
                "call_id": None,
                "ts": datetime.fromtimestamp(c.time, UTC),
                "kind": "commit",
                "tier": "heuristic",
                "evidence": evidence,
                "repo": origin,
                "branch": branch,
                "commit_hash": str(c.oid),
                "pr_url": None,
                "pr_number": None,
                "in_branch": in_branch,
                "source_path": session.source_path,
                "line": None,
            }
        )
    for _cwd, s in members:
        for r in stored_of.get(s["session_id"], ()):
            if r["git"]:
                continue
            oid = _resolve(repo, r["commit_hash"])
            if oid is None:
                found.problems["commit_not_found"] += 1
                flag = None
            else:
                flag = reach.in_branch(oid, r["branch"])
            found.checks.append({"session_id": s["session_id"], "commit_hash": r["commit_hash"], "in_branch": flag})
    return found


def _branches(repo: pygit2.Repository) -> dict[str, pygit2.Oid]:
    """Local branch -> the commit it points at."""
    out: dict[str, pygit2.Oid] = {}
    for name in sorted(repo.branches.local):
        try:
            out[name] = repo.branches.local[name].peel(pygit2.Commit).id
        except (pygit2.GitError, KeyError, ValueError):
            continue  # a branch whose commit is gone: nothing reachable from it
    return out


def _head_log(repo: pygit2.Repository) -> set[pygit2.Oid]:
    """The commits a working tree's HEAD reflog records (made, amended, reset to, checked out
    there); only their ids are read."""
    zero = pygit2.Oid(hex="0" * 40)
    try:
        return {e.oid_new for e in repo.lookup_reference("HEAD").log() if e.oid_new != zero}
    except (pygit2.GitError, KeyError, ValueError):
        return set()


def _reflogs(repo: pygit2.Repository) -> tuple[set[pygit2.Oid], set[pygit2.Oid]]:
    """This working tree's HEAD reflog, and the commits only other working trees' of the same
    repository record."""
    here = _head_log(repo)
    elsewhere: set[pygit2.Oid] = set()
    try:
        common_file = os.path.join(repo.path, "commondir")
        common = (
            pygit2.Repository(os.path.normpath(os.path.join(repo.path, open(common_file).read().strip())))
            if os.path.isfile(common_file)
            else repo
        )
        others = [common] if common.path != repo.path and not common.is_bare else []
        for name in common.list_worktrees():
            tree = pygit2.Repository(common.lookup_worktree(name).path)
            if tree.path != repo.path:
                others.append(tree)
        for other in others:
            elsewhere |= _head_log(other)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        pass  # a pruned or moved working tree: its commits count as no one's
    return here, elsewhere - here


def _resolve(repo: pygit2.Repository, hexsha: str) -> pygit2.Oid | None:
    try:
        obj = repo.get(hexsha)
    except (pygit2.GitError, KeyError, ValueError):  # ambiguous or malformed
        return None
    return obj.id if isinstance(obj, pygit2.Commit) else None


def _resolved(repo: pygit2.Repository, hashes: list[str]) -> list[pygit2.Oid]:
    return [oid for h in dict.fromkeys(hashes) if (oid := _resolve(repo, h)) is not None]


def _walk(repo: pygit2.Repository, tips: list, lo: float, hi: float) -> tuple[list[_Commit], float | None]:
    """The non-merge commits reachable from ``tips`` with a commit time in [lo, hi], oldest
    first, each with the paths it changed against its parent (a root commit: all its files; a
    shallow clone's edge commit: ``shallow``, none); and the commit time the walk stopped at when
    ``MAX_WALK`` cut it (else None)."""
    walker = None
    for tip in dict.fromkeys(tips):
        try:
            if walker is None:
                walker = repo.walk(tip, SortMode.TIME)
            else:
                walker.push(tip)
        except (pygit2.GitError, KeyError, ValueError):
            continue  # a reflog entry whose commit was collected
    if walker is None:
        return [], None
    shallow = _shallow(repo)
    out: list[_Commit] = []
    floor = None
    for n, commit in enumerate(walker):
        t = float(commit.commit_time)
        if n >= MAX_WALK:
            floor = t
            break
        if t < lo - LOOKBACK_S:
            break
        if not lo <= t <= hi or len(commit.parent_ids) > 1:
            continue
        if str(commit.id) in shallow:
            out.append(_Commit(commit.id, t, frozenset(), shallow=True))
            continue
        if commit.parent_ids:
            diff = commit.tree.diff_to_tree(commit.parents[0].tree)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        changed = frozenset(p for d in diff.deltas for p in (d.old_file.path, d.new_file.path))
        out.append(_Commit(commit.id, t, changed))
    out.sort(key=lambda c: (c.time, str(c.oid)))
    return out, floor


def _shallow(repo: pygit2.Repository) -> set[str]:
    """The commits at a shallow clone's edge (``<git dir>/shallow``, of the common dir for a linked
    working tree): libgit2 shows them parentless."""
    if not repo.is_shallow:
        return set()
    for folder in (repo.path, os.path.join(repo.path, "..", "..")):
        try:
            with open(os.path.join(folder, "shallow")) as f:
                return {line.strip() for line in f if line.strip()}
        except OSError:
            continue
    return set()


def _match(
    sessions: list[_Session],
    commits: list[_Commit],
    verified: set[str],
    made_elsewhere: set[pygit2.Oid],
    repo: pygit2.Repository,
) -> list[tuple[_Session, _Commit, GitEvidence]]:
    """(session, commit, evidence) for each commit that holds a session's pending writes."""
    lengths = sorted({len(h) for h in verified})
    taken: dict[str, float] = {}  # path -> when the last commit walked so far changed it (+ skew)
    out: list[tuple[_Session, _Commit, GitEvidence]] = []
    workdir = repo.workdir
    for c in commits:
        hexsha = str(c.oid)
        claimable = not c.shallow and c.oid not in made_elsewhere and not any(hexsha[:n] in verified for n in lengths)
        for s in sessions if claimable else ():
            if not s.start - SKEW_S <= c.time <= s.end + AFTER_S:
                continue
            pending = set()
            for path, times in s.writes.items():
                i = bisect_right(times, c.time + SKEW_S)
                if i and times[i - 1] > taken.get(path, float("-inf")):
                    pending.add(path)
            pending = {p for p in pending if p in c.changed or not _scratch(repo, workdir, c, p)}
            if pending and pending == c.changed:
                out.append((s, c, "files_equal"))
            elif pending and pending < c.changed:
                out.append((s, c, "files_contain"))
        for path in c.changed:
            taken[path] = c.time + SKEW_S
    return out


def _scratch(repo: pygit2.Repository, workdir: str, c: _Commit, path: str) -> bool:
    """A path the session wrote that is neither in the commit, nor in its parent, nor on disk now:
    a scratch file made and removed, not work waiting for a commit."""
    commit = repo.get(c.oid)
    assert isinstance(commit, pygit2.Commit)  # walked as one
    trees = [commit.tree, *(p.tree for p in commit.parents)]
    return not any(path in t for t in trees) and not os.path.lexists(os.path.join(workdir, path))


def _origin(repo: pygit2.Repository) -> str | None:
    """``owner/name`` of the ``origin`` remote, if it has a host; never the URL's user part."""
    try:
        url = repo.remotes["origin"].url
    except (KeyError, ValueError, pygit2.GitError):
        return None
    m = _REMOTE.match(url or "")
    return m["repo"] if m else None


class _Reach:
    """Reachability of commits from a repository's local branches and HEAD, cached."""

    def __init__(self, repo: pygit2.Repository, branches: dict[str, pygit2.Oid], head: pygit2.Oid | None):
        self.repo, self.branches, self.head = repo, branches, head
        self._cache: dict[tuple, bool] = {}

    def _from(self, tip: pygit2.Oid, oid: pygit2.Oid) -> bool:
        key = (tip, oid)
        if key not in self._cache:
            self._cache[key] = tip == oid or self.repo.descendant_of(tip, oid)
        return self._cache[key]

    def _anywhere(self, oid: pygit2.Oid) -> bool:
        return any(self._from(t, oid) for t in [*self.branches.values(), *([self.head] if self.head else [])])

    def in_branch(self, oid: pygit2.Oid, branch: str | None) -> bool:
        """Reachable from ``branch`` when it is a local branch, else from any local branch or HEAD."""
        if branch in self.branches:
            return self._from(self.branches[branch], oid)
        return self._anywhere(oid)

    def branch_of(self, oid: pygit2.Oid, preferred: str | None) -> tuple[str | None, bool]:
        """A heuristic commit's branch and in_branch: the session's branch when it holds the commit,
        else the first local branch that does, else the session's branch, not holding it."""
        if preferred in self.branches and self._from(self.branches[preferred], oid):
            return preferred, True
        holding = next((b for b, tip in self.branches.items() if self._from(tip, oid)), None)
        if holding is not None:
            return holding, True
        if self.head is not None and self._from(self.head, oid):
            return None, True  # a detached HEAD holds it, no branch does
        return preferred, False
