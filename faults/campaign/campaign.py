"""One fault campaign, from a seed to a result record.

    writer (admin client, direct) ──inserts {_id: seq}──> on-disk SecantusDB <──restarts── nemesis
    consumer (driver under test) ──Toxiproxy──> target           nemesis ──fail points / toxics──┘

The nemesis thread applies the schedule's faults one at a time as the
consumer's progress passes each ``at_event``; the writer thread inserts with
backpressure; the consumer iterates on the calling thread until it has every
seq (or the deadline passes). Then everything is removed and checked, the
checker judges delivery, and one ``format: campaign`` record is written.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faults.campaign.checker import Anomaly, check_delivery, summarise
from faults.campaign.classify import silent_resumes
from faults.campaign.consumer import Consumer, ReachedApplication
from faults.campaign.nemesis import AppliedFault, Nemesis
from faults.campaign.schedule import KINDS, NETWORK_KINDS, Fault, make_schedule
from faults.campaign.writer import Writer
from faults.failpoints import FailPointManager, NativeFailPoints
from harness.drivers import make_driver
from harness.results import ResultsStore, RunProvenance, make_record, new_run_id, utc_now
from harness.targets.embedded import EmbeddedSecantus

APP_NAME = "campaign-consumer"
#: The consumer's client: bounded waits, so an outage ends in an error the application handles.
CONSUMER_OPTIONS = {"serverSelectionTimeoutMS": 5000, "connectTimeoutMS": 3000, "socketTimeoutMS": 5000}


@dataclass
class CampaignOptions:
    events: int = 10_000
    faults: int = 50
    seed: int = 42
    kinds: tuple[str, ...] = KINDS
    driver: str = "pymongo"
    results: Path | None = None
    batch_size: int = 20
    max_lag: int = 300
    #: None: the whole campaign may take ``60 s + 20 ms per event + 3 s per fault``.
    deadline_s: float | None = None
    database: str = "campaign"
    collection: str = "events"
    #: Free-form provenance (``--label KEY=VALUE``), e.g. the matrix cell and repeat.
    labels: dict[str, str] = field(default_factory=dict)
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


def _start_network(kinds: tuple[str, ...], options: CampaignOptions) -> tuple[Any, tuple[str, ...], list[str]]:
    """A Toxiproxy server when network kinds are wanted; without the binary, those kinds are dropped, said aloud."""
    wanted = [k for k in kinds if k in NETWORK_KINDS]
    if not wanted:
        return None, kinds, []
    from faults.network import ToxiproxyServer, ToxiproxyUnavailable

    try:
        return ToxiproxyServer().start(), kinds, []
    except ToxiproxyUnavailable as exc:
        options.progress(f"campaign: network fault kinds {wanted} skipped: {exc}")
        return None, tuple(k for k in kinds if k not in NETWORK_KINDS), wanted


def run_campaign(options: CampaignOptions) -> CampaignResult:
    started_at, began = utc_now(), time.perf_counter()
    driver = make_driver(options.driver)
    with tempfile.TemporaryDirectory(prefix="campaign-") as scratch:
        target = EmbeddedSecantus(storage_path=str(Path(scratch) / "data"))
        target.start()
        toxiproxy = network = None
        try:
            toxiproxy, kinds, skipped = _start_network(tuple(options.kinds), options)
            driver_uri = target.uri
            if toxiproxy is not None:
                from faults.network import NetworkFaults, proxied_uri, single_host

                network = NetworkFaults(toxiproxy)
                proxy = network.add_proxy(single_host(target.uri), name="target")
                driver_uri = proxied_uri(target.uri, proxy.listen)
                target.info.details["network_faults"] = {"toxiproxy": toxiproxy.version, "proxy": proxy.listen}
            schedule = make_schedule(options.seed, options.events, options.faults, kinds)
            result = _run(options, target, driver, driver_uri, network, schedule, skipped, began)
        finally:
            if network is not None:
                network.close()
            if toxiproxy is not None:
                toxiproxy.stop()
            target.stop()
    provenance = RunProvenance(run_id=new_run_id(), target=target.info.as_record(),
                               driver={"name": driver.name, "version": driver.version}, failpoints="native",
                               extra={"labels": dict(options.labels)})
    result.record = _record(provenance, options, result, started_at)
    store = ResultsStore(options.results)
    try:
        store.append(result.record)
    finally:
        store.close()
    return result


def _run(options: CampaignOptions, target: EmbeddedSecantus, driver: Any, driver_uri: str, network: Any,
         schedule: list[Fault], skipped: list[str], began: float) -> CampaignResult:
    assert target.admin is not None
    collection = target.admin[options.database][options.collection]
    collection.drop()
    target.admin[options.database].create_collection(options.collection)
    failpoints = FailPointManager(NativeFailPoints(target.admin))
    nemesis = Nemesis(failpoints, network, target, APP_NAME)
    consumer = Consumer(driver, driver_uri, options.database, options.collection, app_name=APP_NAME, nemesis=nemesis,
                        client_options=CONSUMER_OPTIONS)
    nemesis.getmore_failures = consumer.getmore_failures
    gate = _Gate(schedule[0].at_event if schedule else float("inf"))
    writer = Writer(collection, options.events, consumed=lambda: len(consumer.seqs), batch_size=options.batch_size,
                    max_lag=options.max_lag)
    stop = threading.Event()
    nemesis_thread = threading.Thread(target=_drive_schedule, args=(nemesis, schedule, consumer, gate, stop, options),
                                      name="campaign-nemesis", daemon=True)
    budget = options.deadline_s or 60 + 0.02 * options.events + 3 * len(schedule)
    deadline = time.monotonic() + budget
    problems: list[str] = []
    try:
        consumer.open()
        writer.start()
        nemesis_thread.start()

        def done() -> bool:
            return (writer.finished.is_set() and not nemesis_thread.is_alive()
                    and (not consumer.seqs or max((s for s in consumer.seqs if s is not None), default=-1)
                         >= writer.written - 1))

        consumer.run(done, deadline, lambda: float("inf") if nemesis.awaiting_getmore else gate.at)
        if time.monotonic() >= deadline:
            problems.append(f"deadline of {budget:.0f}s passed with {len(consumer.seqs)} of {options.events} "
                            f"events received")
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
        message += f"; {len(disallowed)} error(s) the spec does not allow reached the application " \
                   f"(first: {disallowed[0].error} -- {disallowed[0].reason})"
    if problems:
        message += f"; {len(problems)} problem(s): {problems[0]}"
    return CampaignResult(outcome="failed" if failed else "passed", message=message, seed=options.seed,
                          schedule=schedule, applied=list(nemesis.applied), received=len(consumer.seqs),
                          anomalies=anomalies, errors=list(consumer.errors), problems=problems,
                          driver_resumes=resumes, aggregates=aggregates, duration_s=time.perf_counter() - began,
                          skipped_kinds=skipped)


class _Gate:
    """How many events the consumer may receive before the next fault is in place."""

    def __init__(self, at: float) -> None:
        self.at = at


def _drive_schedule(nemesis: Nemesis, schedule: list[Fault], consumer: Consumer, gate: _Gate,
                    stop: threading.Event, options: CampaignOptions) -> None:
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
        options.progress(f"  fault {fault.describe()}: in place at {received} received, "
                         f"{applied.ended - applied.started:.2f}s"
                         + (f" PROBLEM {applied.problems}" if applied.problems else ""))


def _record(provenance: RunProvenance, options: CampaignOptions, result: CampaignResult,
            started_at: str) -> dict[str, Any]:
    name = f"seed={options.seed} events={options.events}"
    origin = result.applied[0].started if result.applied else 0.0
    details = {
        "seed": options.seed, "events": options.events, "faults_requested": options.faults,
        "kinds": list(options.kinds), "skipped_kinds": result.skipped_kinds,
        "faults": [a.as_record(origin) for a in result.applied],
        "received": result.received, "resumes": result.driver_resumes, "aggregates": result.aggregates,
        "errors": [e.as_record() for e in result.errors],
        "disallowed_errors": len(result.disallowed),
        "anomalies": [a.as_record() for a in result.anomalies],
        "problems": result.problems, "duration_s": round(result.duration_s, 3),
    }
    return make_record(provenance, format="campaign", file="campaign", test=name, test_id=f"campaign/campaign::{name}",
                       outcome=result.outcome, message=result.message, started_at=started_at,
                       duration_s=result.duration_s, details=details)
