"""The Java executor (``--driver java``): docs/executor-protocol.md on the MongoDB Java sync driver (build.py)."""
