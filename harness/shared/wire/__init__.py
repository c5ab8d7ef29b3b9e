"""A MongoDB wire-protocol proxy that emulates fail points (docs/wire-proxy.md).

For targets that refuse ``configureFailPoint``: the driver talks to the
proxy, the proxy talks to the target and fails commands as the server's
``failCommand`` and ``failGetMoreAfterCursorCheckout`` would. It can also reshape change-stream
cursor replies the way older servers wrote them (:mod:`harness.shared.wire.shaping`), and
present one replica-set member as several (:mod:`harness.shared.wire.replica_set`, an emulation).
"""

from harness.shared.wire.failcommand import FailPointConfigError, FailPointSet
from harness.shared.wire.proxy import WireProxy
from harness.shared.wire.replica_set import EmulatedReplicaSet, ReplicaSetConfigError
from harness.shared.wire.shaping import PROFILES, ReplyShaping, ShapingConfig, ShapingConfigError

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
