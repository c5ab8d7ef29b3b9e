"""The early no-change verdict through an executor (docs/executor-protocol.md 6.4.2) is sound: a lost change fails at
once, a delayed one passes, a closed stream keeps the executor's own answer.

Each test opens a scope the way the spec runner does (the target's token format) on an executor that lists
``command_log``, and asserts on what the iteration answered: the change, or ``NoChangeWithin`` with ``early`` and its
fact. No assertion is on a duration: a verdict not given shows as ``early`` being false (after the budget), one given
wrongly as a change missed. The executors are the reference one (always) and every other the harness knows whose
toolchain this machine has (CI installs them all).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.core.observations import NoChangeWithin
from harness.core.resume_tokens import SECANTUSDB_BSON
from harness.drivers.executor.adapter import ExecutorAdapter
from harness.engine.plugins import load_plugins
from tests.harness.drivers.executor.broken import REFERENCE, broken_executor
from tests.harness.drivers.watched import FILTERED, filtered_change_fails_at_once, op, watch_collection
from tests.paths import REPO

#: Long enough that no delay made here, on a loaded machine, comes near it: a change failed early shows at once.
LONG_BUDGET_S = 60.0
SHORT_BUDGET_S = 3.0
NEEDS = {
    "node": ("node", "harness/drivers/node/node_modules/mongodb"),
    "java": ("mvn", ""),
    "go": ("go", ""),
    "rust": ("cargo", ""),
}


def _command(name: str) -> list[str]:
    if name == "reference":
        return REFERENCE
    command, folder = NEEDS[name]
    if shutil.which(command) is None or (folder and not (REPO / folder).is_dir()):
        if os.environ.get("CI"):
            pytest.fail(f"the {name} executor cannot run here, but CI is set and .ci/run installs it", pytrace=False)
        pytest.skip(f"the {name} executor's toolchain is not installed")
    command = load_plugins().executor_command(name)
    assert isinstance(command, list), name
    return command


EXECUTORS = ("reference", "node", "java", "go", "rust")


@pytest.fixture
def stream_through(embedded_run: Any, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``stream_through(command, ...)``: an executor scope with client ``c`` (appName: the test's name), collection
    ``coll`` emptied, and a change stream ``s`` on it, opened as the spec runner opens scopes."""
    adapters: list[ExecutorAdapter] = []
    app_name = request.node.name[:100]

    def open_stream(
        command: list[str],
        *,
        pipeline: list[Any] | None = None,
        budget_s: float = LONG_BUDGET_S,
        mode: str | None = None,
        with_log: bool = True,
    ) -> Any:
        adapter = ExecutorAdapter(command)
        adapters.append(adapter)
        assert adapter.start_failure is None, adapter.start_failure
        assert adapter.early_no_change == with_log, "command_log listed (or not) in hello"
        scope = adapter.open_scope(
            embedded_run.driver_uri,
            iteration_timeout_s=budget_s,
            iteration_mode=mode,
            resume_token_format=SECANTUSDB_BSON,
        )
        return watch_collection(scope, app_name, pipeline)

    open_stream.app_name = app_name  # type: ignore[attr-defined]
    yield open_stream
    for adapter in adapters:
        adapter.close()
    embedded_run.target.admin.admin.command({"configureFailPoint": "failCommand", "mode": "off"})


def until(scope: Any) -> Any:
    return op(scope, "iterateUntilDocumentOrError", "s")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_filtered_change_fails_at_once_saying_why(executor: str, stream_through: Any) -> None:
    filtered_change_fails_at_once(stream_through(_command(executor), pipeline=FILTERED))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_held_back_getmore_delays_the_change_without_losing_it(
    executor: str, stream_through: Any, embedded_run: Any
) -> None:
    """The getMore that brings the change is held 2.5 s, longer than a slice: the slice ends with it in flight, the
    log shows a getMore that has not returned, and the next slice takes its change."""
    scope = stream_through(_command(executor))
    op(scope, "insertOne", "coll", document={"_id": 4})
    embedded_run.target.admin.admin.command(
        {
            "configureFailPoint": "failCommand",
            "mode": {"times": 1},
            "data": {
                "failCommands": ["getMore"],
                "blockConnection": True,
                "blockTimeMS": 2500,
                "appName": stream_through.app_name,
            },
        }
    )
    assert until(scope)["documentKey"] == {"_id": 4}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_stream_the_test_closed_keeps_the_executors_answer(executor: str, stream_through: Any) -> None:
    """An executor answers a closed stream at once (section 6.4); slicing must not turn that into a wait."""
    scope = stream_through(_command(executor), budget_s=SHORT_BUDGET_S)
    op(scope, "close", "s")
    try:
        until(scope)
    except NoChangeWithin as exc:
        assert not exc.early
        assert "no document arrived within 3s" not in str(exc), "the closed stream waited out the budget"
    except Exception:
        pass


def test_a_change_the_driver_lost_fails_at_once(tmp_path: Path, stream_through: Any) -> None:
    """The reference executor's pymongo drops the first change it was given: the stream's position is the change's
    own token, at the write's time, and the next empty getMore ends the wait."""
    lossy = (
        "    if count == 1:\n"
        "        from pymongo.change_stream import ChangeStream\n"
        "        original = ChangeStream.try_next\n"
        "        def lossy(self, dropped=[]):\n"
        "            change = original(self)\n"
        "            if change is not None and not dropped:\n"
        "                dropped.append(change)\n"
        "                return None\n"
        "            return change\n"
        "        ChangeStream.try_next = lossy"
    )
    scope = stream_through(broken_executor(tmp_path, before=lossy))
    op(scope, "insertOne", "coll", document={"_id": 1})
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert failed.value.early and "the stream passed the last write (insert)" in str(failed.value)


def test_push_modes_keep_the_budget_and_say_why(stream_through: Any) -> None:
    """In ``emitter`` every stream reads ahead by itself: the log cannot say which stream a getMore served."""
    scope = stream_through(_command("node"), pipeline=FILTERED, budget_s=1.0, mode="emitter")
    op(scope, "insertOne", "coll", document={"_id": 1})
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert not failed.value.early
    assert "no early verdict: the emitter mode reads ahead on every stream of the scope at once" in str(failed.value)


def test_an_executor_without_the_log_is_never_sent_a_slice(tmp_path: Path, stream_through: Any) -> None:
    """An executor that does not list ``command_log`` gets requests as before section 6.4.2: no ``budgetMS``, no
    ``commandLog``; its idle stream waits the budget out and says why no verdict came."""
    seen = tmp_path / "requests.txt"
    command = broken_executor(
        tmp_path,
        "    if request['method'] == 'hello': reply['result']['capabilities'].remove('command_log')\n"
        f"    open({str(seen)!r}, 'a').write(request['method'] + ' ' + repr(request.get('params')) + '\\n')",
    )
    scope = stream_through(command, pipeline=FILTERED, budget_s=1.0, with_log=False)
    op(scope, "insertOne", "coll", document={"_id": 1})
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert not failed.value.early and str(failed.value) == "no document arrived within 1s"
    requests = seen.read_text()
    assert "iterateUntilDocumentOrError" in requests
    assert "budgetMS" not in requests and "commandLog" not in requests
