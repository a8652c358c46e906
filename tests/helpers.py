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
