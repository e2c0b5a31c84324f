"""sessiongraph: coding-agent session logs into runs with evidence-tiered lineage."""

__version__ = "0.1.0"
