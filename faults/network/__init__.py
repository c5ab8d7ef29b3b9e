"""Network faults through a real Toxiproxy server (``scripts/install-toxiproxy.sh`` installs it).

    with ToxiproxyServer() as server, NetworkFaults(server) as faults:
        proxy = faults.add_proxy("127.0.0.1:27017")
        client = MongoClient(proxied_uri(uri, proxy.listen))
        faults.add_toxic(Toxic("latency", attributes={"latency": 200}))
        ...
        faults.reset(); faults.verify_clean()

See docs/network-faults.md for the scenario-file operations.
"""

from importlib import import_module
from typing import Any

#: Public names -> the module that defines them. Imported on first use (PEP 562), so that the plug-in and the
#: scenario operations (:mod:`faults.network.ops`) can be imported by a run without network faults, and without
#: the ``faults`` extra, without loading Toxiproxy's HTTP client.
_EXPORTS = {
    "NetworkFaults": "faults.network.faults",
    "NetworkFaultsLeftBehind": "faults.network.faults",
    "Proxy": "faults.network.faults",
    "ToxiproxyServer": "faults.network.server",
    "ToxiproxyUnavailable": "faults.network.server",
    "find_binary": "faults.network.server",
    "TOXIC_ATTRIBUTES": "faults.network.toxics",
    "NetworkFaultError": "faults.network.toxics",
    "Toxic": "faults.network.toxics",
    "proxied_uri": "faults.network.uri",
    "single_host": "faults.network.uri",
}
#: The same names as ``_EXPORTS``, written out: tools read ``__all__`` without running the module
#: (tests/faults/network/test_exports.py keeps the two equal).
__all__ = [
    "TOXIC_ATTRIBUTES",
    "NetworkFaultError",
    "NetworkFaults",
    "NetworkFaultsLeftBehind",
    "Proxy",
    "Toxic",
    "ToxiproxyServer",
    "ToxiproxyUnavailable",
    "find_binary",
    "proxied_uri",
    "single_host",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
