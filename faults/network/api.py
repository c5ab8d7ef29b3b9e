"""The harness's whole Toxiproxy client: a few calls of Toxiproxy's HTTP API over ``requests``.

Every Toxiproxy call the harness makes goes through :class:`ToxiproxyAPI`:
readiness and state (``GET /version``, ``GET /proxies``, ``GET
/proxies/{name}``), proxies (``POST /proxies``, ``PATCH`` and ``DELETE
/proxies/{name}``), toxics (``POST /proxies/{name}/toxics``, ``DELETE
/proxies/{name}/toxics/{toxic}``) and ``POST /reset``. It is written here
rather than taken from a client library because the harness needs four things
at once that the Python client (``toxiproxy-python`` 0.1.1) does not give:

* a per-instance address: each :class:`ToxiproxyAPI` talks to its own
  ``base_url``, so two servers in one process stay apart with no process-wide
  state and no lock (that library keeps the address in class attributes);
* timeouts on every request, so a port that accepts but never answers fails
  the call instead of hanging the harness;
* no proxy environment: the session ignores ``HTTP_PROXY`` and friends
  (``trust_env=False``), since the API is on loopback and must never be sent
  through a corporate proxy;
* a checked status: every reply of 400 or more raises
  :class:`ToxiproxyHTTPError` (a :class:`NetworkFaultError` carrying the
  status and body), so a proxy that failed to re-bind its port on ``up``, or
  a refused toxic, is never taken for a success. Enabling and disabling use
  ``PATCH`` (``POST /proxies/{name}`` is deprecated and logs a warning).

Callers (:mod:`faults.network.faults`) map the statuses that mean something
to them (409 exists, 404 not found, 400 refused) to their own messages.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import requests

from faults.network.toxics import NetworkFaultError

DEFAULT_TIMEOUT_S = 5.0


class ToxiproxyHTTPError(NetworkFaultError):
    """Toxiproxy answered a call with an HTTP status of 400 or more."""

    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


def _segment(name: str) -> str:
    return quote(name, safe="")


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
            body = response.text.strip()
            raise ToxiproxyHTTPError(
                f"Toxiproxy API {method} {path} answered {response.status_code}: {body[:300]}",
                status=response.status_code,
                body=body,
            )
        return response

    # -- server ----------------------------------------------------------------
    def version(self) -> str:
        return str(self._call("GET", "/version").json().get("version", "unknown"))

    def reset(self) -> None:
        """Remove every toxic and re-enable every proxy (``POST /reset``)."""
        self._call("POST", "/reset")

    # -- proxies ---------------------------------------------------------------
    def proxies(self) -> dict[str, dict[str, Any]]:
        """Every proxy the server has, with its ``enabled`` flag and ``toxics`` list."""
        return self._call("GET", "/proxies").json()

    def proxy(self, name: str) -> dict[str, Any]:
        """One proxy's state (404 -> :class:`ToxiproxyHTTPError` with ``status == 404``)."""
        return self._call("GET", f"/proxies/{_segment(name)}").json()

    def create_proxy(
        self, name: str, upstream: str, listen: str = "127.0.0.1:0", enabled: bool = True
    ) -> dict[str, Any]:
        """A new proxy; the reply's ``listen`` is the real address (the port the server picked for ``:0``).

        409 when a proxy of that name exists.
        """
        body = {"name": name, "listen": listen, "upstream": upstream, "enabled": enabled}
        return self._call("POST", "/proxies", json=body).json()

    def set_enabled(self, proxy: str, enabled: bool) -> dict[str, Any]:
        return self._call("PATCH", f"/proxies/{_segment(proxy)}", json={"enabled": enabled}).json()

    def delete_proxy(self, name: str) -> None:
        """Destroy the proxy and close its connections (404 when there is none)."""
        self._call("DELETE", f"/proxies/{_segment(name)}")

    # -- toxics ----------------------------------------------------------------
    def add_toxic(self, proxy: str, toxic: dict[str, Any]) -> dict[str, Any]:
        """Install a toxic, ``{name, type, stream, toxicity, attributes}`` (:meth:`Toxic.as_api`).

        404: no such proxy; 409: the proxy has a toxic of that name; 400: the server refused the toxic.
        """
        return self._call("POST", f"/proxies/{_segment(proxy)}/toxics", json=toxic).json()

    def delete_toxic(self, proxy: str, toxic: str) -> None:
        """Remove a toxic (404 when the proxy or the toxic is not there)."""
        self._call("DELETE", f"/proxies/{_segment(proxy)}/toxics/{_segment(toxic)}")

    def close(self) -> None:
        self._http.close()
