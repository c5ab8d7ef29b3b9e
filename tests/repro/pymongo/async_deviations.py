"""Reproduces the two deviations in specs/expectations/drivers/pymongo-async.yml with AsyncMongoClient alone,
outside the harness. Needs a server that accepts failCommand, e.g. SecantusDB with test commands on:

    python -m secantus --port 27999 --enable-test-commands &
    python tests/repro/pymongo/async_deviations.py mongodb://127.0.0.1:27999/?directConnection=true

Seen with pymongo 4.20.0: CS-OPT-EXCLUSIVE: the aggregate's $changeStream carries one start point of the two
given; CS-RESUME-NONRESUMABLE: after a 10107 getMore error with no labels, a second aggregate (a resume) is sent.
"""

import asyncio
import sys

from pymongo import AsyncMongoClient, monitoring


class Commands(monitoring.CommandListener):
    def __init__(self):
        self.started_events = []

    def started(self, event):
        self.started_events.append(event)

    def succeeded(self, event):
        pass

    def failed(self, event):
        print(
            f"  {event.command_name} failed: code {event.failure.get('code')}, "
            f"labels {event.failure.get('errorLabels', [])}"
        )


async def main(uri: str) -> None:
    listener = Commands()
    admin = AsyncMongoClient(uri)
    client = AsyncMongoClient(uri, event_listeners=[listener], retryReads=False)
    coll = client.repro.deviations
    await admin.repro.deviations.insert_one({"x": 0})

    # CS-OPT-EXCLUSIVE: two start points given; a driver must send both and let the server refuse the pair.
    stream = await coll.watch()
    await admin.repro.deviations.insert_one({"x": 1})
    change = await stream.try_next()
    await stream.close()
    token, time = change["_id"], change["clusterTime"]
    listener.started_events.clear()
    try:
        both = await coll.watch(resume_after=token, start_at_operation_time=time)
        await both.close()
    except Exception as exc:  # a server refusal would be the spec-following outcome
        print("CS-OPT-EXCLUSIVE: refused:", type(exc).__name__, exc)
    stage = next(
        e.command["pipeline"][0]["$changeStream"] for e in listener.started_events if e.command_name == "aggregate"
    )
    print("CS-OPT-EXCLUSIVE: $changeStream sent:", sorted(stage))

    # CS-RESUME-NONRESUMABLE: a not-primary (10107) getMore error with no ResumableChangeStreamError label.
    stream = await coll.watch(max_await_time_ms=50)
    await admin.admin.command(
        {
            "configureFailPoint": "failCommand",
            "mode": {"times": 1},
            "data": {"failCommands": ["getMore"], "errorCode": 10107, "errorLabels": []},
        }
    )
    listener.started_events.clear()
    try:
        await stream.try_next()
        print("CS-RESUME-NONRESUMABLE: no error raised")
    except Exception as exc:
        print("CS-RESUME-NONRESUMABLE: raised", type(exc).__name__, exc)
    names = [e.command_name for e in listener.started_events]
    print(
        "CS-RESUME-NONRESUMABLE: commands after the error:",
        names,
        "-> resumed" if "aggregate" in names else "-> not resumed",
    )
    await stream.close()
    await admin.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
    await client.close()
    await admin.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
