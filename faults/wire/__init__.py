"""A MongoDB wire-protocol proxy that emulates fail points (docs/wire-proxy.md).

For targets that refuse ``configureFailPoint``: the driver talks to the
proxy, the proxy talks to the target and fails commands as the server's
``failCommand`` and ``failGetMoreAfterCursorCheckout`` would.
"""

from faults.wire.failcommand import FailPointConfigError, FailPointSet
from faults.wire.proxy import WireProxy

__all__ = ["FailPointConfigError", "FailPointSet", "WireProxy"]
