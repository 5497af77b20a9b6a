"""The measure vocabulary: every numeric trec_eval measure, and the measures trec_eval lacks.

The second of the scoring engines (the first, at the level above, scores ef's registered
metrics). :mod:`.summary` gathers each query's facts once (:class:`~.summary.QueryFacts`, a
:class:`~ef.evaluation._scoring.ranked.RankingSummary` too); :mod:`.cut`, :mod:`.uncut`,
:mod:`.sets`, :mod:`.incomplete` and :mod:`.gains` compute trec_eval's families from them, and
:mod:`.beyond`, :mod:`.diversity`, :mod:`.cwl` and :mod:`.compat` the measures of other tools;
:mod:`.family` describes a family, :mod:`.family_scorer` computes a chosen set of them per
query, :mod:`.canon` names every measure once for the notations. Where a family is one of the
cutoff measures (nDCG, recall, precision, reciprocal rank, AP) it reads the one walk both
engines share
(:mod:`ef.evaluation._scoring.cutoffs`); aggregation over queries is
:mod:`ef.evaluation._scoring.aggregation`.
"""
