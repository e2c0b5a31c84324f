"""The one exception root. The CLI turns it into ``Error: ...`` and exit code 1.

It lives in the lowest layer (discovery and adapters raise it); ``sessiongraph.errors`` re-exports it."""

from __future__ import annotations


class SessiongraphError(Exception):
    """A problem the user can fix; ``path`` names the file or folder when there is one."""

    def __init__(self, message: str, *, path: str | None = None, harness: str | None = None):
        super().__init__(message)
        self.path = path
        self.harness = harness
