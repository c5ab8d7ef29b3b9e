"""Reproduces two SecantusDB 0.7 departures from the change-streams spec with pymongo alone, outside the harness:

- SRV-SPEC-SCOPE: a client-wide stream (MongoClient.watch) reports writes to the admin, config and local
  databases, and database and client streams report writes to a system collection (system.js); the spec
  says such streams leave both out (mongod does).
- SRV-SPEC-STAGES (the part its check leaves out): $group after $changeStream is accepted; the spec lists the
  stages change streams support, and mongod refuses others.

    python -m secantus --port 27999 --storage-path :memory: &
    python tests/repro/pymongo/secantus_cluster_scope_and_stages.py mongodb://127.0.0.1:27999/

Seen with SecantusDB 0.7.0b3 and pymongo 4.20.0: the client stream's first three events are the inserts into
admin.repro, config.repro and local.repro; the database stream's first event is the insert into
repro.system.js; the $group stream opens without an error.
"""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure


def main(uri: str) -> None:
    client = MongoClient(uri)
    stream = client.watch([], max_await_time_ms=100)
    for database in ("admin", "config", "local", "repro"):
        client[database]["repro"].insert_one({"written_to": database})
    seen = []
    while len(seen) < 4 and (change := stream.try_next()) is not None:
        seen.append(change["ns"]["db"])
    stream.close()
    print(f"client stream reported writes to: {seen} (the spec leaves out admin, config and local)")
    database_stream = client.repro.watch([], max_await_time_ms=100)
    client.repro["system.js"].insert_one({"written_to": "system.js"})
    client.repro.repro.insert_one({"written_to": "repro"})
    first = database_stream.try_next()
    database_stream.close()
    print(f"database stream's first event is in: {first and first['ns']} (the spec leaves out system collections)")
    try:
        client.repro.repro.watch([{"$group": {"_id": None}}]).close()
        print("$group after $changeStream: accepted (mongod refuses it)")
    except OperationFailure as exc:
        print(f"$group after $changeStream: refused, code {exc.code}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "mongodb://127.0.0.1:27017/")
