"""SecantusDB as a standalone refuses change streams with IllegalOperation (40573), as mongod does.

A reproduction outside the harness (a few lines of pymongo against the server), checked before the
standalone shape's failures were judged: the prose tests that open a change stream fail or error on
``--target embedded-standalone`` because they carry no topology requirement (a harness gap), not
because the server deviates. Run: ``python tests/tests/repro/secantusdb/standalone_refuses_change_streams.py``.
"""

from pymongo import MongoClient
from pymongo.errors import OperationFailure
from secantus import SecantusDBServer

server = SecantusDBServer(port=0, storage_path=":memory:", replica_set_name=None)  # what --standalone does
server.start()
try:
    with MongoClient(server.uri, directConnection=True) as client:
        hello = client.admin.command("hello")
        print(f"hello: setName={hello.get('setName')!r} isWritablePrimary={hello.get('isWritablePrimary')}")
        try:
            client["repro"]["c"].watch()
            print("watch(): ACCEPTED; mongod refuses a change stream on a standalone")
        except OperationFailure as exc:
            print(f"watch(): refused ({exc.code} {exc.details.get('codeName')}: {exc.details.get('errmsg')})")
finally:
    server.stop()
