"""Conformance harness for MongoDB change streams.

The flow runs one way: spec file -> loader -> :mod:`harness.core.model` -> runner
(driver adapter, target, faults) -> observations -> matching -> result record
-> results store. Each step is its own module.
"""

__version__ = "0.1.0"
