"""Visual reports: one self-contained HTML page per evaluation, RAG evaluation or comparison.

:mod:`.rankings`, :mod:`.evaluation`, :mod:`.comparison` and :mod:`.rag` turn reports (and the
runs, qrels, corpus and queries behind them) into plain data; :mod:`.charts` says what to draw as
Vega-Lite specifications; :mod:`.render` fills the Jinja2 templates; :mod:`.writer` writes the
page. The reports' ``to_html`` methods reach :func:`write_html_report` through
:mod:`ef.evaluation._report.html_hook`.
"""
