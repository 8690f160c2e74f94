"""The vendored chart library: the files the report inlines, and the vendoring script's
checks (integrity, the interpreter's rewrite), without the network."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from polygon_voice.report.templating import SCRIPT_FILES, asset

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def vendor_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "vendor_charts", ROOT / "scripts" / "vendor_charts.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vendor_charts"] = module
    spec.loader.exec_module(module)
    return module


def test_every_vendored_file_is_there_with_its_licence(vendor_script: ModuleType) -> None:
    folder = ROOT / "src" / "polygon_voice" / "report" / "assets" / "vendor"
    versions = (folder / "VERSIONS").read_text().splitlines()
    for package, line in zip(vendor_script.PACKAGES, versions, strict=True):
        assert line.startswith(f"{package.name}@{package.version} {package.build} sha512-")
        assert f"vendor/{package.out}" in SCRIPT_FILES
        assert (
            "BSD" in (folder / f"{package.name}.LICENSE").read_text()
            or "Redistribution" in (folder / f"{package.name}.LICENSE").read_text()
        )
    interpreter = asset("vendor/vega-interpreter.js")
    assert "var vegaInterpreter = (function () {" in interpreter
    assert "import " not in interpreter.split("\n", 3)[2]
    assert "export {" not in interpreter


def test_the_rewrite_fails_clearly_when_the_module_changed(vendor_script: ModuleType) -> None:
    imported, exported = vendor_script.INTERPRETER_IMPORT, vendor_script.INTERPRETER_EXPORT
    good = f"{imported}\nfunction expression() {{}}\n{exported}\n"
    rewritten = vendor_script.rewrite_interpreter(good)
    assert "= vega;" in rewritten
    assert "return { expressionInterpreter: expression };" in rewritten
    with pytest.raises(vendor_script.VendorError, match="expected exactly one"):
        vendor_script.rewrite_interpreter(good.replace("'vega-util'", "'./util.js'"))
    with pytest.raises(vendor_script.VendorError, match="expected exactly one"):
        vendor_script.rewrite_interpreter(good + exported)


def test_a_tarball_must_match_its_integrity(vendor_script: ModuleType) -> None:
    package = vendor_script.PACKAGES[0]
    data = b"tarball bytes"
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    vendor_script.check_integrity(package, data, integrity)
    with pytest.raises(vendor_script.VendorError, match="does not match"):
        vendor_script.check_integrity(package, data + b"!", integrity)


def test_vega_embed_reads_its_property_in_index_form(vendor_script: ModuleType) -> None:
    name = vendor_script.EMBED_PROPERTY
    dotted = f"if(n&&n!==i.{name})return o.{name};const x=a[0].{name}+b.{name}s"
    rewritten = vendor_script.rewrite_embed(dotted)
    # Each dotted read becomes an index read (the same in JavaScript); a longer name stays.
    assert rewritten == (
        f'if(n&&n!==i["{name}"])return o["{name}"];const x=a[0]["{name}"]+b.{name}s'
    )
    with pytest.raises(vendor_script.VendorError, match="package changed"):
        vendor_script.rewrite_embed("const o=i.version;")
    # The committed build is the rewritten one, and still holds all three reads.
    embed = asset("vendor/vega-embed.min.js")
    assert vendor_script.EMBED_DOTTED.search(embed) is None
    assert embed.count(f'["{name}"]') >= 3
