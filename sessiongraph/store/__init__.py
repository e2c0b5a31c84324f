"""The DuckDB store: one file, frame tables replaced per source file in one transaction.

``database`` holds :class:`Store`; ``schema`` the schema version, the tables by kind and the
``sql/`` files; ``locks`` the writer lock and the readers' signal; ``connection`` the
transaction and registered-frame helpers.
"""

from sessiongraph.store.database import DB_ENV, Changed, InferencePlan, Store, default_db_path
from sessiongraph.store.locks import LOCK_TIMEOUT_S
from sessiongraph.store.schema import FILE_TABLES, FRAME_TABLES, INFERENCE_TABLES, SCHEMA_VERSION

__all__ = [
    "DB_ENV",
    "FILE_TABLES",
    "FRAME_TABLES",
    "INFERENCE_TABLES",
    "LOCK_TIMEOUT_S",
    "SCHEMA_VERSION",
    "Changed",
    "InferencePlan",
    "Store",
    "default_db_path",
]
