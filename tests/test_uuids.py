"""The fast UUID scan finds exactly what the plain regular expressions find."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sessiongraph.ingest.jsonl import find_uuids

PLAIN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
BOUNDED = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
UUIDS = ["0b9e2a4c-1d2e-4f3a-8b9c-0d1e2f3a4b5c", "ABCDEF01-2345-6789-ABCD-EF0123456789"]
# Pieces that make near-misses likely: hex runs, hyphens, word and non-word neighbours.
pieces = st.sampled_from(
    [*UUIDS, "-", "--", "a", "f0", "12345678", "x", "_", " ", "é", "\n", "-abcd", "abcdef012345", "0123456789ab-cdef"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=40))
def test_same_as_the_regular_expressions(parts):
    text = "".join(parts)
    assert find_uuids(text) == PLAIN.findall(text)
    assert find_uuids(text, bounded=True) == BOUNDED.findall(text)


def test_adjacent_and_overlapping_candidates():
    u = UUIDS[0]
    for text in (u + u, u + "-" + u, "x" + u, u + "_", u[:-1], "a" + u + "b", u + u[8:]):
        assert find_uuids(text) == PLAIN.findall(text), text
        assert find_uuids(text, bounded=True) == BOUNDED.findall(text), text
