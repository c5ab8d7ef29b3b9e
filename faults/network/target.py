"""A target seen through Toxiproxy: drivers under test reach it only via the proxy.

:class:`ThroughToxiproxy` wraps any :class:`~harness.shared.target_base.TargetBase`.
It starts the wrapped target, a private Toxiproxy server and one proxy in
front of the target, and publishes the *proxy's* connection string as its
``uri`` (so every client a test creates suffers the network faults), while
``admin`` stays the wrapped target's direct client: data set-up and fail
points must work whatever the network is doing to the driver under test.
"""

from __future__ import annotations

from typing import Any

from faults.network.faults import NetworkFaults
from faults.network.server import ToxiproxyServer
from faults.network.uri import proxied_uri, single_host
from harness.core.ports import TargetInfo
from harness.shared.target_base import TargetBase


class ThroughToxiproxy(TargetBase):
    def __init__(self, inner: TargetBase, server: ToxiproxyServer | None = None) -> None:
        super().__init__(inner.name)
        self.kind = inner.kind
        self.inner = inner
        self.server = server or ToxiproxyServer()
        self.faults: NetworkFaults | None = None
        self.direct_uri = ""

    def start(self) -> TargetInfo:
        self.inner.start()
        try:
            self.server.start()
            self.faults = NetworkFaults(self.server)
            proxy = self.faults.add_proxy(single_host(self.inner.uri), name="target")
            self.uri = proxied_uri(self.inner.uri, proxy.listen)
        except BaseException:
            self.stop()
            raise
        self.direct_uri = self.inner.uri
        self.admin = self.inner.admin
        self.admin_failpoints = self.inner.admin_failpoints
        self.info = self.inner.info
        self.info.details["network_faults"] = {
            "toxiproxy": self.server.version,
            "proxy": proxy.listen,
            "upstream": proxy.upstream,
        }
        return self.info

    def server_parameter(self, name: str) -> Any:
        return self.inner.server_parameter(name)

    def server_address(self) -> tuple[str, int] | None:
        return self.inner.server_address()

    def refusal(self, address: tuple[str, int] | None = None) -> str | None:
        return self.inner.refusal(address)

    def stop(self) -> None:
        self.admin = None  # the wrapped target's client: it closes it
        try:
            if self.faults is not None:
                self.faults.close()
                self.faults = None
        finally:
            try:
                self.server.stop()
            finally:
                self.inner.stop()
