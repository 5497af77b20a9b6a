"""Builds the C extensions; everything else about the distribution is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ef_evaluation_speedups._trec_run",
            sources=["src/ef_evaluation_speedups/_trec_run.c"],
            extra_compile_args=["-O2"],
        ),
        Extension(
            "ef_evaluation_speedups._fusion",
            sources=["src/ef_evaluation_speedups/_fusion.c"],
            # No fused multiply-add: each IEEE operation rounds once, as in Python.
            extra_compile_args=["-O2", "-ffp-contract=off"],
        ),
        Extension(
            "ef_evaluation_speedups._ranking",
            sources=["src/ef_evaluation_speedups/_ranking.c"],
            depends=["src/ef_evaluation_speedups/_grow.h"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
        ),
        Extension(
            "ef_evaluation_speedups._qrels",
            sources=["src/ef_evaluation_speedups/_qrels.c"],
            depends=["src/ef_evaluation_speedups/_grow.h"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
        ),
    ]
)
