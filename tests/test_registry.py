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


# ---- precedence between rules: declared (`yields_to`), never by importing another rule ----------------------


def test_precedence_names_rules_and_has_no_cycle() -> None:
    codes = {c.code for c in CODEMODS}
    for codemod in CODEMODS:
        for precedence in codemod.yields_to:
            assert precedence.code in codes and precedence.code != codemod.code, (codemod.code, precedence.code)
            assert precedence.reason.startswith(f"left to {precedence.code} ({registry.by_code(precedence.code).name})")

    def after(code: str, seen: tuple[str, ...] = ()) -> None:
        assert code not in seen, f"a cycle of precedence: {' -> '.join((*seen, code))}"
        for precedence in registry.by_code(code).yields_to:
            after(precedence.code, (*seen, code))

    for codemod in CODEMODS:
        after(codemod.code)


def test_the_rules_a_selection_yields_to_run_too() -> None:
    """JF101 yields to JF102 and JF301, and JF102 to JF301: selecting JF101 alone runs both, unreported."""
    fori, scan, vmap = (registry.by_code(code) for code in ("JF101", "JF102", "JF301"))
    assert registry.yielded_to([fori]) == (scan, vmap)
    assert registry.yielded_to([scan]) == (vmap,)
    assert registry.yielded_to([fori, scan, vmap]) == ()


def test_a_rule_visits_after_the_rules_it_yields_to_and_others_keep_their_places() -> None:
    from jaxfix.analysis.context import ModuleContext
    from libcst.metadata import MetadataWrapper
    import libcst as cst

    context = ModuleContext(MetadataWrapper(cst.parse_module("x = 1\n")))
    ordered = [v.code for v in registry.with_precedence([c(context) for c in CODEMODS])]
    assert sorted(ordered) == sorted(c.code for c in CODEMODS)
    assert ordered.index("JF301") < ordered.index("JF102") < ordered.index("JF101")
    rest = [c.code for c in CODEMODS if not c.yields_to]
    assert [code for code in ordered if code in rest] == rest
