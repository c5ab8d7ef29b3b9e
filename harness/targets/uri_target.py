"""Any running deployment reached through a connection string (``--target uri=...``).

A real mongod replica set, a mongos, a load balancer or an emulator: the
harness does not start or stop it, only detects what it is. Because the
harness did not start it, :mod:`harness.targets.safety` guards it: a
deployment off the loopback interface is refused before anything connects,
unless the run allows it (``--allow-destructive``).
"""

from __future__ import annotations

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.targets import connection_strings
from harness.targets.safety import check_destructive
from harness.targets.target_base import TargetBase


class UriTarget(TargetBase):
    kind = "uri"

    def __init__(self, uri: str, name: str | None = None, *, allow_destructive: bool = False) -> None:
        if not uri.startswith(("mongodb://", "mongodb+srv://")):
            raise TargetUnavailable(
                f"--target uri=... needs a mongodb:// connection string, got {connection_strings.redact(uri)!r}"
            )
        super().__init__(name or "uri")
        self.uri = uri
        #: Set from the run's ``--allow-destructive`` (the targets plug-in's wrapper); off by default.
        self.allow_destructive = allow_destructive

    def start(self) -> TargetInfo:
        try:
            check_destructive(self.uri, self.allow_destructive)
        except connection_strings.ConnectionStringError as exc:
            raise TargetUnavailable(str(exc)) from None
        self.connect_admin()
        self.info.details["allow_destructive"] = self.allow_destructive
        return self.info
