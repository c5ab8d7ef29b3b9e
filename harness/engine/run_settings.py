"""How a run carries out each spec test (deadlines, iteration mode, schema strictness, early verdicts).

Its own module because both the run-wide :class:`~harness.engine.spec_runner.SpecRunner` and the per-test
:class:`~harness.engine.spec_case.SpecCase` read it, and neither may import the other's module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RunSettings:
    test_timeout_s: float = 30.0
    iteration_timeout_s: float = 10.0
    #: How every scope consumes its change streams (``--iteration-mode``, a name from
    #: :data:`harness.core.ports.ITERATION_MODES`); None: the driver's default.
    iteration_mode: str | None = None
    #: A test whose file has a schema format but was loaded without one (no schema found) is an error.
    require_schema: bool = False
    #: An iteration that gets no change may end before its budget once the change can no longer come (docs/causes.md
    #: section 4), for a driver that can tell (``DriverAdapter.early_no_change``); False: every one waits its budget.
    early_no_change: bool = True
