"""The table of codemods: unique codes and names, complete docs, examples and corpus cases for each."""

from __future__ import annotations

import re

import pytest

from jaxfix import corpus, registry
from jaxfix.codemod import DOC_SECTIONS, doc_sections
from jaxfix.diagnostics import Safety
from tests.helpers import findings

CODEMODS = registry.all_codemods()
CASES = corpus.cases()


def test_there_are_codemods() -> None:
    assert len(CODEMODS) >= 3


def test_codes_and_names_are_unique() -> None:
    codes = [c.code for c in CODEMODS]
    names = [c.name for c in CODEMODS]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("codemod", CODEMODS, ids=lambda c: c.code)
def test_metadata(codemod) -> None:
    assert re.fullmatch(r"JF\d\d\d", codemod.code) and codemod.code != "JF000"  # JF0xx: jaxfix's own (suppressions)
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", codemod.name)
    assert codemod.summary and "\n" not in codemod.summary


@pytest.mark.parametrize("codemod", CODEMODS, ids=lambda c: c.code)
def test_docs_have_every_section(codemod) -> None:
    sections = doc_sections(codemod.docs())
    for title in DOC_SECTIONS:
        assert sections.get(title), f"{codemod.code} docs lack a '{title}' section"


@pytest.mark.parametrize("codemod", CODEMODS, ids=lambda c: c.code)
def test_examples_exist(codemod) -> None:
    assert codemod.VALID, f"{codemod.code} has no VALID examples"
    assert codemod.INVALID, f"{codemod.code} has no INVALID examples"


@pytest.mark.parametrize("codemod", CODEMODS, ids=lambda c: c.code)
def test_corpus_has_positive_and_negative_cases(codemod) -> None:
    module = codemod.__module__.rsplit(".", 1)[-1]
    mine = [c for c in CASES if c.codemod == module]
    if codemod.fix_safety in (None, Safety.DISPLAY_ONLY):  # a rule that only reports or hints: positives have findings
        assert any(c.spec.get("findings", 0) > 0 for c in mine), f"corpus/{module} has no case with findings"
        assert any(c.spec.get("findings") == 0 for c in mine), f"corpus/{module} has no case with findings = 0"
        return
    assert any(not c.negative for c in mine), f"corpus/{module} has no positive case"
    assert any(c.negative for c in mine), f"corpus/{module} has no negative case"


def test_every_corpus_folder_belongs_to_a_codemod() -> None:
    modules = {c.__module__.rsplit(".", 1)[-1] for c in CODEMODS}
    assert {c.codemod for c in CASES} <= modules


def _fixes_made(codemod) -> list:
    """Every fix the codemod makes on its INVALID examples and its corpus originals."""
    module = codemod.__module__.rsplit(".", 1)[-1]
    sources = [example.code for example in codemod.INVALID]
    sources += [c.before.read_text(encoding="utf-8") for c in CASES if c.codemod == module]
    return [d.fix for source in sources for d in findings(source, codemod) if d.fix is not None]


@pytest.mark.parametrize("codemod", CODEMODS, ids=lambda c: c.code)
def test_fix_safety_is_declared(codemod) -> None:
    """The rules table's Fix column (`fix_label`) names every safety the rule's fixes have, so that a rule whose
    fix is sometimes unsafe is never listed as safe alone."""
    made = {fix.safety for fix in _fixes_made(codemod)}
    assert made <= set(codemod.fix_safeties()), f"{codemod.code} makes {made}, declares {codemod.fix_safeties()}"
    if codemod.fix_safety is not None:
        assert codemod.fix_safety in made, f"{codemod.code}'s usual fix ({codemod.fix_safety}) is never made"


def test_opt_in_rules_need_their_code() -> None:
    opt_in = [c for c in CODEMODS if c.opt_in]
    assert opt_in, "JF902 is opt-in"
    default = registry.select()
    assert not set(opt_in) & set(default)
    assert not set(opt_in) & set(registry.select(["JF9"])) and not set(opt_in) & set(registry.select(["ALL"]))
    for codemod in opt_in:
        assert codemod in registry.select([codemod.code]) and codemod in registry.select([codemod.name])
        assert set(registry.select(extend=[codemod.code])) == {*default, codemod}
        assert codemod not in registry.select(extend=[codemod.code], ignore=["JF9"])
