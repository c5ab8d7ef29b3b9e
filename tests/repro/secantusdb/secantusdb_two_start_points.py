"""SecantusDB opens a change stream for an aggregate that names two start points (SRV-START-EXCLUSIVE).

A reproduction outside the harness: pymongo's raw ``aggregate`` command against an embedded
SecantusDB, with a real resume token and cluster time. mongod refuses each pair; SecantusDB 0.7
accepts all three. Run: ``python tests/repro/secantusdb/secantusdb_two_start_points.py``.
"""

import itertools

from pymongo import MongoClient
from pymongo.errors import OperationFailure
from secantus import SecantusDBServer

with SecantusDBServer(port=0) as server, MongoClient(server.uri, directConnection=True) as client:
    db = client["repro"]
    db.drop_collection("c")
    db.create_collection("c")
    with db["c"].watch(max_await_time_ms=100) as stream:
        db["c"].insert_one({"x": 1})
        change = next(stream)
    values = {"resumeAfter": change["_id"], "startAfter": change["_id"], "startAtOperationTime": change["clusterTime"]}
    for first, second in itertools.combinations(values, 2):
        stage = {first: values[first], second: values[second]}
        try:
            reply = db.command("aggregate", "c", pipeline=[{"$changeStream": stage}], cursor={})
            print(f"{first} + {second}: ACCEPTED (cursor {reply['cursor']['id']}); mongod refuses this")
        except OperationFailure as exc:
            print(f"{first} + {second}: refused ({exc.code}: {exc.details.get('errmsg')})")
