"""trec_eval's named sets of measures and its multi-cutoff notation, spelled out.

``metrics=["all_trec"]`` is every numeric measure trec_eval computes, ``["official"]`` the ones
trec_eval prints when no measure is named (``-m official``); both report pytrec_eval's keys
(``map``, ``ndcg``, ``recall_5``), where a lone family asked for by its ef name reports
``trec_map``, ``trec_ndcg``, ``trec_recall_5``. ``P.5,10,20`` and ``ndcg_cut.10,100`` (the
notation pytrec_eval takes) are one name per cutoff, each reported under pytrec_eval's key
(``P_5``, ``P_10``, ``P_20``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from ef.evaluation._scoring.measures.canon import CANON
from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._scoring.measures.family_scorer import TREC_FAMILIES
from ef.evaluation._scoring.notation import TREC_NAMES

__all__ = ["NAMED_SETS", "named_set", "spelled_out"]

_OFFICIAL = (
    "num_q", "num_ret", "num_rel", "num_rel_ret", "trec_map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
NAMED_SETS: dict[str, tuple[str, ...]] = {
    "all_trec": tuple(family.name for family in TREC_FAMILIES),
    "official": _OFFICIAL,
}
"""trec_eval's named sets: the families each holds, by their names in ``metrics=``."""

_RENAMED = "trec_"
_MULTI = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z0-9_]*?)\."
    r"(?P<cutoffs>[0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)+)"
)


def _pytrec_eval_keyed(family: Family) -> Family:
    """``family`` reported under pytrec_eval's keys: ``trec_map`` as ``map``."""
    if not family.name.startswith(_RENAMED):
        return family
    cut = len(_RENAMED)
    return attrs.evolve(family, name=family.name[cut:], keys=tuple(k[cut:] for k in family.keys))


def named_set(name: str) -> tuple[Family, ...] | None:
    """The families of trec_eval's set ``name``, keyed as pytrec_eval keys them; ``None`` when
    ``name`` is no set.

    >>> [family.name for family in named_set("official")][:6]
    ['num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map', 'gm_map']
    """
    names = NAMED_SETS.get(name)
    if names is None:
        return None
    by_name = {family.name: family for family in TREC_FAMILIES}
    return tuple(_pytrec_eval_keyed(by_name[family]) for family in names)


def _key(name: str, cutoff: str, fraction: bool) -> str:
    if fraction:
        return f"{name}_{float(cutoff):.2f}"
    return f"{name}_{int(cutoff)}" if cutoff.isdigit() else f"{name}_{cutoff}"


def spelled_out(names: Sequence[str]) -> list[str]:
    """``names`` with each multi-cutoff notation as one name per cutoff, pytrec_eval's key.

    >>> spelled_out(["P.5,10,20", "ndcg_cut.10,100", "map"])
    ['P_5', 'P_10', 'P_20', 'ndcg_cut_10', 'ndcg_cut_100', 'map']
    >>> spelled_out(["iprec_at_recall.0.1,0.5"])
    ['iprec_at_recall_0.10', 'iprec_at_recall_0.50']
    """
    out: list[str] = []
    for written in names:
        found = _MULTI.fullmatch(written) if "," in written else None
        canon = TREC_NAMES.get(found["name"]) if found is not None else None
        if found is None or canon is None:
            out.append(written)
            continue
        fraction = CANON[canon].fraction
        out.extend(_key(found["name"], c, fraction) for c in found["cutoffs"].split(","))
    return out
