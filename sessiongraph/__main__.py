"""``python -m sessiongraph``: the same command as the ``sessiongraph`` script."""

from sessiongraph.cli import main

main()
