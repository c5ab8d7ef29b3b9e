"""Proxies in front of targets, and the toxics and outages put on them.

:class:`NetworkFaults` creates one Toxiproxy proxy per target address (the
server picks a free ``127.0.0.1`` port), adds and removes toxics, takes a
proxy down and up, and guarantees cleanliness: :meth:`NetworkFaults.reset`
removes every toxic and re-enables every proxy, :meth:`NetworkFaults.verify_clean`
asks the server and raises if anything is left, and :meth:`NetworkFaults.close`
destroys every proxy whatever happened before.

Proxies and toxics are created through ``toxiproxy-python`` 0.1.1. That
library keeps the API address in class attributes of ``APIConsumer`` (one
address per *process*), so every library call here runs under one lock with
the address pointed at this instance's server: two ``NetworkFaults`` on two
servers in one process stay correct. See :mod:`faults.network.api` for the
calls made without the library, and why.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from toxiproxy import Toxiproxy
from toxiproxy.api import APIConsumer
from toxiproxy.exceptions import InvalidToxic, NotFound, ProxyExists

from faults.network.server import ToxiproxyServer
from faults.network.toxics import NetworkFaultError, Toxic

_LIBRARY_LOCK = threading.RLock()


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
        self._library = Toxiproxy()

    @contextmanager
    def _client(self) -> Iterator[Toxiproxy]:
        with _LIBRARY_LOCK:
            APIConsumer.host, APIConsumer.port = self.server.host, self.server.port
            yield self._library

    # -- proxies ---------------------------------------------------------------
    def add_proxy(self, upstream: str, name: str | None = None) -> Proxy:
        """A proxy listening on a free loopback port and forwarding to ``upstream`` (``host:port``)."""
        name = name or f"target{len(self.proxies)}"
        with self._client() as library:
            try:
                created = library.create(upstream=upstream, name=name, listen="127.0.0.1:0")
            except ProxyExists:
                raise NetworkFaultError(f"a proxy named {name!r} already exists on {self.server.api_url}") from None
            except KeyError:  # the library reads 'name' from an error body it did not check
                raise NetworkFaultError(f"Toxiproxy refused proxy {name!r} -> {upstream}; log tail:\n"
                                        f"{self.server.log_tail()}") from None
        proxy = Proxy(name=name, listen=created.listen, upstream=upstream)
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

    def _library_proxy(self, library: Toxiproxy, name: str) -> Any:
        found = library.get_proxy(name)
        if found is None:
            raise NetworkFaultError(f"proxy {name!r} is gone from the Toxiproxy server at {self.server.api_url}")
        return found

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
        with self._client() as library:
            try:
                self._library_proxy(library, target.name).add_toxic(**toxic.as_api())
            except ProxyExists:  # the library's name for any 409, here "toxic already exists"
                raise NetworkFaultError(f"proxy {target.name!r} already has a toxic named {toxic.name!r}; "
                                        "give the new one another name") from None
            except InvalidToxic as exc:
                raise NetworkFaultError(f"Toxiproxy refused toxic {toxic.as_api()}: {_body(exc)}") from None
        self.history.append({"proxy": target.name, **toxic.as_api()})
        return toxic.name

    def remove_toxic(self, name: str, proxy: str | None = None) -> None:
        target = self._proxy(proxy)
        with self._client() as library:
            try:
                removed = self._library_proxy(library, target.name).destroy_toxic(name)
            except NotFound:
                raise NetworkFaultError(f"proxy {target.name!r} has no toxic named {name!r}") from None
        if not removed:
            raise NetworkFaultError(f"Toxiproxy failed to remove toxic {name!r} from {target.name!r}")

    def toxics(self, proxy: str | None = None) -> list[dict[str, Any]]:
        """The toxics the server has on the proxy now (its word, not ours)."""
        return list(self.api.proxies()[self._proxy(proxy).name].get("toxics") or [])

    # -- cleanliness -----------------------------------------------------------
    def reset(self) -> None:
        """Remove every toxic and re-enable every proxy on the server (``POST /reset``)."""
        with self._client() as library:
            if not library.reset():
                raise NetworkFaultError(f"Toxiproxy /reset failed at {self.server.api_url}; log tail:\n"
                                        f"{self.server.log_tail()}")
        self.history.clear()

    def leftovers(self) -> list[str]:
        """What is left behind on the server, one line each (empty when clean)."""
        problems = []
        for name, state in sorted(self.api.proxies().items()):
            if name not in self.proxies:
                problems.append(f"proxy {name!r} ({state.get('listen')} -> {state.get('upstream')}) "
                                "was not created by this harness run")
            if not state.get("enabled"):
                problems.append(f"proxy {name!r} is disabled (down)")
            for toxic in state.get("toxics") or []:
                problems.append(f"proxy {name!r} still has toxic {toxic.get('name')!r} "
                                f"({toxic.get('type')}, {toxic.get('stream')}, {toxic.get('attributes')})")
        return problems

    def verify_clean(self) -> None:
        problems = self.leftovers()
        if problems:
            raise NetworkFaultsLeftBehind("network faults left behind on " + self.server.api_url + ":\n  "
                                          + "\n  ".join(problems))

    def close(self) -> list[str]:
        """Destroy every proxy this instance created; returns problems (empty when all went)."""
        problems = []
        with self._client() as library:
            for name in list(self.proxies):
                try:
                    found = library.get_proxy(name)
                    if found is not None and not library.destroy(found):
                        problems.append(f"could not destroy proxy {name!r}")
                        continue
                except Exception as exc:  # noqa: BLE001 - every proxy gets its chance to go
                    problems.append(f"could not destroy proxy {name!r}: {exc}")
                    continue
                del self.proxies[name]
        return problems

    def __enter__(self) -> "NetworkFaults":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _body(exc: Exception) -> str:
    content = exc.args[0] if exc.args else b""
    return content.decode(errors="replace").strip() if isinstance(content, bytes) else str(content)
