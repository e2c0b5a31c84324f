"""What a person reads: a run as a tree, DOT or HTML page (``show``, ``html`` + ``assets/``), the
history report (``report``), query results (``queries``) and table or JSON output (``output``)."""
