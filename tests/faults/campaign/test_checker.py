"""The delivery checker: each anomaly found where it is, and silence only for a perfect delivery."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from faults.campaign.checker import check_delivery, summarise


def kinds(anomalies):
    return sorted(((a.kind, a.seq) for a in anomalies), key=lambda pair: (pair[0], -1 if pair[1] is None else pair[1]))


def test_perfect_delivery_has_no_anomaly():
    assert check_delivery(list(range(10)), 10) == []
    assert "no anomaly" in summarise([])


def test_gap_duplicate_reorder_unexpected():
    assert kinds(check_delivery([0, 1, 3], 4)) == [("gap", 2)]
    assert kinds(check_delivery([0, 1, 1, 2], 3)) == [("duplicate", 1)]
    assert kinds(check_delivery([0, 2, 1], 3)) == [("reorder", 1)]
    assert kinds(check_delivery([0, 1, 7, None], 2)) == [("unexpected", None), ("unexpected", 7)]


def test_duplicate_positions_and_summary():
    anomalies = check_delivery([0, 1, 2, 1, 2, 3], 4)
    assert [(a.kind, a.seq, a.positions) for a in anomalies] == [("duplicate", 1, (1, 3)), ("duplicate", 2, (2, 4))]
    assert summarise(anomalies) == "2 duplicates (seq 1-2)"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.data())
def test_any_damage_is_found(n, data):
    """Drop, repeat or swap something in a perfect delivery: the checker must say so, of the right kind."""
    delivered = list(range(n))
    damage = data.draw(st.sampled_from(["drop", "repeat", "swap"] if n > 1 else ["drop", "repeat"]))
    i = data.draw(st.integers(0, n - 1))
    if damage == "drop":
        del delivered[i]
        assert kinds(check_delivery(delivered, n)) == [("gap", i)]
    elif damage == "repeat":
        j = data.draw(st.integers(i + 1, n))
        delivered.insert(j, i)
        assert kinds(check_delivery(delivered, n)) == [("duplicate", i)]
    else:
        j = data.draw(st.integers(0, n - 1).filter(lambda j: j != i))
        delivered[i], delivered[j] = delivered[j], delivered[i]
        found = check_delivery(delivered, n)
        assert found and {a.kind for a in found} == {"reorder"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2, 40), max_size=60), st.integers(0, 40))
def test_silent_exactly_when_perfect(received, n):
    assert (check_delivery(received, n) == []) == (received == list(range(n)))
