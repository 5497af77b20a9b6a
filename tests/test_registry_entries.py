"""What a plugin registers is checked where it registers: a measure family or a parameter domain
that is none is refused with a warning naming the plugin, and the plugin's entries are dropped.

The registry knows these shapes only by what they offer (the scoring layer defines them), so
the checks are run here against the real ones and against look-alikes that fall short.
"""

from __future__ import annotations

import pytest

from ef.evaluation import PluginWarning, hookimpl, registry
from ef.evaluation.testing import registered_plugin


def hits(ranked, relevant, k):
    return float(sum(relevant.get(doc, 0) > 0 for doc in ranked[:k]))


def fused(rankings, **params):
    return {}


class KeysOnly:
    keys = ("x",)  # no function(): not a measure family


class CheckOnly:
    def check(self, value, owner, name, *, written=False):  # no describe(): not a domain
        return value


def test_a_real_family_and_domain_register():
    builtin = registry()
    family = builtin.metrics["P"].family
    domain = builtin.fusion_methods["rrf"].domains["k"]

    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("p_again", family.function(), cutoff=False, family=family)

        @hookimpl
        def ef_evaluation_register_fusion_methods(self, register):
            register("rrf_again", fused, rank_based=True, defaults={"k": 60}, domains={"k": domain})

    with registered_plugin(Plugin(), name="real-shapes"):
        current = registry()
        assert current.metrics["p_again"].family is family
        assert current.fusion_methods["rrf_again"].domains["k"] is domain


@pytest.mark.parametrize("family", ["P", KeysOnly(), ("x",)])
def test_a_family_that_is_none_drops_the_plugins_metrics(family):
    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("fine", hits)
            register("not_a_family", hits, cutoff=False, family=family)

    with registered_plugin(Plugin(), name="bad-family"):
        with pytest.warns(PluginWarning, match=r"'bad-family' .*family must be a measure Family"):
            metrics = registry().metrics
        assert "fine" not in metrics and "not_a_family" not in metrics


@pytest.mark.parametrize("domain", [3, CheckOnly(), "number"])
def test_a_domain_that_is_none_drops_the_plugins_methods(domain):
    class Plugin:
        @hookimpl
        def ef_evaluation_register_fusion_methods(self, register):
            register("bad_domain", fused, rank_based=True, defaults={"k": 1}, domains={"k": domain})

    with registered_plugin(Plugin(), name="bad-domain"):
        with pytest.warns(PluginWarning, match=r"'bad-domain' .*domains\['k'\] must be a Domain"):
            methods = registry().fusion_methods
        assert "bad_domain" not in methods
