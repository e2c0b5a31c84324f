"""Claude Code transcripts: the adapter (moved into a package; split into modules next)."""

from sessiongraph.ingest.claude_code.records import *  # noqa: F403
