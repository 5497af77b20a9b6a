"""Metric names: what each name in ``metrics=`` computes, and the catalogue of every measure.

The registered metrics come from the plugin registry, handed in; the notations, the measure
vocabulary and the trec_eval names come from the scoring layer. The plugin host knows neither.
"""
