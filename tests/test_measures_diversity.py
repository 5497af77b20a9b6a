"""The diversity measures against ndeval (ir_measures' pyndeval provider), per query, on TREC
Web track-shaped diversity qrels made here (``topic subtopic doc grade``, every pooled document
judged for every subtopic, some relevant to several), read back with ``read_diversity_qrels``.

Runs have no tied scores (ndeval breaks ties by doc id ascending, trec_eval descending), and
cutoffs stay within ndeval's 20. ndeval leaves rank 1 of alpha-DCG and ERR-IA unnormalised; ef
normalises it as every other rank (pinned at the end with both values).
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import ir_measures
import pandas as pd
import pytest

from ef.evaluation import (
    DatasetFormatError,
    evaluate_run,
    measure_catalogue,
    read_diversity_qrels,
    subtopic_judgements,
)

Lines = list[tuple[str, str, str, int]]


def _web_track(seed: int, *, grades: tuple[int, ...] = (0, 0, 0, 1)) -> tuple[Lines, dict]:
    """Thirty topics of 2-6 subtopics over 15-60 pooled documents, each judged for every
    subtopic; runs of 1-60 documents, pooled and unpooled, without tied scores."""
    rng = random.Random(seed)
    lines: Lines = []
    run: dict[str, dict[str, float]] = {}
    for topic in range(1, 31):
        qid = str(100 + topic)
        subtopics = [str(s) for s in range(1, rng.randint(2, 6) + 1)]
        pool = [f"clueweb-{topic}-{i:04d}" for i in rng.sample(range(9999), rng.randint(15, 60))]
        for doc in pool:
            for subtopic in subtopics:
                lines.append((qid, subtopic, doc, rng.choice(grades)))
        lines.append((qid, subtopics[0], pool[0], max(grades)))
        lines[:] = list({(q, s, d): (q, s, d, g) for q, s, d, g in lines}.values())
        others = [f"clueweb-{topic}-x{i}" for i in range(40)]
        ranked = rng.sample(pool + others, rng.randint(1, 60))
        scores = rng.sample(range(100_000), len(ranked))
        run[qid] = {doc: score / 7 for doc, score in zip(ranked, scores, strict=True)}
    return lines, run


def _write(path: Path, lines: Lines) -> Path:
    path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in lines))
    return path


def _ndeval(measures: list[object], lines: Lines, run: dict) -> dict[str, dict[str, float]]:
    frame = pd.DataFrame(lines, columns=["query_id", "iteration", "doc_id", "relevance"])
    out: dict[str, dict[str, float]] = {}
    for metric in ir_measures.pyndeval.iter_calc(measures, frame, run):
        out.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    return out


def _ef(path: Path, run: dict, names: list[str]) -> dict[str, dict[str, float]]:
    report = evaluate_run(run, read_diversity_qrels(path), metrics=names)
    return {name: {q: v[name] for q, v in report.per_query.items()} for name in names}


def _worst(ours: dict[str, float], theirs: dict[str, float], queries: int = 30) -> float:
    assert len(theirs) == queries and set(theirs) <= set(ours)
    return max(abs(ours[q] - v) for q, v in theirs.items())


# ef's spelling → ndeval's measure (through ir_measures)
SPELLINGS = [
    ("alpha_nDCG@10", ir_measures.alpha_nDCG @ 10),
    ("alpha-nDCG@20", ir_measures.alpha_nDCG @ 20),
    ("alpha_nDCG@5", ir_measures.alpha_nDCG @ 5),
    ("alpha_nDCG@1", ir_measures.alpha_nDCG @ 1),
    ("alpha_nDCG(alpha=0.25)@10", ir_measures.alpha_nDCG(alpha=0.25) @ 10),
    ("alpha_DCG@10", ir_measures.alpha_DCG @ 10),
    ("alpha-DCG@3", ir_measures.alpha_DCG @ 3),
    ("ERR_IA@20", ir_measures.ERR_IA @ 20),
    ("ERR-IA@5", ir_measures.ERR_IA @ 5),
    ("nERR_IA@10", ir_measures.nERR_IA @ 10),
    ("nERR-IA@1", ir_measures.nERR_IA @ 1),
    ("NRBP", ir_measures.NRBP),
    ("NRBP(alpha=0.75,beta=0.9)", ir_measures.NRBP(alpha=0.75, beta=0.9)),
    ("nNRBP", ir_measures.nNRBP),
    ("nNRBP(beta=0.8)", ir_measures.nNRBP(beta=0.8)),
    ("P_IA@10", ir_measures.P_IA @ 10),
    ("P-IA@20", ir_measures.P_IA @ 20),
    ("StRecall@10", ir_measures.StRecall @ 10),
    ("strec@5", ir_measures.StRecall @ 5),
    ("S-recall@20", ir_measures.StRecall @ 20),
    ("AP_IA", ir_measures.AP_IA),
    ("MAP-IA", ir_measures.AP_IA),
]


@pytest.fixture(scope="module")
def web_track(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lines, dict, Path]:
    lines, run = _web_track(2011)
    return lines, run, _write(tmp_path_factory.mktemp("qrels") / "qrels.diversity", lines)


@pytest.mark.parametrize(("written", "oracle"), SPELLINGS, ids=[w for w, _ in SPELLINGS])
def test_each_diversity_measure_is_ndevals_per_query(
    web_track: tuple[Lines, dict, Path], written: str, oracle: object
) -> None:
    lines, run, path = web_track
    theirs = _ndeval([oracle], lines, run)[str(oracle)]
    ours = _ef(path, run, [written])[written]
    assert _worst(ours, theirs) <= 1e-12


@pytest.mark.parametrize(
    ("written", "oracle"),
    [("alpha_nDCG(rel=2)@10", ir_measures.alpha_nDCG(rel=2) @ 10),
     ("ERR_IA(rel=2)@10", ir_measures.ERR_IA(rel=2) @ 10),
     ("StRecall(rel=2)@10", ir_measures.StRecall(rel=2) @ 10),
     ("nNRBP(rel=2)", ir_measures.nNRBP(rel=2)),
     ("AP_IA(rel=2)", ir_measures.AP_IA(rel=2))],
)  # fmt: skip
def test_graded_subtopic_judgements_at_a_relevance_level_are_ndevals(
    tmp_path: Path, written: str, oracle: object
) -> None:
    lines, run = _web_track(2012, grades=(0, 0, 1, 2))
    theirs = _ndeval([oracle], lines, run)[str(oracle)]
    plain = written.replace("(rel=2)", "")  # the level changes the numbers
    ours = _ef(_write(tmp_path / "qrels", lines), run, [written, plain])
    assert _worst(ours[written], theirs) <= 1e-12
    assert _worst(ours[plain], theirs) > 1e-3


@pytest.mark.parametrize(
    ("written", "oracle"),
    [("alpha_nDCG(judged_only=True)@10", ir_measures.alpha_nDCG @ 10),
     ("P_IA(judged_only=True)@5", ir_measures.P_IA @ 5),
     ("AP_IA(judged_only=True)", ir_measures.AP_IA)],
)  # fmt: skip
def test_judged_only_diversity_is_ndevals_on_the_judged_documents(
    web_track: tuple[Lines, dict, Path], written: str, oracle: object
) -> None:
    """ndeval on the run without its unjudged documents (ir_measures' own judged_only path
    fails on a run it has turned into a generator)."""
    lines, run, path = web_track
    judged = {(q, d) for q, _, d, _ in lines}
    kept = {q: {d: s for d, s in scores.items() if (q, d) in judged} for q, scores in run.items()}
    theirs = _ndeval([oracle], lines, {q: scores for q, scores in kept.items() if scores})
    plain = written.replace("(judged_only=True)", "")
    ours = _ef(path, run, [written, plain])
    assert _worst(ours[written], theirs[str(oracle)], len(theirs[str(oracle)])) <= 1e-12
    assert any(abs(ours[plain][q] - v) > 1e-3 for q, v in theirs[str(oracle)].items())


def test_rank_one_is_normalised_where_ndeval_leaves_it_n_subtopics_times_larger(
    web_track: tuple[Lines, dict, Path],
) -> None:
    lines, run, path = web_track
    theirs = _ndeval([ir_measures.ERR_IA @ 1, ir_measures.alpha_DCG @ 1], lines, run)
    ours = _ef(path, run, ["ERR_IA@1", "alpha_DCG@1"])
    relevant = {(q, s) for q, s, _, g in lines if g >= 1}
    n_subtopics = {q: sum(1 for t, _ in relevant if t == q) for q, *_ in lines}
    for ours_name, oracle in (("ERR_IA@1", "ERR_IA@1"), ("alpha_DCG@1", "alpha_DCG@1")):
        for q, value in theirs[oracle].items():
            assert ours[ours_name][q] * n_subtopics[q] == pytest.approx(value, abs=1e-12)
            assert 0.0 <= ours[ours_name][q] <= 1.0
    assert any(value > 1.0 for value in theirs["ERR_IA@1"].values())


def test_the_ad_hoc_measures_read_a_documents_largest_grade_over_its_subtopics(
    web_track: tuple[Lines, dict, Path],
) -> None:
    lines, run, path = web_track
    largest: dict[str, dict[str, int]] = {}
    for q, _, d, g in lines:
        largest.setdefault(q, {})[d] = max(g, largest[q].get(d, g) if q in largest else g)
    theirs = {
        m.query_id: m.value
        for m in ir_measures.pytrec_eval.iter_calc([ir_measures.AP], largest, run)
    }
    ours = _ef(path, run, ["AP"])["AP"]
    assert _worst(ours, theirs) <= 1e-12


def test_subtopic_judgements_from_a_mapping_are_the_files() -> None:
    lines, run = _web_track(2013)
    nested: dict[str, dict[str, dict[str, int]]] = {}
    for q, s, d, g in lines:
        nested.setdefault(q, {}).setdefault(s, {})[d] = g
    theirs = _ndeval([ir_measures.alpha_nDCG @ 10], lines, run)["alpha_nDCG@10"]
    report = evaluate_run(run, subtopic_judgements(nested), metrics=["alpha_nDCG@10"])
    assert _worst({q: v["alpha_nDCG@10"] for q, v in report.per_query.items()}, theirs) <= 1e-12


def test_a_diversity_measure_on_ordinary_qrels_says_what_it_needs() -> None:
    with pytest.raises(ValueError, match=r"alpha_nDCG needs judgements per subtopic") as caught:
        evaluate_run({"q1": ["d1"]}, {"q1": {"d1": 1}}, metrics=["alpha_nDCG@10"])
    assert "read_diversity_qrels" in str(caught.value)
    assert "for query 'q1'" in "".join(getattr(caught.value, "__notes__", []))


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [("51 1 d1 1\n51 1 d2\n", 2, "found 3 columns; expected 4 whitespace-separated columns"),
     ("51 1 d1 1\n\n51 2 d1 high\n", 3, "grade 'high' is not a number"),
     ("51 1 d1 1\n51 2 d1 0\n51 1 d1 0\n", 3, r"doc 'd1' judged again for topic '51', "
      r"subtopic '1' \(first on line 1\)")],
)  # fmt: skip
def test_a_bad_diversity_qrels_line_names_the_file_and_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    with pytest.raises(DatasetFormatError, match=rf"qrels\.txt:{line}: {problem}"):
        read_diversity_qrels(path)


def test_the_catalogue_lists_each_diversity_measure_with_ndeval_as_its_source() -> None:
    catalogue = measure_catalogue(notations=True)
    for name in ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "P_IA",
                 "StRecall", "AP_IA"):  # fmt: skip
        assert catalogue[name].source == "ndeval (ir_measures' pyndeval provider)", name


def test_a_subtopic_qrels_file_round_trips_the_grades(tmp_path: Path) -> None:
    lines, _ = _web_track(2014)
    qrels = read_diversity_qrels(_write(tmp_path / "qrels", lines))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = sorted((q, s, d, int(g)) for q, j in qrels.items() for d, by in j.by_doc.items()
                      for s, g in by.items())  # fmt: skip
    assert back == sorted(lines)
