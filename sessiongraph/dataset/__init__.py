"""The Parquet dataset: the tables declared and built (``tables``), written, read and loaded
(``parquet``), and the training splits (``trajectories``)."""
