"""The plug-in table: every driver, target, fault backend, suite and command a run can use.

The engine names no plug-in. Plug-ins are modules listed under the
entry-point group :data:`ENTRY_POINT_GROUP` (``pyproject.toml``, or any
installed distribution); each has one function, ``install(registry)``, that
adds its rows here: drivers and targets by the name ``--driver`` and
``--target`` take, fail-point modes (``--failpoints``), test-runner
operations, skip rules, teardown checks, target wrappers, suites and CLI
commands. Adding a target or a fault backend is one module and one entry
point (docs/architecture.md).

The drivers and targets are the catalogue: each is one entry (:class:`DriverEntry`, :class:`TargetEntry`) saying
what it is (its name, kind, argument, releases and how they are got, what it needs installed), and every front
end reads the entry rather than a list of its own: ``--driver``/``--target`` parsing and help, ``harness matrix``
(its axes and release axis), ``harness executor-check --driver``, ``harness certify`` and the generated
docs/catalogue.md (``harness catalogue --markdown``). A name registered twice is the second plug-in's problem,
whatever order the plug-ins install in.

``install`` must stay cheap: it registers factories, and a factory imports
the heavy module (a driver, a server) only when a run asks for it.
"""

from __future__ import annotations

import importlib.metadata
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.core.model import SpecTest
from harness.core.ports import DriverAdapter, DriverUnavailable, FailPointBackend, Target, TargetUnavailable
from harness.engine.operation_table import TEST_RUNNER_OPERATIONS, TestRunnerOperation

if TYPE_CHECKING:
    from harness.engine.run import HarnessRun, RunOptions

ENTRY_POINT_GROUP = "changestream_harness.plugins"
#: ``--driver exec:CMD``: any executor, by its command line (split as a shell would).
EXEC_SCHEME = "exec:"
#: A driver's name at the start of ``--driver NAME[@RELEASE|=ARGUMENT]``.
_DRIVER_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class FailPointSetup:
    """What a fail-point mode gives a run: the backend, where drivers connect, what to stop at the end."""

    backend: FailPointBackend
    driver_uri: str
    stop: Callable[[], None] | None = None


#: Driver kinds: in the harness's own process, or an executor speaking docs/executor-protocol.md.
IN_PROCESS = "in-process"
EXECUTOR = "executor"


@dataclass(frozen=True)
class Releases:
    """How a driver or target is had at another release than the one the harness pins (``harness matrix``'s
    release axis): ``NAME@RELEASE`` for a driver, a release in the argument or the matrix's ``secantusdb`` axis
    for a target."""

    #: One line for people: where a release comes from and how it is got.
    how: str
    #: One release, for messages and docs (``4.18.3``).
    example: str
    #: The Python package a matrix cell installs into its environment at the release (``pymongo``,
    #: ``secantusdb``); None: the harness gets the release itself when a run names it (built or installed into
    #: its cache on first use: ``node@6.10.0``, ``mongo-java-server=1.47.0``).
    package: str | None = None


@dataclass(frozen=True)
class DriverEntry:
    """One driver of the catalogue: ``--driver NAME``, and ``NAME@RELEASE`` / ``NAME=ARGUMENT`` when it takes them."""

    name: str
    help: str
    #: :data:`IN_PROCESS` or :data:`EXECUTOR`.
    kind: str
    #: ``--driver NAME``: the adapter (not yet started).
    make: Callable[[], DriverAdapter]
    #: What checks (and builds) the driver's prerequisites at the start of a run: raises
    #: :class:`DriverUnavailable` with the command that fixes it (:meth:`Registry.check_driver`).
    set_up: Callable[[], None] | None = None
    #: Its releases; None: only the one the harness pins.
    releases: Releases | None = None
    #: ``--driver NAME@RELEASE`` (set up when made); None when a release is the environment's (``releases.package``).
    make_release: Callable[[str], DriverAdapter] | None = None
    #: ``--driver NAME=ARGUMENT`` (``node=PATH``): what the argument is, for help, and the adapter it makes.
    argument: str = ""
    make_with_argument: Callable[[str], DriverAdapter] | None = None
    #: An executor's command line for what follows the name (``""``, ``@RELEASE``, ``=ARGUMENT``), set up or built
    #: first: what ``harness executor-check --driver`` checks, the very executor ``harness run --driver`` starts.
    command: Callable[[str], str | list[str]] | None = None


