"""Benchmarks (not part of ``make test``): ``python -m benchmarks.<name>``."""
