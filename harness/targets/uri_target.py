"""Any running deployment reached through a connection string (``--target uri=...``).

A real mongod replica set, a mongos, a load balancer or an emulator: the
harness does not start or stop it, only detects what it is.
"""

from __future__ import annotations

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.targets.target_base import TargetBase


class UriTarget(TargetBase):
    kind = "uri"

    def __init__(self, uri: str, name: str | None = None) -> None:
        if not uri.startswith(("mongodb://", "mongodb+srv://")):
            raise TargetUnavailable(f"--target uri=... needs a mongodb:// connection string, got {uri!r}")
        super().__init__(name or "uri")
        self.uri = uri

    def start(self) -> TargetInfo:
        self.connect_admin()
        return self.info
