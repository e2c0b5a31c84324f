"""The package version, in a module of its own: every layer may import it, and the package root
(which re-exports it) sits above them all, with the command functions."""

__version__ = "0.1.0"
