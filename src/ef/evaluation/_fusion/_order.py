"""trec_eval's order of scored doc ids, the one place this package takes it from."""

from __future__ import annotations

from ef.evaluation._trec import rank_by_score

__all__ = ["rank_by_score"]
