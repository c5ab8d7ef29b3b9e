"""Drivers under test in another process, over the executor protocol (docs/executor-protocol.md)."""
