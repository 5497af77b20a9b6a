"""The examples in the installed package's docstrings run and print what they show."""

from __future__ import annotations

import doctest

import ef_evaluation_speedups


def test_docstring_examples():
    result = doctest.testmod(ef_evaluation_speedups, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_the_installed_plugin_is_the_compiled_one():
    from ef.evaluation import list_plugins

    (info,) = [info for info in list_plugins() if info.name == "speedups"]
    assert info.distribution == "ef-evaluation-speedups"
    assert info.hooks == (
        "ef_evaluation_fusion_kernel",
        "ef_evaluation_qrels_pass",
        "ef_evaluation_ranking_kernel",
        "ef_evaluation_trec_run_parser",
    )
    assert ef_evaluation_speedups._trec_run.__file__.endswith((".so", ".pyd"))
    assert ef_evaluation_speedups._fusion.__file__.endswith((".so", ".pyd"))
    assert ef_evaluation_speedups._qrels.__file__.endswith((".so", ".pyd"))
    assert ef_evaluation_speedups._ranking.__file__.endswith((".so", ".pyd"))
