"""`--output-format json|sarif|github`: each format's shape, SARIF against the official SARIF 2.1.0 schema,
and GitHub's escaping rules."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import jsonschema
import pytest

from jaxfix.diagnostics import Diagnostic, Position
from jaxfix.report import github
from tests.test_cli import CLEAN, FINDING, run

# The official SARIF 2.1.0 schema, unchanged (tests/data/README.md says where it comes from).
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def validate(log: dict) -> None:
    jsonschema.validate(log, SCHEMA, cls=jsonschema.Draft7Validator, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
UNSAFE = (
    "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        y = x\n    else:\n"
    "        y = -x\n    return y\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(FINDING)
    (tmp_path / "pkg" / "branchy.py").write_text(UNSAFE)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def test_json_lists_each_finding_with_its_fix(repo: Path) -> None:
    result = run("check", "--output-format", "json", ".", cwd=repo)
    assert result.exit_code == 1
    findings = json.loads(result.stdout)
    by_code = {f["code"]: f for f in findings}
    safe = by_code["JF601"]
    assert safe["name"] == "print-in-traced"
    assert safe["filename"] == str((repo / "pkg" / "bad.py").resolve())
    assert safe["location"] == {"row": 6, "column": 5} and safe["end_location"] == {"row": 6, "column": 13}
    assert safe["fixable"] is True and safe["unsafe"] is False
    assert safe["fix"]["applicability"] == "safe"
    (edit,) = safe["fix"]["edits"]
    line = FINDING.splitlines()[5]
    start, end = edit["location"]["column"] - 1, edit["end_location"]["column"] - 1
    assert line[:start] + edit["content"] + line[end:] == '    jax.debug.print("{}", x)', "the edit makes the fix"
    unsafe = by_code["JF202"]
    assert unsafe["unsafe"] is True and unsafe["fix"]["applicability"] == "unsafe"


def test_json_of_a_clean_run_is_an_empty_list(repo: Path) -> None:
    result = run("check", "--output-format", "json", "good.py", cwd=repo)
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_apply_json_lists_what_is_left(repo: Path) -> None:
    result = run("apply", "--output-format", "json", ".", cwd=repo)
    assert result.exit_code == 1  # a finding is left
    left = json.loads(result.stdout)
    assert [f["code"] for f in left] == ["JF202"], "the safe fix was applied; the unsafe one is left"
    assert "fixed pkg/bad.py" in result.stderr


def test_sarif_validates_and_points_into_the_repository(repo: Path) -> None:
    result = run("check", "--output-format", "sarif", "pkg", cwd=repo)
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    validate(log)
    (sarif_run,) = log["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert all(r["shortDescription"]["text"] and r["help"]["markdown"] for r in rules)
    assert all(urlparse(r["helpUri"]).scheme == "https" for r in rules)
    results = {r["ruleId"]: r for r in sarif_run["results"]}
    found = results["JF601"]
    assert rules[found["ruleIndex"]]["id"] == "JF601"
    location = found["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "pkg/bad.py"
    assert location["region"] == {"startLine": 6, "startColumn": 5, "endLine": 6, "endColumn": 13}
    assert found["level"] == "warning"


def test_the_schema_rejects_what_code_scanning_would(repo: Path) -> None:
    """The vendored schema is no rubber stamp: a region at line 0 or a result without a message fail it."""
    log = json.loads(run("check", "--output-format", "sarif", "pkg", cwd=repo).stdout)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validate(log)


def test_github_annotations(repo: Path) -> None:
    result = run("check", "--output-format", "github", "pkg/bad.py", cwd=repo)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "::warning file=pkg/bad.py,line=6,col=5,endLine=6,endColumn=13,title=JF601::"
        "print() of a traced value runs at trace time and shows tracers; use jax.debug.print"
    ]


def test_github_escapes_data_and_properties() -> None:
    diagnostic = Diagnostic("JF601", "print-in-traced", "100% sure:\r\nnext, line", Position(1, 2), Position(1, 3))
    line = github.annotation("a,b:c%.py", diagnostic)
    assert line.startswith("::warning file=a%2Cb%3Ac%25.py,line=1,col=2,")
    assert line.endswith("::100%25 sure:%0D%0Anext, line")


def test_unknown_format_is_an_error(repo: Path) -> None:
    result = run("check", "--output-format", "xml", ".", cwd=repo)
    assert result.exit_code == 2 and "unknown --output-format 'xml'" in result.output


def test_json_from_the_cache_equals_json_from_the_analysis(repo: Path) -> None:
    cold = run("check", "--output-format", "json", ".", cwd=repo)
    assert (repo / ".jaxfix_cache").is_dir(), "the first run fills the cache"
    warm = run("check", "--output-format", "json", ".", cwd=repo)
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
    assert any(f["fix"] and f["fix"]["edits"] for f in json.loads(warm.stdout)), "text edits survive the cache"
