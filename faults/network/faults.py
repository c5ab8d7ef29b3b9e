"""Proxies in front of targets, and the toxics and outages put on them.

:class:`NetworkFaults` creates one Toxiproxy proxy per target address (the
server picks a free ``127.0.0.1`` port), adds and removes toxics, takes a
proxy down and up, and guarantees cleanliness: :meth:`NetworkFaults.reset`
removes every toxic and re-enables every proxy, :meth:`NetworkFaults.verify_clean`
asks the server and raises if anything is left, and :meth:`NetworkFaults.close`
destroys every proxy whatever happened before.

Every call goes through the server's own :class:`~faults.network.api.ToxiproxyAPI`
(``self.api``), which holds that server's address: no process-wide state, so
two ``NetworkFaults`` on two servers in one process stay apart. The HTTP
statuses that mean something here (409 exists, 404 not found, 400 refused) are
turned into this module's messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faults.network.api import ToxiproxyHTTPError
from faults.network.server import ToxiproxyServer
from faults.network.toxics import NetworkFaultError, Toxic


class NetworkFaultsLeftBehind(NetworkFaultError):
    """After a test, a toxic or a disabled (or unknown) proxy is still on the server."""


@dataclass(frozen=True)
class Proxy:
    """A proxy the harness created: the driver connects to ``listen``, Toxiproxy to ``upstream``."""

    name: str
    listen: str
    upstream: str


class NetworkFaults:
    """Network faults on one :class:`ToxiproxyServer` (started by the caller)."""

    def __init__(self, server: ToxiproxyServer) -> None:
        if server.api is None:
            raise NetworkFaultError("the Toxiproxy server is not running; start it before creating NetworkFaults")
        self.server = server
        self.api = server.api
        self.proxies: dict[str, Proxy] = {}
        #: Every toxic added since the last reset, with its proxy: what a failure message can quote.
        self.history: list[dict[str, Any]] = []

    # -- proxies ---------------------------------------------------------------
    def add_proxy(self, upstream: str, name: str | None = None) -> Proxy:
        """A proxy listening on a free loopback port and forwarding to ``upstream`` (``host:port``)."""
        name = name or f"target{len(self.proxies)}"
        try:
            created = self.api.create_proxy(name=name, upstream=upstream, listen="127.0.0.1:0")
        except ToxiproxyHTTPError as exc:
            if exc.status == 409:
                raise NetworkFaultError(f"a proxy named {name!r} already exists on {self.server.api_url}") from None
            raise NetworkFaultError(
                f"Toxiproxy refused proxy {name!r} -> {upstream}; log tail:\n{self.server.log_tail()}"
            ) from None
        proxy = Proxy(name=name, listen=created["listen"], upstream=upstream)
        self.proxies[name] = proxy
        return proxy

    def _proxy(self, name: str | None) -> Proxy:
        if name is None:
            if len(self.proxies) != 1:
                raise NetworkFaultError(f"say which proxy: there are {len(self.proxies)} ({sorted(self.proxies)})")
            return next(iter(self.proxies.values()))
        try:
            return self.proxies[name]
        except KeyError:
            raise NetworkFaultError(f"no proxy named {name!r}; known: {sorted(self.proxies)}") from None

    def _gone(self, name: str) -> NetworkFaultError:
        return NetworkFaultError(f"proxy {name!r} is gone from the Toxiproxy server at {self.server.api_url}")

    def _exists_on_server(self, name: str) -> bool:
        try:
            self.api.proxy(name)
        except ToxiproxyHTTPError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def down(self, proxy: str | None = None) -> None:
        """Close every connection through the proxy and stop listening (connection refused)."""
        self.api.set_enabled(self._proxy(proxy).name, False)

    def up(self, proxy: str | None = None) -> None:
        """Listen again on the same address."""
        target = self._proxy(proxy)
        state = self.api.set_enabled(target.name, True)
        if not state.get("enabled") or state.get("listen") != target.listen:
            raise NetworkFaultError(f"proxy {target.name!r} did not come back up on {target.listen}: {state}")

    # -- toxics ----------------------------------------------------------------
    def add_toxic(self, toxic: Toxic, proxy: str | None = None) -> str:
        """Install ``toxic`` on the proxy (it acts on open and new connections); returns its name."""
        target = self._proxy(proxy)
        try:
            self.api.add_toxic(target.name, toxic.as_api())
        except ToxiproxyHTTPError as exc:
            if exc.status == 404:
                raise self._gone(target.name) from None
            if exc.status == 409:  # "toxic already exists"
                raise NetworkFaultError(
                    f"proxy {target.name!r} already has a toxic named {toxic.name!r}; give the new one another name"
                ) from None
            if exc.status == 400:
                raise NetworkFaultError(f"Toxiproxy refused toxic {toxic.as_api()}: {exc.body}") from None
            raise
        self.history.append({"proxy": target.name, **toxic.as_api()})
        return toxic.name

    def remove_toxic(self, name: str, proxy: str | None = None) -> None:
        target = self._proxy(proxy)
        try:
            self.api.delete_toxic(target.name, name)
        except ToxiproxyHTTPError as exc:
            if exc.status != 404:
                raise NetworkFaultError(f"Toxiproxy failed to remove toxic {name!r} from {target.name!r}") from None
            if not self._exists_on_server(target.name):  # 404 for the proxy, not the toxic
                raise self._gone(target.name) from None
            raise NetworkFaultError(f"proxy {target.name!r} has no toxic named {name!r}") from None

    def toxics(self, proxy: str | None = None) -> list[dict[str, Any]]:
        """The toxics the server has on the proxy now (its word, not ours)."""
        return list(self.api.proxies()[self._proxy(proxy).name].get("toxics") or [])

    # -- cleanliness -----------------------------------------------------------
    def reset(self) -> None:
        """Remove every toxic and re-enable every proxy on the server (``POST /reset``)."""
        try:
            self.api.reset()
        except ToxiproxyHTTPError:
            raise NetworkFaultError(
                f"Toxiproxy /reset failed at {self.server.api_url}; log tail:\n{self.server.log_tail()}"
            ) from None
        self.history.clear()

    def leftovers(self) -> list[str]:
        """What is left behind on the server, one line each (empty when clean)."""
        problems = []
        for name, state in sorted(self.api.proxies().items()):
            if name not in self.proxies:
                problems.append(
                    f"proxy {name!r} ({state.get('listen')} -> {state.get('upstream')}) "
                    "was not created by this harness run"
                )
            if not state.get("enabled"):
                problems.append(f"proxy {name!r} is disabled (down)")
            for toxic in state.get("toxics") or []:
                problems.append(
                    f"proxy {name!r} still has toxic {toxic.get('name')!r} "
                    f"({toxic.get('type')}, {toxic.get('stream')}, {toxic.get('attributes')})"
                )
        return problems

    def verify_clean(self) -> None:
        problems = self.leftovers()
        if problems:
            raise NetworkFaultsLeftBehind(
                "network faults left behind on " + self.server.api_url + ":\n  " + "\n  ".join(problems)
            )

    def close(self) -> list[str]:
        """Destroy every proxy this instance created; returns problems (empty when all went)."""
        problems = []
        for name in list(self.proxies):
            try:
                self.api.delete_proxy(name)
            except ToxiproxyHTTPError as exc:
                if exc.status != 404:  # 404: gone already, which is what we want
                    problems.append(f"could not destroy proxy {name!r}")
                    continue
            except Exception as exc:
                problems.append(f"could not destroy proxy {name!r}: {exc}")
                continue
            del self.proxies[name]
        return problems

    def __enter__(self) -> NetworkFaults:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
