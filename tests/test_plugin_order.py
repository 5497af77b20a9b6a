"""``ef-eval plugins`` and ``list_plugins()`` list plugins in one order, however they loaded."""

from __future__ import annotations

from ef.evaluation import list_plugins
from ef.evaluation._plugins import HOST


def test_third_party_plugins_are_listed_by_name_whatever_their_loading_order() -> None:
    before = [info.name for info in list_plugins()]
    third_party = [info.name for info in list_plugins() if not info.builtin]
    assert "speedups" in third_party and third_party == sorted(third_party)
    try:
        HOST.unregister("speedups")  # loaded again last, as a test's fixture does
        HOST.reset()
        assert [info.name for info in list_plugins()] == before
    finally:
        HOST.reset()
