"""Benchmark suite: gradnb against a hand-written NumPy limit and other autograd engines.

Run ``python -m benchmarks`` from the repository root (``--quick`` for a seconds-long
smoke run, ``--help`` for every option). It prints a Markdown report and writes it to
``benchmarks/RESULTS.md``.
"""
