"""Experiments over many runs: parameter sweeps with a leaderboard, robustness curves and
ablations (docs/experiments.md). Repeated trials and change detection live in compare/."""
