"""A MongoDB wire-protocol proxy that emulates fail points (docs/wire-proxy.md).

For targets that refuse ``configureFailPoint``: the driver talks to the
proxy, the proxy talks to the target and fails commands as the server's
``failCommand`` and ``failGetMoreAfterCursorCheckout`` would. It can also reshape change-stream
cursor replies the way older servers wrote them (:mod:`faults.wire.shaping`), and
present one replica-set member as several (:mod:`faults.wire.replica_set`, an emulation).
"""

from faults.wire.failcommand import FailPointConfigError, FailPointSet
from faults.wire.proxy import WireProxy
from faults.wire.replica_set import EmulatedReplicaSet, ReplicaSetConfigError
from faults.wire.shaping import PROFILES, ReplyShaping, ShapingConfig, ShapingConfigError

__all__ = [
    "PROFILES",
    "EmulatedReplicaSet",
    "FailPointConfigError",
    "FailPointSet",
    "ReplicaSetConfigError",
    "ReplyShaping",
    "ShapingConfig",
    "ShapingConfigError",
    "WireProxy",
]
