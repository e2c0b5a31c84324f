"""Adapters: one module per log format, each turning one file into the frames of ingest.frames."""
