"""The one exception root, re-exported: it lives in ``sessiongraph.ingest.errors`` so that the adapters
and discovery, the lowest layer, raise it without importing anything above them (ARCHITECTURE.md)."""

from sessiongraph.ingest.errors import SessiongraphError

__all__ = ["SessiongraphError"]
