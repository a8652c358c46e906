"""Small helpers shared by the tests."""

from __future__ import annotations

from jaxfix import registry
from jaxfix.codemod import Codemod
from jaxfix.engine import Settings, analyse, fix_text


def codemod_for_module(module_name: str) -> type[Codemod]:
    for codemod in registry.all_codemods():
        if codemod.__module__.rsplit(".", 1)[-1] == module_name:
            return codemod
    raise LookupError(f"no codemod module named {module_name}")


def rewrite(source: str, codemod: type[Codemod], *, unsafe: bool = True) -> str:
    new_text, _, _, errors = fix_text(source, Settings((codemod.code,), unsafe_fixes=unsafe))
    assert not errors, errors
    return new_text


def rewrite_project(folder, codemod: type[Codemod], *, unsafe: bool = True) -> dict[str, str]:
    """Every module of the project in `folder` (its root) as `jaxfix apply` leaves it, by file name: each module
    rewritten with the facts the project index gives it."""
    from jaxfix.project_io import build_project

    project = build_project([folder], root=folder)
    settings = Settings((codemod.code,), unsafe_fixes=unsafe)
    rewritten = {}
    for path in sorted(folder.glob("*.py")):
        facts = project.facts_for(str(path))
        new_text, _, _, errors = fix_text(path.read_text(encoding="utf-8"), settings, path=str(path), project=facts)
        assert not errors, errors
        rewritten[path.name] = new_text
    return rewritten


def project_findings(folder, codemod: type[Codemod]) -> list:
    """(file name, diagnostic) of what the codemod reports in every module of the project in `folder`."""
    from jaxfix.project_io import build_project

    project = build_project([folder], root=folder)
    found = []
    for path in sorted(folder.glob("*.py")):
        diagnostics, errors, _ = analyse(path.read_text(encoding="utf-8"), [codemod], project=project.facts_for(str(path)))
        assert not errors, errors
        found.extend((path.name, d) for d in diagnostics)
    return found


def findings(source: str, codemod: type[Codemod]):
    diagnostics, errors, _ = analyse(source, [codemod])
    assert not errors, errors
    return diagnostics


def invoke_in(folder, *args: str, input: str | None = None):
    """`jaxfix ARGS` through typer's CliRunner, run from `folder` (paths and pyproject lookups are relative to it);
    `input`: what stdin reads."""
    import os
    from pathlib import Path

    from typer.testing import CliRunner

    from jaxfix.cli import app

    old = Path.cwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(app, list(args), input=input)
    finally:
        os.chdir(old)
