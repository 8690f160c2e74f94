"""One local Ray cluster for the whole test session (start and stop take seconds)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[ModuleType]:
    """The ray module, connected to a two-CPU local cluster started once per session."""
    try:
        import ray
    except ImportError:
        reason = "needs the ray extra: pip install -e '.[test,ray]'"
        if os.environ.get("CI") == "true":  # CI installs the extra: there it must run
            pytest.fail(f"{reason} (CI=true: the Ray tests must run)", pytrace=False)
        pytest.skip(reason)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
