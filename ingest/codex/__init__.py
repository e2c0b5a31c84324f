"""Codex CLI rollouts: the adapter (moved into a package; split into modules next)."""

from sessiongraph.ingest.codex.records import *  # noqa: F403
