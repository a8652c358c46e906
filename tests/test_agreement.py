"""The `ast` screens never rule out what the LibCST analyses find, fact by fact, on every candidate node of the
examples, the corpus and the planted real-code files (benchmarks/agreement.py): every unsound disagreement is a
known one, listed with its reason in benchmarks/agreement/known-unsound.txt."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from jaxfix.analysis.traced import Kind

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ROOT / "benchmarks" / "agreement" / "known-unsound.txt"


@pytest.fixture(scope="module")
def agreement():
    spec = importlib.util.spec_from_file_location("jaxfix_benchmarks_agreement", ROOT / "benchmarks" / "agreement.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def pairs(agreement):
    return list(agreement.compare([ROOT / p for p in agreement.DEFAULT_PATHS], relative_to=ROOT))


def known() -> dict[str, str]:
    found = {}
    for line in KNOWN.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, reason = line.partition("  # ")
            assert reason.strip(), f"no reason given for {key}"
            found[key.strip()] = reason
    return found


def test_every_unsound_disagreement_is_known(pairs) -> None:
    unsound = {pair.key: str(pair) for pair in pairs if pair.verdict == "unsound"}
    listed = known()
    assert sorted(set(unsound) - set(listed)) == [], "new unsound disagreements:\n" + "\n".join(
        unsound[key] for key in sorted(set(unsound) - set(listed))
    )
    assert sorted(set(listed) - set(unsound)) == [], "listed in known-unsound.txt but no longer found"


def test_every_candidate_is_mapped_and_answered_on_both_sides(pairs) -> None:
    assert len(pairs) > 20_000  # every family asks something
    assert {pair.family for pair in pairs} >= {"traced", "kind", "truth", "carry", "impure"}
    failing = [f"{pair} [{pair.verdict}]" for pair in pairs if pair.verdict in ("unmapped", "error")]
    assert failing == []


def test_an_unsound_screen_is_found(agreement, monkeypatch) -> None:
    """A `may_carry` that says "carries nothing" where the loop carries `total` is listed as unsound."""
    text = "import jax\n\ndef f(xs):\n    total = 0.0\n    for x in xs:\n        total = total + x\n    return total\n"
    families = [agreement.BY_NAME["carry"]]
    sides = agreement.Sides("f.py", text, None)
    assert [p.verdict for p in agreement.compare_file(sides, families)] == ["agree"]
    monkeypatch.setattr(agreement.screens, "may_carry", lambda screen, loop: False)
    (pair,) = agreement.compare_file(agreement.Sides("f.py", text, None), families)
    assert (pair.verdict, str(pair)) == ("unsound", "f.py:5:5 carry ast=False cst=True `for x in xs:`")


@pytest.mark.parametrize(
    "direction,on_ast,on_libcst,verdict",
    [
        ("may", True, True, "agree"), ("may", True, False, "imprecise"), ("may", False, True, "unsound"),
        ("must", False, False, "agree"), ("must", False, True, "imprecise"), ("must", True, False, "unsound"),
        ("kind", (True, False), Kind.TRACED, "agree"), ("kind", (True, True), Kind.TRACED, "imprecise"),
        ("kind", (False, True), Kind.TRACED, "unsound"), ("kind", (False, False), Kind.UNKNOWN, "agree"),
        ("kind", (True, True), Kind.UNKNOWN, "imprecise"), ("kind", (True, False), Kind.STATIC, "unsound"),
        ("exact", ("k", None), ("k", None), "agree"), ("exact", ("k", None), ("k", ((4, 9),)), "unsound"),
    ],
)
def test_classify(agreement, direction, on_ast, on_libcst, verdict) -> None:
    assert agreement.classify(direction, on_ast, on_libcst) == verdict

