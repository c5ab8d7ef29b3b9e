"""Reproduces pymongo's CS-OPT-AGGREGATE deviation (specs/expectations/drivers/pymongo.yml and pymongo-async.yml)
with MongoClient and AsyncMongoClient alone, outside the harness: a collation given to watch() is not sent.

    python -m secantus --port 27998 --storage-path :memory: &
    python tests/repro/pymongo/collation_dropped.py mongodb://127.0.0.1:27998/

Seen with pymongo 4.20.0, both APIs: the aggregate that opens the stream has no collation field (the change-streams
spec lists collation among the stream's options, an aggregate command option sent when the caller gives one).
The same collation given to Collection.aggregate() is sent.
"""

import asyncio
import sys

from pymongo import AsyncMongoClient, MongoClient, monitoring


class Aggregates(monitoring.CommandListener):
    def __init__(self):
        self.commands = []

    def started(self, event):
        if event.command_name == "aggregate":
            self.commands.append(event.command)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


def sync_api(uri: str) -> None:
    listener = Aggregates()
    client = MongoClient(uri, event_listeners=[listener])
    client.repro.collation.watch([], collation={"locale": "simple"}).close()
    client.repro.collation.aggregate([{"$match": {}}], collation={"locale": "simple"})
    for name, command in zip(("watch", "aggregate"), listener.commands, strict=True):
        print(f"MongoClient {name}: collation {command.get('collation', '<not sent>')}")
    client.close()


async def async_api(uri: str) -> None:
    listener = Aggregates()
    client = AsyncMongoClient(uri, event_listeners=[listener])
    stream = await client.repro.collation.watch([], collation={"locale": "simple"})
    await stream.close()
    print(f"AsyncMongoClient watch: collation {listener.commands[0].get('collation', '<not sent>')}")
    await client.close()


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "mongodb://127.0.0.1:27017/"
    sync_api(target)
    asyncio.run(async_api(target))
