"""Benchmarks: speed and memory targets, measured by scripts (run them, read the figures)."""