@dataclass(frozen=True)
class TargetEntry:
    """One target of the catalogue: ``--target NAME`` or ``NAME=ARGUMENT``."""

    name: str
    help: str
    #: ``make(argument)``: the target (not yet started); ``argument`` is None without ``=``.
    make: Callable[[str | None], Target]
    #: What ``=ARGUMENT`` is, for help and docs ("" when it takes none).
    argument: str = ""
    #: Whether each run gets a deployment of its own (the harness starts it): then parallel workers
    #: never share a server. False for deployments the user runs (``uri=``).
    isolated: bool = True
    #: Run once in a parent before it forks parallel workers, so each worker's start is cheaper.
    warm_up: Callable[[], None] | None = None
    #: Its releases (a package a matrix cell installs, or a release in its argument); None: a deployment taken
    #: as it is, its version whatever it reports (a real server).
    releases: Releases | None = None
    #: ``harness matrix``'s check of an argument before anything is built: the argument a cell runs with, or
    #: :class:`TargetUnavailable` saying why not (default: no argument at all).
    matrix_argument: Callable[[str | None], str | None] | None = None
    #: The harness's extras (``pyproject.toml``) a matrix cell's environment installs for it.
    extras: tuple[str, ...] = ()

    def checked_matrix_argument(self, argument: str | None) -> str | None:
        if self.matrix_argument is not None:
            return self.matrix_argument(argument)
        if argument is not None:
            raise TargetUnavailable(f"target {self.name} does not take {argument!r} in a matrix")
        return None


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
    #: A suite of spec files: its parts by name, each with where the main job reads it by default as ``--specs``
    #: takes it (``harness matrix`` runs the parts as ``legacy``, ``unified``...).
    parts: Callable[[], dict[str, str]] | None = None
    #: A suite of spec files: whether a ``--specs`` value is a source to fetch (``project:``, ``pypi:``, ``git:``)
    #: rather than a path.
    is_source: Callable[[str], bool] | None = None


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
    #: Whether it starts processes (servers, executors) that must end with it however the harness dies.
    starts_processes: bool = False
    #: The values some of its options take, for front ends that pass them on and check them first
    #: (``harness matrix`` checks a campaign's ``kinds``).
    choices: Callable[[], dict[str, tuple[str, ...]]] | None = None


