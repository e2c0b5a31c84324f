"""OCP 0.3 documents: a run read from the store (``bundle``), the document built (``writer``,
``outcome``, ``time``), and written as files (``files``)."""
