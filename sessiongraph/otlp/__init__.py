"""OpenTelemetry traces of runs (``export otlp``): read.py reads a run's rows from the store, spans.py
makes its spans, export.py writes OTLP/JSON files and sends OTLP/HTTP."""
