"""Every numeric trec_eval measure, read off one summary of each query.

:mod:`.summary` gathers the per-query facts once; :mod:`.cut`, :mod:`.uncut`, :mod:`.sets`,
:mod:`.judged` and :mod:`.gains` compute the measure families from them; :mod:`.aggregate` holds
trec_eval's aggregates over queries; :mod:`.plan` computes a chosen set of families per query.
"""
