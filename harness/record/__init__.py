"""The result record, as data: what the runner writes and the report reads, defined once.

The harness writes records (:mod:`harness.core.records`) and the report reads them with Spark
(:mod:`reports.schema`); both sides used to declare the record, its outcome names and its version order
each on their own. This package owns them and imports nothing but the standard library, so both sides
(and anyone who reads a results file) can depend on it: the record's fields (:mod:`harness.record.schema`),
a cause's shape (:mod:`harness.record.causes`), the outcomes and what several attempts of one test come to
(:mod:`harness.record.outcomes`), and the one version order (:mod:`harness.record.versions`).
docs/record.md describes the record for readers in other languages.
"""
