"""Reading the notations people already write for a measure.

Three syntaxes, one set of measures (:data:`~ef.evaluation._scoring.measures.canon.CANON`):

- ir_measures': ``Name(param=value,...)@cutoff`` — ``nDCG@10``, ``P(rel=2)@5``,
  ``RBP(rel=1,p=0.8)``, ``nDCG(dcg='exp-log2')@10``, ``IPrec@0.1``;
- trec_eval's, with a dot or an underscore before the parameter (both are in use) —
  ``ndcg_cut.10``, ``ndcg_cut_10``, ``P.5``, ``iprec_at_recall.0.10``;
- ef's, ranx's and BEIR's ``name@k`` — ``ndcg@10``, ``ndcg_burges@10``, ``Recall@100``.

A name registered as is (``ndcg``, ``P``, ``bpref``) is not a notation: the registry resolves it
first. :func:`parse` only reads the syntax; :func:`measure_of` says which measure it names.
"""

from __future__ import annotations

import re

import attrs

from ef.evaluation._exceptions import ParameterError
from ef.evaluation._scoring.domains import abbreviated
from ef.evaluation._scoring.measures.canon import CANON, Canon, Measure

__all__ = ["TREC_NAMES", "Notation", "measure_of", "parse"]

_NAMED = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z0-9_-]*)"
    r"(?:\((?P<params>[^()]*)\))?"
    r"(?:@(?P<cutoff>[0-9]+(?:\.[0-9]+)?))?"
)
_TREC = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_]*?)[._](?P<cutoff>[0-9]+(?:\.[0-9]+)?)")
_PARAM = re.compile(
    r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*"
    r"(?P<value>'[^']*'|\"[^\"]*\"|\{[^{}]*\}|[^,{}]*?)\s*"
)
_PARTS = re.compile(r"(?:[^,{'\"]|\{[^{}]*\}|'[^']*'|\"[^\"]*\")+")
"""A parameter: commas inside a table of gains ``{0: 0, 1: 1}`` or quotes do not end it."""

_NAMES: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    **{name: (name, ()) for name in CANON},
    # ef's and ranx's names, and BEIR's keys, all written ``name@k``.
    "ndcg": ("nDCG", ()),
    "NDCG": ("nDCG", ()),
    "ndcg_burges": ("nDCG", (("dcg", "exp-log2"),)),
    "precision": ("P", ()),
    "recall": ("R", ()),
    "Recall": ("R", ()),
    "map": ("AP", ()),
    "MAP": ("AP", ()),
    "mrr": ("RR", ()),
    "MRR": ("RR", ()),
    "hit_rate": ("Success", ()),
    "Accuracy": ("Success", ()),
    "f1": ("F1", ()),
    "hits": ("Hits", ()),
    "RPrec": ("Rprec", ()),
    # ndeval's names of the diversity measures, and the issue tracker's S-recall.
    "alpha-nDCG": ("alpha_nDCG", ()),
    "alpha-DCG": ("alpha_DCG", ()),
    "ERR-IA": ("ERR_IA", ()),
    "nERR-IA": ("nERR_IA", ()),
    "P-IA": ("P_IA", ()),
    "strec": ("StRecall", ()),
    "S-recall": ("StRecall", ()),
    "MAP-IA": ("AP_IA", ()),
    "MAP_IA": ("AP_IA", ()),
}
"""Names written ``Name(...)@cutoff``: the canonical measure and the parameters they imply."""

_NOT_COMPUTED = {
    "Hole": "BEIR's Hole@k counts a document judged for any query as judged for every query; "
    "ef does not compute it. Unjudged@k is the share of the top k without a judgement for the "
    "query itself (BEIR's Hole on one query)",
}
"""Peers' names whose definition ef does not compute, and what to write instead."""

TREC_NAMES = {
    "P": "P",
    "recall": "R",
    "relative_P": "R_cap",
    "success": "Success",
    "map_cut": "AP",
    "ndcg_cut": "nDCG",
    "iprec_at_recall": "IPrec",
    "Rprec_mult": "Rprec_mult",
}
"""trec_eval's families with a parameter, written ``family.parameter`` or ``family_parameter``."""


@attrs.frozen
class Notation:
    """A name as the syntax reads it, before any measure is looked up.

    :ivar name: the measure's name as written (``nDCG``, ``ndcg_cut``).
    :ivar params: ``(key, value)`` as written, quotes removed.
    :ivar cutoff: the text after ``@`` (or trec_eval's parameter), ``None`` if there is none.
    :ivar trec: whether it is trec_eval's ``family.parameter`` / ``family_parameter`` spelling.
    """

    name: str
    params: tuple[tuple[str, str], ...] = ()
    cutoff: str | None = None
    trec: bool = False


