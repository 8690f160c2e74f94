"""What every vendor format must do, checked the same way for each: its fixtures are
recognised by it alone, `--format auto` chooses it without doubt, and no input — a fixture
mutated one step at a time, or any JSON value at all — gives anything but an ImportedCall or
a RecordError."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from polygon_voice.imports.detect import Detector
from tests.imports.fixtures.vendor_checks import (
    JSON_VALUES,
    VENDOR_FORMATS,
    fixture_names,
    load,
    mutations,
    parse_or_error,
)

FIXTURES = [(system, name) for system in VENDOR_FORMATS for name in fixture_names(system)]


@pytest.mark.parametrize(("system", "name"), FIXTURES)
def test_a_fixture_is_recognised_by_its_own_format_only(system: str, name: str) -> None:
    record = load(system, name)
    assert [fmt for fmt, f in VENDOR_FORMATS.items() if f.detect(record)] == [system]


@pytest.mark.parametrize(("system", "name"), FIXTURES)
def test_auto_detection_chooses_the_fixtures_format(system: str, name: str) -> None:
    detector = Detector.for_name("auto")
    assert detector.choose(load(system, name)).name == system
    assert detector.ambiguous == {}


@pytest.mark.parametrize(("system", "name"), FIXTURES)
def test_every_mutation_parses_or_names_an_error(system: str, name: str) -> None:
    parser = VENDOR_FORMATS[system]
    for record in mutations(load(system, name)):
        parse_or_error(parser.parse, record)
        parser.detect(record)


@pytest.mark.parametrize("system", list(VENDOR_FORMATS))
def test_fuzz_any_json(system: str) -> None:
    parser = VENDOR_FORMATS[system]

    @settings(max_examples=300, deadline=None)
    @given(JSON_VALUES)
    def check(record: object) -> None:
        parser.detect(record)
        parse_or_error(parser.parse, record)

    check()
