"""The pytest plugin is tested by running pytest inside pytest (`pytester`)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # `pytest_plugins = ["pytester"]` is refused in a conftest below the top; loading the
    # plugin here gives the same fixture to these tests only.
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture(scope="session", autouse=True)
def _polygon_imported() -> None:
    """Everything a run imports, imported before the first pytest-in-pytest session.

    An in-process pytester session drops the modules first imported inside it when it ends, so
    the next import would make new module objects: the API's lazily read names would then no
    longer be the objects other tests of this process see. A run played here first keeps them.
    """
    import polygon_voice
    import polygon_voice.api

    for name in polygon_voice.__all__:
        getattr(polygon_voice, name)
    for name in polygon_voice.api.__all__:
        getattr(polygon_voice.api, name)
    suite = polygon_voice.build_suite(
        [{"id": "warm-up", "script": [{"say": "Bye."}]}], "three-layer"
    )
    polygon_voice.run_suite(suite, agent="reference:robust", db=":memory:", write_files=False)
