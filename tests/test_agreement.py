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
    assert {pair.family for pair in pairs} >= {"traced", "truth", "carry", "impurity-exact", "traced-exact", "kind-exact"}
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


def test_the_traced_fact_on_ast_answers_as_traced_analysis(pairs) -> None:
    """facts/traced.py and TracedAnalysis agree exactly: every function's traced-ness, transformations, parameter
    kinds and call sites, every expression's kind, every `if`/`while`'s guard (none is listed as known)."""
    exact = [pair for pair in pairs if pair.family in ("traced-exact", "kind-exact", "guarded-exact")]
    assert len(exact) > 25_000
    assert [str(pair) for pair in exact if pair.verdict != "agree"] == []


def test_the_predicates_fact_on_ast_answers_as_predicate_analysis(pairs) -> None:
    """facts/predicates.py (over facts/flow.py's reaching definitions) and PredicateAnalysis (over FunctionFlow and
    ArrayAnalysis) agree exactly: every tracer and every array evidence in traced code, every name's array-ness
    and reaching bindings, every truth test's Truth (none is listed as known)."""
    exact = [pair for pair in pairs if pair.family in ("tracer-exact", "array-evidence-exact", "values-array-exact",
                                                      "reaching-exact", "truth-exact")]  # fmt: skip
    assert len(exact) > 40_000
    assert [str(pair) for pair in exact if pair.verdict != "agree"] == []


def test_the_purity_fact_on_ast_answers_as_dataflow(pairs) -> None:
    """facts/purity.py and LibCST's Dataflow agree exactly: reason and node of what stops each loop body (plain,
    with the lists it appends to, with run-time effects), each function, each `if` arm and conditional expression,
    of the first use of a `for` target or a `while` counter as a Python int, and whether each expression read is
    array-like."""
    exact = [pair for pair in pairs if pair.family in ("impurity-exact", "array-like-exact")]
    assert {pair.family for pair in exact} == {"impurity-exact", "array-like-exact"}
    assert len(exact) > 25_000
    assert [str(pair) for pair in exact if pair.verdict != "agree"] == []


def test_the_purity_unit_cases_agree_with_dataflow(agreement) -> None:
    """Every snippet of tests/test_purity.py is answered alike on both trees."""
    from tests import test_purity

    families = [agreement.BY_NAME["impurity-exact"]]
    for code in [c for c, _ in [*test_purity.LOOPS, *test_purity.CONCRETE]] + [c for c, _, _ in test_purity.FUNCTIONS]:
        sides = agreement.Sides("f.py", test_purity.HEADER + code, None)
        pairs = list(agreement.compare_file(sides, families))
        assert pairs and [str(p) for p in pairs if p.verdict != "agree"] == []


def test_a_wrong_purity_fact_is_found(agreement) -> None:
    """A `Purity.call_blocker` that finds every call pure is listed against Dataflow's I/O."""
    text = "def f(xs):\n    for x in xs:\n        print(x)\n"
    families = [agreement.BY_NAME["impurity-exact"]]
    sides = agreement.Sides("f.py", text, None)
    sides.purity.call_blocker = lambda *arguments, **options: None
    (pair, function) = agreement.compare_file(sides, families)
    assert pair.verdict == "unsound" and "does I/O (`print`) @3:8" in pair.on_libcst and "does I/O" not in pair.on_ast
    assert function.verdict == "unsound"


def test_a_wrong_traced_fact_is_found(agreement) -> None:
    """A `Traced.kind` that calls every expression TRACED is listed against the STATIC ones that TracedAnalysis
    (the rules' LibCST view of the same fact, through the bridge) gives."""
    text = "import jax\n\n@jax.jit\ndef f(x):\n    return x + 1\n"
    families = [agreement.BY_NAME["kind-exact"], agreement.BY_NAME["traced-exact"]]
    assert {p.verdict for p in agreement.compare_file(agreement.Sides("f.py", text, None), families)} == {"agree"}
    sides = agreement.Sides("f.py", text, None)
    sides.traced.kind = lambda node, **options: Kind.TRACED  # the `ast` side's own Traced only
    wrong = [str(p) for p in agreement.compare_file(sides, families) if p.verdict == "unsound"]
    assert wrong == [
        "f.py:3:2 kind-exact ast=TRACED cst=STATIC `jax.jit`", "f.py:3:2 kind-exact ast=TRACED cst=STATIC `jax`",
        "f.py:5:16 kind-exact ast=TRACED cst=STATIC `1`",
    ]


def test_the_loop_facts_on_ast_answer_as_dataflow_and_carry(pairs) -> None:
    """facts/loops.py and facts/carry.py agree exactly with analysis/dataflow.py and analysis/carry.py: every field
    of every loop's LoopFlow, the bindings reaching every statement and the names live after it, every carry blocker
    and the kind of every carried name."""
    exact = [pair for pair in pairs if pair.family in ("loop-flow-exact", "flow-exact", "carry-exact")]
    assert {pair.family for pair in exact} == {"loop-flow-exact", "flow-exact", "carry-exact"}
    assert len(exact) > 10_000
    assert [str(pair) for pair in exact if pair.verdict != "agree"] == []


