"""One fault campaign, from a seed to a result record.

    writer (admin client, direct) ──inserts {_id: seq}──> on-disk SecantusDB <──restarts── nemesis
    consumer (driver under test) ──Toxiproxy──> target           nemesis ──fail points / toxics──┘

The nemesis thread applies the schedule's faults one at a time as the
consumer's progress passes each ``at_event``; the writer thread inserts with
backpressure; the consumer iterates until it has every seq (or the deadline
passes). Then everything is removed and checked, the checker judges delivery,
and one ``format: campaign`` record is written.

A campaign is a :class:`~harness.engine.lifecycle.Case` run by an ordinary
:class:`~harness.engine.run.HarnessRun`, opened by the composition root for
``harness campaign``: the target comes from the target table (the embedded
SecantusDB on disk in a scratch directory, so it can be restarted), fail
points from the run's ``--failpoints`` mode, Toxiproxy from the network
plug-in when a network kind is asked for, and the record, provenance and
results store from the run, exactly as for spec tests and prose checks.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from faults.campaign.checker import Anomaly, check_delivery, summarise
from faults.campaign.classify import silent_resumes
from faults.campaign.consumer import Consumer, ReachedApplication
from faults.campaign.nemesis import AppliedFault, Nemesis
from faults.campaign.restart import restartable
from faults.campaign.schedule import KINDS, NETWORK_KINDS, TARGET_KINDS, Fault, make_schedule
from faults.campaign.writer import Writer
from harness.core.verdicts import FAILED, PASSED, SKIPPED, Verdict
from harness.engine.lifecycle import Case
from harness.engine.run import CodeDefinedTest, HarnessRun, RunOptions

APP_NAME = "campaign-consumer"
#: The consumer's client: bounded waits, so an outage ends in an error the application handles.
CONSUMER_OPTIONS = {"serverSelectionTimeoutMS": 5000, "connectTimeoutMS": 3000, "socketTimeoutMS": 5000}


@dataclass
class CampaignOptions:
    events: int = 10_000
    faults: int = 50
    seed: int = 42
    kinds: tuple[str, ...] = KINDS
    batch_size: int = 20
    max_lag: int = 300
    #: None: the whole campaign may take ``60 s + 20 ms per event + 3 s per fault``.
    deadline_s: float | None = None
    database: str = "campaign"
    collection: str = "events"
    #: Called with one line of progress now and then (the CLI prints it).
    progress: Callable[[str], None] = lambda line: None


@dataclass
class CampaignResult:
    outcome: str
    message: str
    seed: int
    schedule: list[Fault]
    applied: list[AppliedFault]
    received: int
    anomalies: list[Anomaly]
    errors: list[ReachedApplication]
    problems: list[str]
    driver_resumes: int
    aggregates: int
    duration_s: float
    skipped_kinds: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def disallowed(self) -> list[ReachedApplication]:
        return [e for e in self.errors if not e.allowed]


def run_campaign(
    options: CampaignOptions,
    run_options: RunOptions | None = None,
    new_run: Callable[[RunOptions], HarnessRun] = HarnessRun,
) -> CampaignResult:
    """Run one campaign on a run and return what it found (its record included).

    ``run_options`` are the run's (driver, target, fail points, results, labels: ``harness campaign`` reads them
    with the options table ``harness run`` uses); the campaign sets what is its own: no expected-outcomes file,
    Toxiproxy when a network kind is asked for, and the embedded target on disk. ``new_run`` opens the run (the
    composition root's, from ``harness campaign``). Bad options (an unknown fault kind, no events) raise
    ``ValueError`` before anything starts.
    """
    make_schedule(options.seed, options.events, options.faults, tuple(options.kinds))
    wanted = [k for k in options.kinds if k in NETWORK_KINDS]
    skipped = _network_unavailable(wanted, options)
    check, case = campaign_check(options, skipped)
    given = run_options or RunOptions()
    with tempfile.TemporaryDirectory(prefix="campaign-") as scratch:
        campaign_run = replace(
            given,
            target=_restartable_target(given.target, Path(scratch)),
            expected="none",
            network_faults=bool(wanted) and not skipped,
        )
        with new_run(campaign_run) as run:
            outcome = run.run_test(check)
    if case.result is None:  # the campaign could not even start: the record says why
        case.result = CampaignResult(
            outcome=outcome.outcome,
            message=outcome.message,
            seed=options.seed,
            schedule=[],
            applied=[],
            received=0,
            anomalies=[],
            errors=[],
            problems=[outcome.message],
            driver_resumes=0,
            aggregates=0,
            duration_s=outcome.duration_s,
            skipped_kinds=case.skipped,
        )
    case.result.outcome, case.result.message = outcome.outcome, outcome.message
    case.result.record = outcome.record
    return case.result


def _restartable_target(target: str, scratch: Path) -> str:
    """A SecantusDB target moved to disk so restart faults can restart it: the embedded ones in ``scratch``, the
    daemon with its ``on-disk`` switch; any other target as given (a restart fault on it is skipped, said why)."""
    name, _, argument = target.partition("=")
    if name in ("embedded", "embedded-no-test-commands") and not argument:
        return f"{name}={scratch / 'data'}"
    if name == "secantusdb-daemon" and "on-disk" not in argument.split(","):
        return f"{name}={','.join(part for part in (argument, 'on-disk') if part)}"
    return target


def _network_unavailable(wanted: list[str], options: CampaignOptions) -> list[str]:
    """Network kinds need a Toxiproxy binary; without one they are dropped, said aloud and recorded."""
    if not wanted:
        return []
    from faults.network import ToxiproxyUnavailable, find_binary

    try:
        find_binary()
        return []
    except ToxiproxyUnavailable as exc:
        options.progress(f"campaign: network fault kinds {wanted} skipped: {exc}")
        return wanted


def campaign_name(options: CampaignOptions) -> str:
    return f"seed={options.seed} events={options.events}"


def _unavailable_kinds(run: Any, kinds: list[str]) -> list[tuple[str, str]]:
    """The kinds this run cannot inject, each with why: no Toxiproxy in the path, a target that cannot restart."""
    restart_problem = restartable(run.target.inner or run.target)
    without_network = run.target.faults is None
    reasons = {
        kind: "the run has no Toxiproxy in the path (--network-faults)" for kind in NETWORK_KINDS if without_network
    }
    reasons.update({kind: restart_problem for kind in TARGET_KINDS if restart_problem})
    return [(kind, reasons[kind]) for kind in kinds if kind in reasons]


def campaign_check(options: CampaignOptions, skipped: list[str] | None = None) -> tuple[CodeDefinedTest, CampaignCase]:
    """The campaign as a check any run can run (``harness run --suite campaign``), and its case."""
    case = CampaignCase(options, skipped or [])
    check = CodeDefinedTest(
        format="campaign",
        file="campaign",
        name=campaign_name(options),
        open=case.bind,
        preflight=_needs_change_streams,
        timeout_s=lambda run: case.budget_s() + 120,
    )
    return check, case


def _needs_change_streams(run: Any) -> Verdict | None:
    """``skipped`` on a standalone target: the consumer watches a change stream, which needs a replica set."""
    info = run.target.info
    if info.topology == "single":
        return Verdict(
            SKIPPED,
            f"a campaign watches a change stream, which needs a replica set or a sharded cluster; target "
            f"{info.name} is a standalone",
        )
    return None


class CampaignCase(Case):
    """One campaign on a started run: the lifecycle's deadline is a backstop past the campaign's own."""

    def __init__(self, options: CampaignOptions, skipped: list[str]) -> None:
        super().__init__()
        self.options = options
        self.skipped = list(skipped)
        self.stop = threading.Event()
        self.result: CampaignResult | None = None
        self.run: Any = None

    def bind(self, run: Any) -> CampaignCase:
        self.run = run
        return self

    def budget_s(self) -> float:
        options = self.options
        return options.deadline_s or 60 + 0.02 * options.events + 3 * options.faults

    def body(self) -> Verdict:
        run, options = self.run, self.options
        began = time.perf_counter()
        for kind, reason in _unavailable_kinds(run, [k for k in options.kinds if k not in self.skipped]):
            options.progress(f"campaign: fault kind {kind} skipped: {reason}")
            self.skipped.append(kind)
        kinds = tuple(k for k in options.kinds if k not in self.skipped)
        if options.faults and not kinds:
            return Verdict(SKIPPED, f"no fault kind asked for can be injected on this run ({', '.join(self.skipped)})")
        self.current = "running the campaign"
        schedule = make_schedule(options.seed, options.events, options.faults, kinds)
        budget = options.deadline_s or 60 + 0.02 * options.events + 3 * len(schedule)
        self.result = _run(options, run, schedule, self.skipped, began, self.stop, budget)
        return Verdict(self.result.outcome, self.result.message, details=_details(options, self.result))

    def close(self) -> list[str]:
        self.stop.set()
        return []


def _run(
    options: CampaignOptions,
    run: Any,
    schedule: list[Fault],
    skipped: list[str],
    began: float,
    stop: threading.Event,
    budget: float,
) -> CampaignResult:
    target = run.target
    network = target.faults
    assert target.admin is not None
    collection = target.admin[options.database][options.collection]
    collection.drop()
    target.admin[options.database].create_collection(options.collection)
    nemesis = Nemesis(run.failpoints, network, target.inner or target, APP_NAME)
    consumer = Consumer(
        run.driver,
        run.driver_uri,
        options.database,
        options.collection,
        app_name=APP_NAME,
        nemesis=nemesis,
        client_options=CONSUMER_OPTIONS,
    )
    nemesis.getmore_failures = consumer.getmore_failures
    gate = _Gate(schedule[0].at_event if schedule else float("inf"))
    writer = Writer(
        collection,
        options.events,
        consumed=lambda: len(consumer.seqs),
        batch_size=options.batch_size,
        max_lag=options.max_lag,
    )
    nemesis_thread = threading.Thread(
        target=_drive_schedule,
        args=(nemesis, schedule, consumer, gate, stop, options),
        name="campaign-nemesis",
        daemon=True,
    )
    deadline = time.monotonic() + budget
    problems: list[str] = []
    try:
        consumer.open()
        writer.start()
        nemesis_thread.start()

        def done() -> bool:
            if stop.is_set():  # torn down by the lifecycle's deadline
                return True
            return (
                writer.finished.is_set()
                and not nemesis_thread.is_alive()
                and (
                    not consumer.seqs
                    or max((s for s in consumer.seqs if s is not None), default=-1) >= writer.written - 1
                )
            )

        consumer.run(done, deadline, lambda: float("inf") if nemesis.awaiting_getmore else gate.at)
        if time.monotonic() >= deadline:
            problems.append(
                f"deadline of {budget:.0f}s passed with {len(consumer.seqs)} of {options.events} events received"
            )
        consumer.run(lambda: False, min(deadline, time.monotonic()) + 0.5)  # late extras (duplicates) show up here
    finally:
        stop.set()
        gate.at = float("inf")
        writer.stopping.set()
        nemesis_thread.join(30)
        writer.join(30)
        problems += nemesis.clean_up()
        aggregates, resumes = consumer.aggregates(), consumer.driver_resumes()
        problems += silent_resumes(consumer._events(), consumer.app_opens)
        consumer.close()
    problems += writer.verify()
    problems += [f"fault {a.fault.describe()}: {p}" for a in nemesis.applied for p in a.problems]
    anomalies = check_delivery(consumer.seqs, options.events)
    disallowed = [e for e in consumer.errors if not e.allowed]
    failed = bool(anomalies or disallowed or problems)
    message = summarise(anomalies)
    if disallowed:
        message += (
            f"; {len(disallowed)} error(s) the spec does not allow reached the application "
            f"(first: {disallowed[0].error} -- {disallowed[0].reason})"
        )
    if problems:
        message += f"; {len(problems)} problem(s): {problems[0]}"
    return CampaignResult(
        outcome=FAILED if failed else PASSED,
        message=message,
        seed=options.seed,
        schedule=schedule,
        applied=list(nemesis.applied),
        received=len(consumer.seqs),
        anomalies=anomalies,
        errors=list(consumer.errors),
        problems=problems,
        driver_resumes=resumes,
        aggregates=aggregates,
        duration_s=time.perf_counter() - began,
        skipped_kinds=skipped,
    )


class _Gate:
    """How many events the consumer may receive before the next fault is in place."""

    def __init__(self, at: float) -> None:
        self.at = at


def _drive_schedule(
    nemesis: Nemesis,
    schedule: list[Fault],
    consumer: Consumer,
    gate: _Gate,
    stop: threading.Event,
    options: CampaignOptions,
) -> None:
    """Apply each fault when the consumer has received ``at_event`` events (it waits there); one at a time."""
    for index, fault in enumerate(schedule):
        gate.at = fault.at_event
        while len(consumer.seqs) < fault.at_event and not stop.is_set():
            time.sleep(0.001)
        if stop.is_set():
            return
        following = schedule[index + 1].at_event if index + 1 < len(schedule) else float("inf")

        def in_place(following: float = following) -> None:
            gate.at = following

        received = len(consumer.seqs)
        applied = nemesis.apply(fault, in_place)
        options.progress(
            f"  fault {fault.describe()}: in place at {received} received, "
            f"{applied.ended - applied.started:.2f}s" + (f" PROBLEM {applied.problems}" if applied.problems else "")
        )


def _details(options: CampaignOptions, result: CampaignResult) -> dict[str, Any]:
    origin = result.applied[0].started if result.applied else 0.0
    return {
        "seed": options.seed,
        "events": options.events,
        "faults_requested": options.faults,
        "kinds": list(options.kinds),
        "skipped_kinds": result.skipped_kinds,
        "faults": [a.as_record(origin) for a in result.applied],
        "received": result.received,
        "resumes": result.driver_resumes,
        "aggregates": result.aggregates,
        "errors": [e.as_record() for e in result.errors],
        "disallowed_errors": len(result.disallowed),
        "anomalies": [a.as_record() for a in result.anomalies],
        "problems": result.problems,
        "duration_s": round(result.duration_s, 3),
    }
