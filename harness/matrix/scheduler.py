"""Runs the cells of a matrix, N at a time: environment first, then each pending repeat, all state in the manifest.

A cell is one unit of work on one worker thread (its repeats run one after
another: they share the environment, and repeats of one cell running side by
side would measure contention, not flakiness). A cell that cannot be built,
or a repeat that cannot run, is recorded (manifest and ``cell.jsonl``) and the
matrix goes on. Ctrl-C (or SIGTERM) stops every child process group, marks
the repeats that were running ``interrupted`` and leaves a manifest the same
command resumes.
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, TextIO

from harness.core.records import utc_now
from harness.engine.results_store import ResultsStore
from harness.matrix.cells import Cell
from harness.matrix.definition import MatrixDefinition
from harness.matrix.envs import EnvCache, EnvOutcome
from harness.matrix.files import read_json
from harness.matrix.installers import env_python
from harness.matrix.manifest import (
    DONE,
    FAILED,
    INCOMPATIBLE_STAGE,
    INTERRUPTED,
    RUNNING,
    Manifest,
    cell_dir,
    repeat_status,
    set_aside,
)
from harness.matrix.observe import check_versions, observe, version_problems
from harness.matrix.process import Children, Interrupted
from harness.matrix.steps import judge, repeat_steps
from harness.matrix.summary import counts_text, last_line

CELL_RECORD_SCHEMA = "cs-harness.cell/1"
#: Exit status of a matrix stopped by Ctrl-C (the shell's convention for SIGINT).
INTERRUPTED_EXIT = 130


class Printer:
    """One line at a time from any worker thread."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            print(line, file=self.stream, flush=True)


