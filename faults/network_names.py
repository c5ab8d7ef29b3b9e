"""Which tests schedule network faults, decided without importing any Toxiproxy code.

A run without ``--network-faults`` (and without the ``faults`` extra
installed) still has to recognise such tests to skip them with the reason.
"""

from __future__ import annotations

from harness.core.model import TEST_RUNNER, SpecTest

NO_NETWORK_FAULTS = "network faults need --network-faults / a Toxiproxy server"
OPERATION_NAMES = ("networkFault", "clearNetworkFaults")


def uses_network_faults(test: SpecTest) -> bool:
    """Whether a test schedules network faults: a run without them can skip it with :data:`NO_NETWORK_FAULTS`."""
    return any(op.object == TEST_RUNNER and op.name in OPERATION_NAMES for op in test.operations)
