"""Evaluation harness: metrics, datasets, experiments and reports.

``metrics`` (P@k, R@k, MRR, NDCG, complementarity, coverage) and ``stats`` (bootstrap
intervals, paired t-test, Cohen's d) are pure; ``datasets`` reads and writes the JSONL
benchmark format, ``gitbuild`` and ``docstrings`` make new datasets; ``retrieval`` asks
the real built-in servers once per query; ``experiment`` re-fuses per variant;
``report`` writes Markdown, JSON and plots.
"""
