"""The charting bundle is built once per vl-convert version and kept, checked, between runs."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest
import vl_convert

from ef.evaluation import evaluate_rag
from ef.evaluation._html import render

SAMPLES = [
    {
        "user_input": "capital?",
        "response": "Paris",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital."],
    }
]


_JAVASCRIPT_BUNDLE = vl_convert.javascript_bundle


@functools.cache
def real_bundle(snippet: str) -> str:
    """vl-convert's own bundle, built once for the module (two seconds of CPU each time)."""
    return str(_JAVASCRIPT_BUNDLE(snippet=snippet))


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """vl-convert's bundle calls, counted (each answered with vl-convert's real bundle); the
    in-process copy of the bundle dropped around."""
    calls: list[str] = []

    def counted(*, snippet: str) -> str:
        calls.append("built")
        return real_bundle(snippet)

    monkeypatch.setattr(vl_convert, "javascript_bundle", counted)
    render.vega_bundle.cache_clear()
    yield calls
    render.vega_bundle.cache_clear()


def kept_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("vega-bundle-*.js"))


def test_the_bundle_is_built_once_and_read_back_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str]
) -> None:
    monkeypatch.setenv("EF_EVALUATION_CACHE", str(tmp_path / "cache"))
    first = evaluate_rag(SAMPLES).to_html(tmp_path / "a.html").read_bytes()
    assert builds == ["built"] and len(kept_files(tmp_path / "cache")) == 1
    render.vega_bundle.cache_clear()  # as a new process would start
    second = evaluate_rag(SAMPLES).to_html(tmp_path / "b.html").read_bytes()
    assert builds == ["built"] and second == first


def test_a_damaged_bundle_is_built_again_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str]
) -> None:
    monkeypatch.setenv("EF_EVALUATION_CACHE", str(tmp_path))
    fresh = render.vega_bundle()
    (kept,) = kept_files(tmp_path)
    data = kept.read_bytes()
    for damaged in (data[: len(data) // 2], data.replace(b"vegaEmbed", b"vegaEmbeD", 1), b""):
        kept.write_bytes(damaged)
        render.vega_bundle.cache_clear()
        assert render.vega_bundle() == fresh
        assert kept.read_bytes() == data  # replaced by a whole one
    assert len(builds) == 4


def test_an_empty_setting_keeps_nothing_and_an_unwritable_folder_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str]
) -> None:
    monkeypatch.setenv("EF_EVALUATION_CACHE", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    fresh = render.vega_bundle()
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("EF_EVALUATION_CACHE", str(blocked / "cache"))
    render.vega_bundle.cache_clear()
    assert render.vega_bundle() == fresh
    assert len(builds) == 2


def test_without_a_setting_the_bundle_goes_to_the_users_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str]
) -> None:
    monkeypatch.delenv("EF_EVALUATION_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    render.vega_bundle()
    assert len(kept_files(tmp_path / "xdg" / "ef-evaluation")) == 1
