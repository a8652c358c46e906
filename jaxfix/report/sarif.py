"""`--output-format sarif`: a SARIF 2.1.0 log, as GitHub code scanning takes it (github/codeql-action/upload-sarif).

One run; `tool.driver.rules` holds every selected codemod (its summary, full docs as help, a help link and fix
safety); each result names its rule, has level "warning", and one location: the file's path relative to the
repository root (`uriBaseId` %SRCROOT%) and a 1-based region. Columns count code points (`columnKind`). In a
notebook the region counts lines within a cell, which the location's `properties.cell` names (1-based, every
cell counted).
tests/test_output_formats.py validates the log against the official SARIF 2.1.0 schema (tests/data/).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from jaxfix import __version__
from jaxfix.codemod import Codemod
from jaxfix.diagnostics import Diagnostic
from jaxfix.engine import FileResult
from jaxfix.report.locations import RULES_URL, repository_path, repository_root, rule_url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def rule(codemod: type[Codemod]) -> dict:
    docs = codemod.docs()
    safety = codemod.fix_safety.value if codemod.fix_safety else "none"
    return {
        "id": codemod.code,
        "name": codemod.name,
        "shortDescription": {"text": codemod.summary},
        "fullDescription": {"text": codemod.summary},
        "help": {"text": docs, "markdown": docs},
        "helpUri": rule_url(codemod.code),
        "defaultConfiguration": {"level": "warning"},
        "properties": {"fix": safety, "tags": ["jax", "performance"]},
    }


def result(path: str, diagnostic: Diagnostic, index: int) -> dict:
    region = {
        "startLine": diagnostic.start.line,
        "startColumn": diagnostic.start.column,
        "endLine": diagnostic.end.line,
        "endColumn": diagnostic.end.column,
    }
    location: dict = {
        "physicalLocation": {
            "artifactLocation": {"uri": repository_path(path), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }
    }
    message = diagnostic.message
    if diagnostic.cell is not None:
        location["properties"] = {"cell": diagnostic.cell}
        message = f"cell {diagnostic.cell}: {message}"
    return {
        "ruleId": diagnostic.code,
        "ruleIndex": index,
        "level": "warning",
        "message": {"text": message},
        "locations": [location],
    }


def render(
    results: Sequence[FileResult], codemods: Sequence[type[Codemod]], findings: dict[str, list[Diagnostic]] | None = None
) -> str:
    """The SARIF log of `results`, whose rules are `codemods` (plus any codemod a finding comes from)."""
    shown = [(r.path, d) for r in results for d in (r.diagnostics if findings is None else findings.get(r.path, []))]
    listed = list(codemods)
    known = {c.code for c in listed}
    from jaxfix import registry

    for _, diagnostic in shown:
        if diagnostic.code not in known:
            extra = registry.by_code(diagnostic.code)
            if extra is not None:
                listed.append(extra)
                known.add(extra.code)
    index = {c.code: i for i, c in enumerate(listed)}
    root = repository_root(Path.cwd().resolve())
    run = {
        "tool": {
            "driver": {
                "name": "jaxfix",
                "version": __version__,
                "informationUri": RULES_URL,
                "rules": [rule(c) for c in listed],
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [result(path, d, index[d.code]) for path, d in shown if d.code in index],
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=False)