def _params(text: str | None, written: str) -> tuple[tuple[str, str], ...] | None:
    if text is None or not text.strip():
        return ()
    out: dict[str, str] = {}
    parts = [found.group() for found in _PARTS.finditer(text)]
    if sum(map(len, parts)) + len(parts) - 1 != len(text):  # an empty part, an open brace
        return None
    for part in parts:
        found = _PARAM.fullmatch(part)
        if found is None or not found["value"]:
            return None
        value = found["value"]
        if value[:1] in "'\"":
            value = value[1:-1]
        if found["key"] in out:
            raise ParameterError(
                f"metric {written!r}: parameter {found['key']!r} is given twice; give it once"
            )
        out[found["key"]] = value
    return tuple(out.items())


def parse(text: str) -> list[Notation]:
    """Every way ``text`` reads as a notation, most specific first (none: it is not one).

    >>> parse("P(rel=2)@5")
    [Notation(name='P', params=(('rel', '2'),), cutoff='5', trec=False)]
    >>> [n.name for n in parse("ndcg_cut_10")]  # a plain name, or trec_eval's ndcg_cut at 10
    ['ndcg_cut_10', 'ndcg_cut']

    :raises ParameterError: for a parameter given twice (``P(rel=1,rel=2)@5``).
    """
    found: list[Notation] = []
    trec = _TREC.fullmatch(text)
    named = _NAMED.fullmatch(text)
    if named is not None:
        params = _params(named["params"], text)
        if params is not None:
            found.append(Notation(named["name"], params, named["cutoff"]))
    if trec is not None:
        found.append(Notation(trec["name"], (), trec["cutoff"], trec=True))
    return found


def _cutoff(canon: Canon, text: str | None, written: str) -> int | float | None:
    if text is None:
        if canon.cutoff == "required":
            example = canon.notations[0] if canon.notations else f"{canon.name}@10"
            raise ValueError(
                f"metric {written!r}: {canon.name} needs a cutoff, such as {example!r}"
            )
        return None
    if canon.cutoff == "none":
        raise ValueError(f"metric {written!r}: {canon.name} takes no cutoff; write {canon.name!r}")
    value: int | float = canon.cutoff_domain.check(
        text, f"metric {abbreviated(written)} ({canon.name})", canon.cutoff_name, written=True
    )
    return value


def measure_of(notation: Notation, written: str) -> Measure | None:
    """The measure ``notation`` names, or ``None`` when its name is no known measure.

    :param written: the name as the user wrote it, for the error messages.
    :raises ValueError: for a known measure with a cutoff it does not take, or an unknown
        parameter (naming it and the parameters it takes).
    :raises ParameterError: for a cutoff or parameter outside its domain (naming the measure,
        the parameter and the domain), or parameters that do not go together
        (``NERR8(min_rel=3,max_rel=2)@10``).

    >>> measure_of(parse("P.10")[-1], "P.10")
    Measure(canon='P', cutoff=10, params=(('rel', None), ('judged_only', False)))
    """
    if notation.trec:
        canon_name = TREC_NAMES.get(notation.name)
        implied: tuple[tuple[str, str], ...] = ()
    else:
        canon_name, implied = _NAMES.get(notation.name, (None, ()))
        if canon_name == "NumRet" and any(key == "rel" for key, _ in notation.params):
            canon_name = "NumRelRet"  # ir_measures prints NumRelRet as NumRet(rel=1)
    if canon_name is None:
        if notation.name in _NOT_COMPUTED:
            raise ValueError(f"metric {written!r}: {_NOT_COMPUTED[notation.name]}")
        return None
    canon = CANON[canon_name]
    given = dict(notation.params)
    taken = {param.name: param for param in canon.params}
    unknown = [key for key in given if key not in taken]
    if unknown:
        takes = ", ".join(taken) or "no parameters"
        raise ValueError(
            f"metric {written!r}: {canon.name} takes {takes}; "
            f"unknown parameter(s) {', '.join(map(repr, unknown))}"
        )
    given = {**dict(implied), **given}
    owner = f"metric {abbreviated(written)} ({canon.name})"
    params = tuple(
        (
            name,
            param.domain.check(given[name], owner, name, written=True)
            if name in given
            else param.default,
        )
        for name, param in taken.items()
    )
    problem = None if canon.check is None else canon.check(dict(params))
    if problem is not None:
        raise ParameterError(f"metric {written!r} ({canon.name}): {problem}")
    return Measure(canon.name, _cutoff(canon, notation.cutoff, written), params)