@dataclass
class Registry:
    #: The catalogue's drivers, by the name ``--driver`` takes.
    drivers: dict[str, DriverEntry] = field(default_factory=dict)
    #: ``--driver PREFIX+ARGUMENT`` -> ``factory(ARGUMENT)``: a driver outside the catalogue (``exec:CMD``: any
    #: executor by its command line), with one line of help.
    driver_schemes: dict[str, tuple[Callable[[str], DriverAdapter], str]] = field(default_factory=dict)
    #: The catalogue's targets, by the name ``--target`` takes.
    targets: dict[str, TargetEntry] = field(default_factory=dict)
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
    def add_driver(self, entry: DriverEntry) -> None:
        """One driver of the catalogue; a name another plug-in registered is refused (that plug-in's problem)."""
        if entry.name in self.drivers or entry.name in self.driver_schemes:
            raise ValueError(f"driver {entry.name!r} is registered twice")
        self.drivers[entry.name] = entry

    def add_driver_scheme(self, prefix: str, factory: Callable[[str], DriverAdapter], help: str = "") -> None:
        if prefix in self.driver_schemes:
            raise ValueError(f"driver scheme {prefix!r} is registered twice")
        self.driver_schemes[prefix] = (factory, help)

    def add_target(self, entry: TargetEntry) -> None:
        """One target of the catalogue; a name another plug-in registered is refused (that plug-in's problem)."""
        if entry.name in self.targets:
            raise ValueError(f"target {entry.name!r} is registered twice")
        self.targets[entry.name] = entry

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
    def driver_entry(self, spec: str) -> tuple[DriverEntry, str]:
        """``--driver NAME[@RELEASE|=ARGUMENT]`` -> its catalogue entry and what follows the name (``""``,
        ``@6.10.0``, ``=PATH``); an unknown name, or a release or argument the driver does not take, is refused."""
        name = _DRIVER_NAME.match(spec)
        entry = self.drivers.get(name.group(0) if name else spec)
        if entry is None:
            raise DriverUnavailable(
                f"unknown driver {spec!r}; known drivers: {', '.join(self.driver_names())}" + self._problem_note()
            )
        rest = spec[len(entry.name) :]
        if (rest[:1] == "@" and entry.make_release is None) or (rest[:1] == "=" and entry.make_with_argument is None):
            takes = "a release as NAME@RELEASE" if rest[:1] == "@" else "an argument as NAME=ARGUMENT"
            raise DriverUnavailable(f"--driver {spec}: the {entry.name} driver does not take {takes}")
        return entry, rest

    def driver_names(self) -> list[str]:
        """Every ``--driver`` the catalogue and the schemes take, sorted (for messages and help)."""
        return sorted([*self.drivers, *(f"{prefix}..." for prefix in self.driver_schemes)])

    def make_driver(self, name: str) -> DriverAdapter:
        for prefix in sorted(self.driver_schemes, key=len, reverse=True):
            if name.startswith(prefix):
                return self.driver_schemes[prefix][0](name[len(prefix) :])
        entry, rest = self.driver_entry(name)
        if rest[:1] == "@" and entry.make_release is not None:
            return entry.make_release(rest[1:])
        if rest[:1] == "=" and entry.make_with_argument is not None:
            return entry.make_with_argument(rest[1:])
        return entry.make()

    def check_driver(self, name: str) -> None:
        """Refuse (:class:`DriverUnavailable`) a ``--driver`` this machine cannot run, before anything starts:
        an unknown name, or a known driver whose runtime or packages are missing. A scheme's driver
        (``exec:CMD``) and a release or argument (``node@SPEC``, ``node=PATH``) are set up when made."""
        if any(name.startswith(prefix) for prefix in self.driver_schemes):
            return
        entry, rest = self.driver_entry(name)
        if not rest and entry.set_up is not None:
            entry.set_up()

    def executor_command(self, name: str) -> str | list[str] | None:
        """The command line ``--driver NAME`` runs its executor with (set up, or built, first: a machine that
        cannot run it raises :class:`DriverUnavailable`); None for a driver in the harness's process."""
        for prefix in self.driver_schemes:
            if name.startswith(prefix):
                return name[len(prefix) :] if prefix == EXEC_SCHEME else None
        entry, rest = self.driver_entry(name)
        if entry.command is None:
            return None
        if not rest and entry.set_up is not None:
            entry.set_up()
        return entry.command(rest)

    def make_target(self, spec: str) -> Target:
        """``"uri=mongodb://..."`` -> a target (not yet started), by ``NAME`` or ``NAME=ARGUMENT``."""
        name, _, argument = spec.partition("=")
        entry = self.targets.get(name)
        if entry is None:
            raise TargetUnavailable(
                f"unknown target {name!r}; known targets: {', '.join(sorted(self.targets))}" + self._problem_note()
            )
        return entry.make(argument or None)

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
    try:
        hook(registry)
    except Exception as exc:  # a name another plug-in registered, a broken plug-in: its problem, said at run start
        registry.problems.append(f"{name} ({_module_name(module)}): {type(exc).__name__}: {exc}")
        return
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


def _module_name(module: Any) -> str:
    """A plug-in module's dotted name (anything else loaded in its place: its repr)."""
    return module.__name__ if isinstance(module, types.ModuleType) else repr(module)
