"""Builds the C extension; everything else about the distribution is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ef_evaluation_speedups._trec_run",
            sources=["src/ef_evaluation_speedups/_trec_run.c"],
            extra_compile_args=["-O2"],
        )
    ]
)
