"""The harness's core: what every other layer stands on, with no I/O and no driver.

Modules here may import the standard library and ``bson`` values, never
``pymongo``, a target, a fault backend or anything above them; the import
contracts in ``pyproject.toml`` (run by the test command) keep it so.
"""
