"""The few Toxiproxy HTTP calls the harness makes itself, not through ``toxiproxy-python``.

``toxiproxy-python`` 0.1.1 is used for creating and destroying proxies and
toxics (see :mod:`faults.network.faults`). These calls are done here instead,
each for a reason the library cannot meet:

* readiness and state (``GET /version``, ``GET /proxies``): the library's
  requests have no timeout, so a port that accepts but never answers would
  hang the harness; and ``verify_clean`` must read the server's own state,
  not the library's cached ``Proxy`` objects;
* enabling/disabling a proxy: the library sends the deprecated ``POST
  /proxies/{name}`` (the server logs a warning each time) and ignores any
  5xx reply, so a proxy that failed to re-bind its port on ``up`` would be
  reported as up. ``PATCH`` with the status checked is what we need.

The session ignores ``HTTP_PROXY`` and friends (``trust_env=False``): the API
is on loopback and must never be sent through a corporate proxy.
"""

from __future__ import annotations

from typing import Any

import requests

from faults.network.toxics import NetworkFaultError

DEFAULT_TIMEOUT_S = 5.0


class ToxiproxyAPI:
    def __init__(self, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self._http = requests.Session()
        self._http.trust_env = False

    def _call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        try:
            response = self._http.request(method, self.base_url + path, timeout=self.timeout_s, **kwargs)
        except requests.RequestException as exc:
            raise NetworkFaultError(f"Toxiproxy API {method} {path} at {self.base_url} failed: {exc}") from exc
        if response.status_code >= 400:
            raise NetworkFaultError(f"Toxiproxy API {method} {path} answered {response.status_code}: "
                                    f"{response.text.strip()[:300]}")
        return response

    def version(self) -> str:
        return str(self._call("GET", "/version").json().get("version", "unknown"))

    def proxies(self) -> dict[str, dict[str, Any]]:
        """Every proxy the server has, with its ``enabled`` flag and ``toxics`` list."""
        return self._call("GET", "/proxies").json()

    def set_enabled(self, proxy: str, enabled: bool) -> dict[str, Any]:
        return self._call("PATCH", f"/proxies/{proxy}", json={"enabled": enabled}).json()

    def close(self) -> None:
        self._http.close()