def test_a_wrong_loop_fact_is_found(agreement, monkeypatch) -> None:
    """A loop flow on `ast` that carries nothing, and a carry blocker that lets everything through, are listed."""
    text = "import jax\n\n@jax.jit\ndef f(x):\n    y = None\n    for i in range(3):\n        y = x\n    return y\n"
    families = [agreement.BY_NAME[name] for name in ("loop-flow-exact", "flow-exact", "carry-exact")]
    assert {p.verdict for p in agreement.compare_file(agreement.Sides("f.py", text, None), families)} == {"agree"}
    real = agreement.loop_flow
    monkeypatch.setattr(agreement, "loop_flow", lambda flow, loop: real(flow, loop).__class__(
        **{**vars(real(flow, loop)), "carried": ()}))
    monkeypatch.setattr(agreement.carry_fact.CarryAnalysis, "blocker", lambda self, loop, flow, **options: None)
    wrong = {p.family for p in agreement.compare_file(agreement.Sides("f.py", text, None), families) if p.verdict == "unsound"}
    assert wrong == {"loop-flow-exact", "carry-exact"}


def test_a_rule_asking_with_a_built_expression_reads_its_code_where_it_stands(agreement) -> None:
    """TracedAnalysis.kind of an expression no node of the module spells (a rule built it): its code's kind in
    `within`, as if it stood there (`x` TRACED, `n` STATIC there; `n` carried as traced with `assume`)."""
    import libcst as cst

    text = "import jax\n\n@jax.jit\ndef f(x):\n    n = 3\n    return x + n\n"
    traced = agreement.Sides("f.py", text, None).context.traced
    function = next(iter(traced.traced_functions()))
    assert traced.kind(cst.parse_expression("x * 2"), within=function) is Kind.TRACED
    assert traced.kind(cst.Name("n"), within=function) is Kind.STATIC
    assert traced.kind(cst.Name("n"), within=function, assume={"n": Kind.TRACED}) is Kind.TRACED
    assert traced.kind(cst.Name("x")) is Kind.UNKNOWN  # nowhere: a module-level name no binding gives


@pytest.mark.parametrize(
    "text",
    [
        # `case step:` binds `step` in `f` (LibCST binds no capture): `lax.scan(step, ...)` scans the captured value
        "import jax\ndef step(c, x):\n    return c + x, x\n@jax.jit\ndef f(xs, mode):\n    match mode:\n"
        "        case step:\n            pass\n    return jax.lax.scan(step, 0.0, xs)\n",
        # a walrus in a comprehension binds in `f` (LibCST: in the comprehension), so `body` below is `f`'s local
        "import jax\ndef body(c, x):\n    return c, x\n@jax.jit\ndef f(xs):\n    ys = [(body := v) for v in xs]\n"
        "    return jax.lax.scan(body, 0, xs)\n",
    ],
)
def test_where_python_scoping_makes_the_ast_fact_differ(agreement, text) -> None:
    """The only differences known between the `ast` fact and the LibCST TracedAnalysis it replaced (none occurs in
    examples/, corpus/, tests/planted or the 10 real trees, where both agreed exactly before the LibCST one was
    deleted): a name that Python binds in the traced function but LibCST's scopes did not. The binder resolves it
    as Python does, so the module-level def is not what the function passes, and is not traced (LibCST's scopes
    said it was)."""
    sides = agreement.Sides("f.py", text, None)
    module_def = sides.tree.body[1]
    assert not sides.traced.is_traced(module_def)
    assert not sides.context.traced.is_traced(sides.bridge.cst_of(module_def))  # what the rules see


@pytest.mark.parametrize(
    "direction,on_ast,on_libcst,verdict",
    [
        ("may", True, True, "agree"), ("may", True, False, "imprecise"), ("may", False, True, "unsound"),
        ("must", False, False, "agree"), ("must", False, True, "imprecise"), ("must", True, False, "unsound"),
        ("kind", (True, False), Kind.TRACED, "agree"), ("kind", (True, True), Kind.TRACED, "imprecise"),
        ("kind", (False, True), Kind.TRACED, "unsound"), ("kind", (False, False), Kind.UNKNOWN, "agree"),
        ("kind", (True, True), Kind.UNKNOWN, "imprecise"), ("kind", (True, False), Kind.STATIC, "unsound"),
        ("exact", ("k", None), ("k", None), "agree"), ("exact", ("k", None), ("k", ((4, 9),)), "unsound"),
        ("exact", "TRACED", "TRACED", "agree"), ("exact", "STATIC", "UNKNOWN", "unsound"), ("exact", (), (), "agree"),
    ],
)
def test_classify(agreement, direction, on_ast, on_libcst, verdict) -> None:
    assert agreement.classify(direction, on_ast, on_libcst) == verdict

