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


def findings(source: str, codemod: type[Codemod]):
    diagnostics, errors, _ = analyse(source, [codemod])
    assert not errors, errors
    return diagnostics


def invoke_in(folder, *args: str):
    """`jaxfix ARGS` through typer's CliRunner, run from `folder` (paths and pyproject lookups are relative to it)."""
    import os
    from pathlib import Path

    from typer.testing import CliRunner

    from jaxfix.cli import app

    old = Path.cwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        os.chdir(old)
