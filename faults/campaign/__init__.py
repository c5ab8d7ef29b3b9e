"""Fault campaigns: a writer, a change-stream consumer under a seeded schedule of faults, a checker.

    schedule.py   Fault values and make_schedule(seed, ...): the same seed, the same faults
    nemesis.py    applies one Fault through the project's fail points, Toxiproxy and target restarts
    writer.py     inserts {_id: seq, seq} in order, idempotently, through the harness's admin client
    consumer.py   the driver under test reading the stream, reopening it the way an application would
    classify.py   whether an error that reached the application is one the spec allows
    checker.py    exactly-once, in-order delivery over the received sequence numbers
    campaign.py   runs the above and writes one ``format: campaign`` result record

docs/campaigns.md is the reference.
"""
