"""The package's public names: ``__all__`` (a literal, for tools) must list exactly what ``_EXPORTS`` lazily imports."""

from __future__ import annotations

import faults.network as network


def test_all_lists_exactly_the_lazy_exports():
    assert sorted(network.__all__) == sorted(network._EXPORTS)
    assert len(set(network.__all__)) == len(network.__all__)


def test_every_exported_name_is_defined_where_the_table_says():
    for name in network.__all__:
        assert getattr(network, name) is not None, name  # an AttributeError names a wrong module in _EXPORTS
