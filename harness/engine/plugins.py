"""The plug-in table: every driver, target, fault backend, suite and command a run can use.

The engine names no plug-in. Plug-ins are modules listed under the
entry-point group :data:`ENTRY_POINT_GROUP` (``pyproject.toml``, or any
installed distribution); each has one function, ``install(registry)``, that
adds its rows here: drivers and targets by the name ``--driver`` and
``--target`` take, fail-point modes (``--failpoints``), test-runner
operations, skip rules, teardown checks, target wrappers, suites and CLI
commands. Adding a target or a fault backend is one module and one entry
point (docs/architecture.md).

``install`` must stay cheap: it registers factories, and a factory imports
the heavy module (a driver, a server) only when a run asks for it.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.core.model import SpecTest
from harness.core.ports import DriverAdapter, DriverUnavailable, FailPointBackend, Target, TargetUnavailable
from harness.engine.operation_table import TEST_RUNNER_OPERATIONS, TestRunnerOperation

if TYPE_CHECKING:
    from harness.engine.run import HarnessRun, RunOptions

ENTRY_POINT_GROUP = "changestream_harness.plugins"


@dataclass
class FailPointSetup:
    """What a fail-point mode gives a run: the backend, where drivers connect, what to stop at the end."""

    backend: FailPointBackend
    driver_uri: str
    stop: Callable[[], None] | None = None


@dataclass
class TargetKind:
    factory: Callable[[str | None], Target]
    help: str
    #: Whether each run gets a deployment of its own (the harness starts it): then parallel workers
    #: never share a server. False for deployments the user runs (``uri=``).
    isolated: bool = True
    #: Run once in a parent before it forks parallel workers, so each worker's start is cheaper.
    warm_up: Callable[[], None] | None = None


@dataclass
class Suite:
    """Tests a run can select with ``--suite``: ``collect(specs)`` returns them in run order."""

    name: str
    help: str
    collect: Callable[[list[Any]], list[Any]]
    #: Where the suite's tests come in ``--suite all`` (lower first).
    order: int = 50
    #: Whether ``--suite all`` includes it (a long campaign is asked for by name).
    in_all: bool = True


@dataclass(frozen=True)
class FrontEnd:
    """What the app hands a plug-in's command, which may not import the app (layers): its run, composed."""

    #: The run options the command was given, read by the app's one options table (rows it did not take: defaults).
    options: RunOptions
    #: The composition root's ``new_run(options)``: a run with every plug-in and the project's rule mapping.
    new_run: Callable[[RunOptions], HarnessRun]


@dataclass
class PluginCommand:
    """A ``harness`` subcommand a plug-in brings (``harness campaign``); ``run(args, front_end)`` is its exit status."""

    name: str
    help: str
    add_arguments: Callable[[Any], None]
    run: Callable[[Any, FrontEnd], int]
    #: The rows of the app's run-options table the command takes (``driver``, ``target``...), declared on its
    #: parser as ``harness run`` declares them.
    run_options: tuple[str, ...] = ()


