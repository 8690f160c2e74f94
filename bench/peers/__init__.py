"""Workloads run with other harnesses, for side-by-side figures (bench/cost_per_request.py)."""
