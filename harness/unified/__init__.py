"""The unified test format: loader, schema checks, comparator and test-runner operations.

Kept free of imports so that :mod:`harness.matching.table` can name the
comparator without pulling in the runner (which imports the table).
"""