@dataclass
class Registry:
    drivers: dict[str, Callable[[], DriverAdapter]] = field(default_factory=dict)
    #: ``--driver PREFIX+ARGUMENT`` -> ``factory(ARGUMENT)``, the longest matching prefix winning (``exec:CMD``: any
    #: executor by its command line; ``node@6.x``: a release of the Node driver).
    driver_schemes: dict[str, Callable[[str], DriverAdapter]] = field(default_factory=dict)
    #: ``--driver NAME`` -> what checks (and builds) its prerequisites at the start of a run (:meth:`add_driver`).
    driver_set_up: dict[str, Callable[[], None]] = field(default_factory=dict)
    targets: dict[str, TargetKind] = field(default_factory=dict)
    #: ``--failpoints`` modes: ``mode(target) -> FailPointSetup`` on a started target.
    failpoint_modes: dict[str, Callable[[Target], FailPointSetup]] = field(default_factory=dict)
    #: ``wrapper(target, options) -> target``: what sits between drivers and the target (Toxiproxy).
    target_wrappers: list[Callable[[Target, Any], Target]] = field(default_factory=list)
    #: ``rule(test, target) -> reason | None``: a spec test this run cannot carry out.
    skip_rules: list[Callable[[SpecTest, Target], str | None]] = field(default_factory=list)
    #: ``route(test, target, driver_uri) -> route | None``: a spec test whose clients must connect elsewhere
    #: (``route.uri``: a wire proxy started for it); ``route.close() -> problems`` when the test closes.
    driver_routes: list[Callable[[SpecTest, Target, str], Any]] = field(default_factory=list)
    #: ``check(target) -> problems``: after every test, leave the target clean and say what was not.
    teardown_checks: list[Callable[[Target], list[str]]] = field(default_factory=list)
    suites: dict[str, Suite] = field(default_factory=dict)
    commands: dict[str, PluginCommand] = field(default_factory=dict)
    #: Plug-ins that could not be installed, with why: shown at run start and recorded.
    problems: list[str] = field(default_factory=list)
    installed: list[str] = field(default_factory=list)

    # -- what install() calls ---------------------------------------------------------------
    def add_driver(
        self, name: str, factory: Callable[[], DriverAdapter], set_up: Callable[[], None] | None = None
    ) -> None:
        """``factory()`` makes the driver; ``set_up()``, when given, raises :class:`DriverUnavailable` (with the
        command that fixes it) if the machine lacks what the driver needs, and builds what it can build, before
        the run starts its target or any worker (:meth:`check_driver`)."""
        self.drivers[name] = factory
        if set_up is not None:
            self.driver_set_up[name] = set_up

    def add_driver_scheme(self, prefix: str, factory: Callable[[str], DriverAdapter]) -> None:
        self.driver_schemes[prefix] = factory

    def add_target(
        self,
        name: str,
        factory: Callable[[str | None], Target],
        help: str = "",
        isolated: bool = True,
        warm_up: Callable[[], None] | None = None,
    ) -> None:
        self.targets[name] = TargetKind(factory, help, isolated, warm_up)

    def isolated(self, spec: str) -> bool:
        """Whether the target ``NAME[=ARGUMENT]`` is started afresh by each run (so by each parallel worker)."""
        kind = self.targets.get(spec.partition("=")[0])
        return kind is not None and kind.isolated

    def add_failpoint_mode(self, name: str, mode: Callable[[Target], FailPointSetup]) -> None:
        self.failpoint_modes[name] = mode

    def add_operation(self, name: str, operation: TestRunnerOperation) -> None:
        """A test-runner operation (``object: testRunner``), found by the spec runner by its name."""
        TEST_RUNNER_OPERATIONS[name] = operation

    def add_target_wrapper(self, wrapper: Callable[[Target, Any], Target]) -> None:
        self.target_wrappers.append(wrapper)

    def add_skip_rule(self, rule: Callable[[SpecTest, Target], str | None]) -> None:
        self.skip_rules.append(rule)

    def add_driver_route(self, route: Callable[[SpecTest, Target, str], Any]) -> None:
        self.driver_routes.append(route)

    def add_teardown_check(self, check: Callable[[Target], list[str]]) -> None:
        self.teardown_checks.append(check)

    def add_suite(self, suite: Suite) -> None:
        self.suites[suite.name] = suite

    def add_command(self, command: PluginCommand) -> None:
        self.commands[command.name] = command

    # -- what a run calls ----------------------------------------------------------------------
    def make_driver(self, name: str) -> DriverAdapter:
        if name not in self.drivers:
            for prefix in sorted(self.driver_schemes, key=len, reverse=True):
                if name.startswith(prefix):
                    return self.driver_schemes[prefix](name[len(prefix) :])
        try:
            factory = self.drivers[name]
        except KeyError:
            raise DriverUnavailable(
                f"unknown driver {name!r}; known drivers: {', '.join(sorted(self.drivers))}" + self._problem_note()
            ) from None
        return factory()

    def check_driver(self, name: str) -> None:
        """Refuse (:class:`DriverUnavailable`) a ``--driver`` this machine cannot run, before anything starts:
        an unknown name, or a known driver whose runtime or packages are missing. A scheme's driver
        (``exec:CMD``, ``node@SPEC``) is set up when it is made."""
        if any(name.startswith(prefix) for prefix in self.driver_schemes) and name not in self.drivers:
            return
        if name not in self.drivers:
            self.make_driver(name)  # raises, naming the known drivers
        set_up = self.driver_set_up.get(name)
        if set_up is not None:
            set_up()

    def make_target(self, spec: str) -> Target:
        """``"uri=mongodb://..."`` -> a target (not yet started), by ``NAME`` or ``NAME=ARGUMENT``."""
        name, _, argument = spec.partition("=")
        kind = self.targets.get(name)
        if kind is None:
            raise TargetUnavailable(
                f"unknown target {name!r}; known targets: {', '.join(sorted(self.targets))}" + self._problem_note()
            )
        return kind.factory(argument or None)

    def failpoint_setup(self, mode: str, target: Target) -> FailPointSetup:
        chosen = self.failpoint_modes.get(mode)
        if chosen is None:
            raise TargetUnavailable(
                f"--failpoints must be one of {tuple(self.failpoint_modes)}, got {mode!r}" + self._problem_note()
            )
        return chosen(target)

    def _problem_note(self) -> str:
        return f" (plug-ins not installed: {'; '.join(self.problems)})" if self.problems else ""


def install(registry: Registry, name: str, module: Any) -> None:
    """Call one plug-in's ``install``; a plug-in that fails is a recorded problem, not a crashed run."""
    hook = getattr(module, "install", None)
    if not callable(hook):
        registry.problems.append(f"{name}: {module!r} has no install(registry)")
        return
    hook(registry)
    registry.installed.append(name)


_LOADED: Registry | None = None


def load_plugins() -> Registry:
    """The registry with every installed plug-in, built once per process (in entry-point name order)."""
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    registry = Registry()
    points = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name)
    if not points:
        registry.problems.append(
            f"no plug-ins found under the entry-point group {ENTRY_POINT_GROUP!r}: "
            "install the harness (`python -m pip install -e .`) so its plug-ins are registered"
        )
    seen: set[str] = set()
    for point in points:
        if point.name in seen:  # the same distribution seen twice on sys.path
            continue
        seen.add(point.name)
        try:
            install(registry, point.name, point.load())
        except Exception as exc:
            registry.problems.append(f"{point.name} ({point.value}): {type(exc).__name__}: {exc}")
    _LOADED = registry
    return registry
