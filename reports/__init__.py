"""``harness report``: a PySpark job that turns result records into answers.

Small steps, one module each, flowing one way::

    discover -> read -> normalise -> (versions) -> aggregate -> write -> render

The job reads records (``cs-harness.result/1`` JSON lines, JUnit XML from the
pytest plugin, and the Parquet verdicts it wrote itself) and knows nothing of
the runner. Nothing here imports pyspark at module import time except the
Spark steps themselves, so ``harness run`` never loads it; the contract is
``docs/reports.md``.
"""
