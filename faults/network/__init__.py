"""Network faults through a real Toxiproxy server (``scripts/install-toxiproxy.sh`` installs it).

    with ToxiproxyServer() as server, NetworkFaults(server) as faults:
        proxy = faults.add_proxy("127.0.0.1:27017")
        client = MongoClient(proxied_uri(uri, proxy.listen))
        faults.add_toxic(Toxic("latency", attributes={"latency": 200}))
        ...
        faults.reset(); faults.verify_clean()

See docs/network-faults.md for the scenario-file operations.
"""

from faults.network.faults import NetworkFaults, NetworkFaultsLeftBehind, Proxy
from faults.network.server import ToxiproxyServer, ToxiproxyUnavailable, find_binary
from faults.network.toxics import TOXIC_ATTRIBUTES, NetworkFaultError, Toxic
from faults.network.uri import proxied_uri, single_host

__all__ = ["NetworkFaults", "NetworkFaultsLeftBehind", "Proxy", "ToxiproxyServer", "ToxiproxyUnavailable",
           "find_binary", "TOXIC_ATTRIBUTES", "NetworkFaultError", "Toxic", "proxied_uri", "single_host"]