class MatrixRun:
    def __init__(
        self,
        definition: MatrixDefinition,
        cells: list[Cell],
        manifest: Manifest,
        cache: EnvCache,
        children: Children,
        out: Path,
        printer: Printer,
    ) -> None:
        self.definition = definition
        self.cells = cells
        self.manifest = manifest
        self.cache = cache
        self.children = children
        self.out = out
        self.say = printer
        self._position = {cell.id: f"{i}/{len(cells)}" for i, cell in enumerate(cells, 1)}

    # -- the whole matrix

    def run(self) -> int | None:
        """Every cell with work left; None when done, :data:`INTERRUPTED_EXIT` after a Ctrl-C."""
        todo = [cell for cell in self.cells if self.manifest.pending(cell.id)]
        executor = ThreadPoolExecutor(max_workers=self.definition.jobs, thread_name_prefix="matrix-cell")
        futures = [executor.submit(self._cell, cell) for cell in todo]
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
                for future in finished:
                    future.result()  # a bug in the matrix itself: stop everything, below, and say so
        except KeyboardInterrupt:
            self._stop("interrupted: stopping every cell's processes; rerun the same command to resume")
            return INTERRUPTED_EXIT
        except BaseException:
            self._stop("the matrix failed (below); stopping every cell's processes")
            raise
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
        return None

    def _stop(self, message: str) -> None:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None
        try:
            self.say(message)
            self.children.stop_all()
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    # -- one cell

    def _cell(self, cell: Cell) -> None:
        try:
            env = self._environment(cell)
            if env is None:
                return
            probed = self._probe(cell, env)
            if probed is None:
                return
            for n in self.manifest.pending(cell.id):
                self._repeat(cell, env, n, probed)
        except Interrupted:
            return

    def _environment(self, cell: Cell) -> EnvOutcome | None:
        entry = self.manifest.cell(cell.id)
        self.manifest.update(lambda: entry["env"].update(status="building"))
        outcome = self.cache.ensure(cell, self.out / entry["env"]["log"])

        def record() -> None:
            env = entry["env"]
            env.update(
                status=FAILED if outcome.failure else "ready",
                cached=outcome.cached,
                installed=outcome.installed,
                ready_s=round(outcome.seconds, 3),
            )
            if not outcome.cached:
                env["build_s"] = round(outcome.seconds, 3)
            if outcome.failure:
                self._fail_cell(entry, *outcome.failure)

        self.manifest.update(record)
        where = f"[cell {self._position[cell.id]}] {cell.id}"
        if outcome.failure:
            stage, reason = outcome.failure
            self._cell_record(cell, stage, reason, repeat=None)
            self.say(f"{where}: CANNOT BE BUILT ({stage}): {last_line(reason)}")
            return None
        how = f"cached, ready in {outcome.seconds:.2f}s" if outcome.cached else f"built in {outcome.seconds:.1f}s"
        self.say(f"{where}: environment {how} ({_installed_text(outcome.installed)})")
        return outcome

    @staticmethod
    def _fail_cell(entry: dict[str, Any], stage: str, reason: str) -> None:
        """A manifest change: the cell cannot run (its ``failure``), nor can any repeat not done yet."""
        entry["failure"] = {"stage": stage, "reason": reason, "at": utc_now()}
        for repeat in entry["repeats"]:
            if repeat["status"] != DONE:
                repeat.update(status=repeat_status(entry["failure"]), failure=entry["failure"])

    def _probe(self, cell: Cell, env: EnvOutcome) -> dict[str, Any] | None:
        """Build the cell's driver and start its target once (:mod:`harness.matrix.probe`); None when the cell
        cannot run: the driver or target failed (``failed``), or the pair cannot work (``incompatible``)."""
        entry = self.manifest.cell(cell.id)
        out_file = self.out / cell_dir(cell.id) / "probe.json"
        out_file.unlink(missing_ok=True)
        command = [str(env_python(env.path)), "-m", "harness.matrix.probe"]
        command += ["--driver", cell.driver_argument, "--target", cell.target, str(out_file)]
        finished = self.children.run(command, self.out / entry["env"]["log"], cwd=self.out / cell_dir(cell.id))
        if finished.stopped:
            raise Interrupted()
        probed = read_json(out_file) if finished.returncode == 0 else None
        if probed is None:
            failure: tuple[str, str] | None = ("probe", finished.stderr_tail or f"exit {finished.returncode}")
        elif probed.get("failure"):
            failure = (probed["failure"]["stage"], probed["failure"]["reason"])
        elif probed.get("incompatible"):
            failure = (INCOMPATIBLE_STAGE, probed["incompatible"])
        else:
            failure = None

        def record() -> None:
            entry["probe"] = probed
            if failure is not None:
                self._fail_cell(entry, *failure)

        self.manifest.update(record)
        where = f"[cell {self._position[cell.id]}] {cell.id}"
        if failure is not None:
            stage, reason = failure
            self._cell_record(cell, stage, reason, repeat=None)
            said = "INCOMPATIBLE" if stage == INCOMPATIBLE_STAGE else f"CANNOT RUN ({stage})"
            self.say(f"{where}: {said}: {last_line(reason)}")
            return None
        self.say(f"{where}: {_probed_text(probed)}")
        return probed

    # -- one repeat

    def _repeat(self, cell: Cell, env: EnvOutcome, n: int, probed: dict[str, Any]) -> None:
        repeat = self.manifest.repeat(cell.id, n)
        results, log = self.out / repeat["results"], self.out / repeat["log"]
        moved = set_aside(results)  # a results file no manifest entry accounts for is not this run's
        labels = {**self.manifest.cell(cell.id)["labels"], "repeat": n}
        steps = repeat_steps(self.definition, cell, env_python(env.path), results, labels)
        self.manifest.update(
            lambda: repeat.update(
                status=RUNNING,
                started_at=utc_now(),
                steps=[],
                failure=None,
                pid=None,
                set_aside=repeat["set_aside"] + ([str(moved.relative_to(self.out))] if moved else []),
            )
        )
        began = time.monotonic()
        failure = None
        for step in steps:
            before = observe(results, cell).records
            try:
                finished = self.children.run(
                    step.command,
                    log,
                    cwd=self.out / cell_dir(cell.id),
                    on_start=lambda pid: self.manifest.update(lambda: repeat.update(pid=pid)),
                )
            except Interrupted:  # the matrix was stopping before this step could start
                finished = None
            if finished is None or finished.stopped:
                self.manifest.update(
                    lambda: repeat.update(status=INTERRUPTED, pid=None, seconds=round(time.monotonic() - began, 3))
                )
                raise Interrupted()
            written = observe(results, cell).records - before
            step_entry = {
                "step": step.name,
                "exit": finished.returncode,
                "seconds": round(finished.seconds, 3),
                "records": written,
            }
            self.manifest.update(functools.partial(_append_step, repeat, step_entry))
            failure = judge(step, finished, written)
            if failure:
                break
        observation = observe(results, cell)
        versions = check_versions(cell, observation, env.installed, probed)
        self.manifest.update(
            lambda: repeat.update(
                status=FAILED if failure else DONE,
                pid=None,
                finished_at=utc_now(),
                seconds=round(time.monotonic() - began, 3),
                counts=observation.counts,
                versions=versions,
                failure={"stage": "run", "reason": failure, "at": utc_now()} if failure else None,
            )
        )
        where = f"[cell {self._position[cell.id]}] {cell.id} r{n}"
        if failure:
            self._cell_record(cell, "run", failure, repeat=n)
            self.say(f"{where}: RUN FAILED: {last_line(failure)} (log: {log})")
        else:
            exits = ", ".join(f"{s['step']} exit {s['exit']}" for s in repeat["steps"])
            self.say(f"{where}: done in {repeat['seconds']:.1f}s: {counts_text(observation.counts)} ({exits})")
        for problem in version_problems(versions):
            self.say(f"!!! VERSIONS {cell.id} r{n}: {problem}")

    def _cell_record(self, cell: Cell, stage: str, reason: str, repeat: int | None) -> None:
        """One ``cs-harness.cell/1`` line in the cell's results directory: the report reads it beside the results."""
        labels: dict[str, Any] = {**self.manifest.cell(cell.id)["labels"]}
        if repeat is not None:
            labels["repeat"] = repeat
        store = ResultsStore(self.out / cell_dir(cell.id) / "cell.jsonl")
        try:
            store.append(
                {
                    "record": CELL_RECORD_SCHEMA,
                    "matrix": self.definition.matrix_id,
                    "cell": cell.id,
                    "labels": labels,
                    "requested": cell.requested(),
                    "stage": stage,
                    "reason": reason,
                    "at": utc_now(),
                }
            )
        finally:
            store.close()


def _append_step(repeat: dict[str, Any], entry: dict[str, Any]) -> None:
    """A manifest change: a partial of it binds this step's entry (a closure would read the loop's later values)."""
    repeat["steps"].append(entry)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _installed_text(installed: dict[str, Any]) -> str:
    return ", ".join(f"{name} {version}" for name, version in installed.items() if name in ("pymongo", "secantusdb"))


def _probed_text(probed: dict[str, Any]) -> str:
    driver, target = probed["driver"], probed["target"]
    text = f"driver {driver['name']} {driver['version']} ({driver['language']})"
    if target.get("probed"):
        text += f", target {target['name']} {target.get('release') or target['version']} ({target['topology']})"
    return text
