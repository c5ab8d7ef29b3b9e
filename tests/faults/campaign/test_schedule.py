"""The schedule is a pure function of its seed: the same seed replays the same faults."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faults.campaign.schedule import KINDS, make_schedule

kinds_strategy = st.lists(st.sampled_from(KINDS), min_size=1, unique=True).map(tuple)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(), events=st.integers(0, 50_000), faults=st.integers(0, 80), kinds=kinds_strategy)
def test_same_seed_same_schedule(seed, events, faults, kinds):
    first = make_schedule(seed, events, faults, kinds)
    assert first == make_schedule(seed, events, faults, kinds)
    assert len(first) == faults
    assert [f.index for f in first] == list(range(faults))
    assert all(f.kind in kinds for f in first)
    assert [f.at_event for f in first] == sorted(f.at_event for f in first)
    assert all(0 <= f.at_event <= max(events, 1) for f in first)


def test_different_seeds_differ():
    assert make_schedule(1, 10_000, 50) != make_schedule(2, 10_000, 50)


def test_faults_are_spread_over_the_run():
    schedule = make_schedule(7, 10_000, 50)
    assert schedule[0].at_event < 1_000 and schedule[-1].at_event > 8_000
    gaps = [b.at_event - a.at_event for a, b in itertools.pairwise(schedule)]
    assert min(gaps) >= 0 and max(gaps) < 400


def test_unknown_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="bogus"):
        make_schedule(1, 100, 3, ("bogus",))
