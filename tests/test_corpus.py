"""Every corpus case, three ways: golden (the rewrite of before.py is after.py), idempotent (rewriting after.py
changes nothing) and equivalent (both compute the same numbers on the case's arguments)."""

from __future__ import annotations

import pytest

from jaxfix import corpus
from tests.helpers import codemod_for_module, findings, project_findings, rewrite, rewrite_project

CASES = corpus.cases()
PROJECT_CASES = corpus.project_cases()


def _by_id(cases):
    return pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])


@_by_id(CASES)
def test_golden(case: corpus.Case) -> None:
    codemod = codemod_for_module(case.codemod)
    before = case.before.read_text(encoding="utf-8")
    assert rewrite(before, codemod, unsafe=case.spec.get("unsafe", False)) == case.after.read_text(encoding="utf-8")


@_by_id(CASES)
def test_idempotent(case: corpus.Case) -> None:
    codemod = codemod_for_module(case.codemod)
    after = case.after.read_text(encoding="utf-8")
    assert rewrite(after, codemod, unsafe=True) == after


@_by_id([c for c in CASES if "findings" in c.spec])
def test_findings(case: corpus.Case) -> None:
    codemod = codemod_for_module(case.codemod)
    reported = findings(case.before.read_text(encoding="utf-8"), codemod)
    assert len(reported) == case.spec["findings"], [d.message for d in reported]


@_by_id([c for c in CASES if c.runnable and not c.negative])
def test_equivalent(case: corpus.Case) -> None:
    if not case.compared:
        pytest.skip(f"not compared: {case.spec['not_equivalent']}")
    tolerance = {"rtol": case.spec.get("rtol", 1e-6), "atol": case.spec.get("atol", 1e-6)}
    for args, kwargs in corpus.argument_sets(case):
        rewritten = corpus.call(corpus.load_function(case.after, case.spec["entry"], tag="after"), args, kwargs)
        if "original_raises" in case.spec:
            with pytest.raises(Exception) as raised:  # loading counts too: a removed API may fail at import
                original = corpus.load_function(case.before, case.spec["entry"], tag="before")
                corpus.call(original, args, kwargs)
            assert type(raised.value).__name__ == case.spec["original_raises"]
            corpus.assert_same(rewritten, corpus.expected(case), **tolerance)
        else:
            original = corpus.call(corpus.load_function(case.before, case.spec["entry"], tag="before"), args, kwargs)
            corpus.assert_same(rewritten, original, **tolerance)


@_by_id([c for c in CASES if c.runnable and c.negative])
def test_negative_case_runs(case: corpus.Case) -> None:
    """A negative case is working code that must stay untouched: it has to run."""
    for args, kwargs in corpus.argument_sets(case):
        corpus.call(corpus.load_function(case.before, case.spec["entry"], tag="before"), args, kwargs)


@_by_id([c for c in CASES if "identical" in c.spec])
def test_identical_values_become_independent(case: corpus.Case) -> None:
    """What a rewrite that changes numbers on purpose promises instead: values the original computes equal
    (draws from one reused PRNG key) are pairwise different in the rewrite."""
    import numpy as np

    assert not case.negative and not case.compared
    for args, kwargs in corpus.argument_sets(case):
        for path, equal in ((case.before, True), (case.after, False)):
            out = corpus.call(corpus.load_function(path, case.spec["entry"], tag=path.stem), args, kwargs)
            values = [np.asarray(eval(source, {"out": out, "np": np})) for source in case.spec["identical"]]
            pairs = [(a, b) for i, a in enumerate(values) for b in values[i + 1:]]
            close = [np.allclose(a, b, rtol=1e-6, atol=1e-6) for a, b in pairs]
            if equal:
                assert all(close), f"{path.name}: expected equal values"
            else:
                assert not any(close), f"{path.name}: expected different values"


@_by_id([c for c in CASES if c.spec.get("grad") and c.runnable and not c.negative])
def test_equivalent_gradients(case: corpus.Case) -> None:
    """`grad = true`: the rewrite's gradient is the original's on each argument set (the original run with jit
    disabled, as a user without jit runs it), and stays so under vmap, where `lax.cond` becomes a select that
    runs both branches: a NaN-guard `if` must not become a NaN gradient."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    original = corpus.load_function(case.before, case.spec["entry"], tag="before")
    rewritten = corpus.load_function(case.after, case.spec["entry"], tag="after")
    xs = []
    for args, kwargs in corpus.argument_sets(case):
        with jax.disable_jit():
            wanted = jax.grad(original)(*args, **kwargs)
        assert np.isfinite(wanted)
        np.testing.assert_allclose(jax.grad(rewritten)(*args, **kwargs), wanted, rtol=1e-6, atol=1e-6)
        xs.append((args[0], wanted))
    batch = jnp.stack([x for x, _ in xs])
    wanted = np.stack([w for _, w in xs])
    np.testing.assert_allclose(jax.vmap(jax.grad(rewritten))(batch), wanted, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda b: jax.vmap(rewritten)(b).sum())(batch), wanted, rtol=1e-6, atol=1e-6)


# ---- notebook cases: before.ipynb / after.ipynb, their code cells as one module ----------------------------------

NOTEBOOK_CASES = corpus.notebook_cases()


def _rewrite_notebook(raw: bytes, codemod, *, unsafe: bool) -> bytes:
    from jaxfix import notebook

    module_text = notebook.read(raw).module()[0]
    return notebook.rewritten(raw, rewrite(module_text, codemod, unsafe=unsafe))[0]


def test_notebook_cases_cover_the_issue() -> None:
    """A loop jitted across cells, a magic in the fixed cell, a cell with a syntax error, outputs with images."""
    names = {c.name for c in NOTEBOOK_CASES}
    assert {"notebook_loop_across_cells", "notebook_magic_in_cell", "notebook_syntax_error_cell", "notebook_outputs_with_images"} <= names
    assert all(not c.negative for c in NOTEBOOK_CASES)


@_by_id(NOTEBOOK_CASES)
def test_notebook_golden(case: corpus.Case) -> None:
    codemod = codemod_for_module(case.codemod)
    rewritten = _rewrite_notebook(case.before.read_bytes(), codemod, unsafe=case.spec.get("unsafe", False))
    assert rewritten.decode("utf-8") == case.after.read_text(encoding="utf-8")


@_by_id(NOTEBOOK_CASES)
def test_notebook_idempotent(case: corpus.Case) -> None:
    after = case.after.read_bytes()
    assert _rewrite_notebook(after, codemod_for_module(case.codemod), unsafe=True) == after


@_by_id(NOTEBOOK_CASES)
def test_notebook_only_sources_change(case: corpus.Case) -> None:
    """Outputs, execution counts, metadata and ids as they were; only some code cells' `source` differs."""
    import json

    before, after = (json.loads(p.read_text(encoding="utf-8")) for p in (case.before, case.after))
    assert {k: v for k, v in before.items() if k != "cells"} == {k: v for k, v in after.items() if k != "cells"}
    changed = 0
    for old, new in zip(before["cells"], after["cells"], strict=True):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
        changed += old["source"] != new["source"]
    assert changed >= 1


@_by_id([c for c in NOTEBOOK_CASES if "findings" in c.spec])
def test_notebook_findings(case: corpus.Case) -> None:
    from jaxfix import notebook

    module_text = notebook.read(case.before.read_bytes()).module()[0]
    reported = findings(module_text, codemod_for_module(case.codemod))
    assert len(reported) == case.spec["findings"], [d.message for d in reported]


@_by_id([c for c in NOTEBOOK_CASES if c.runnable])
def test_notebook_equivalent(case: corpus.Case) -> None:
    tolerance = {"rtol": case.spec.get("rtol", 1e-6), "atol": case.spec.get("atol", 1e-6)}
    for args, kwargs in corpus.argument_sets(case):
        rewritten = corpus.call(corpus.load_function(case.after, case.spec["entry"], tag="after"), args, kwargs)
        if "original_raises" in case.spec:
            with pytest.raises(Exception) as raised:
                corpus.call(corpus.load_function(case.before, case.spec["entry"], tag="before"), args, kwargs)
            assert type(raised.value).__name__ == case.spec["original_raises"]
            corpus.assert_same(rewritten, corpus.expected(case), **tolerance)
        else:
            original = corpus.call(corpus.load_function(case.before, case.spec["entry"], tag="before"), args, kwargs)
            corpus.assert_same(rewritten, original, **tolerance)


# ---- cases of several modules: the project index decides what is traced ------------------------------------------


@_by_id(PROJECT_CASES)
def test_project_golden(case: corpus.ProjectCase) -> None:
    codemod = codemod_for_module(case.codemod)
    assert rewrite_project(case.before, codemod, unsafe=case.spec.get("unsafe", False)) == case.modules(case.after)


@_by_id(PROJECT_CASES)
def test_project_idempotent(case: corpus.ProjectCase) -> None:
    codemod = codemod_for_module(case.codemod)
    assert rewrite_project(case.after, codemod, unsafe=True) == case.modules(case.after)


@_by_id([c for c in PROJECT_CASES if "findings" in c.spec])
def test_project_findings(case: corpus.ProjectCase) -> None:
    reported = project_findings(case.before, codemod_for_module(case.codemod))
    assert len(reported) == case.spec["findings"], [(name, d.message) for name, d in reported]


@_by_id([c for c in PROJECT_CASES if c.runnable])
def test_project_equivalent(case: corpus.ProjectCase) -> None:
    """The entry computes the same numbers in before/ and after/ (a negative case: it runs)."""
    if not case.compared:
        pytest.skip(f"not compared: {case.spec['not_equivalent']}")
    tolerance = {"rtol": case.spec.get("rtol", 1e-6), "atol": case.spec.get("atol", 1e-6)}
    module, entry = case.spec["entry_module"], case.spec["entry"]
    for args, kwargs in corpus.argument_sets(case):
        original = corpus.call(corpus.load_project_function(case.before, module, entry), args, kwargs)
        rewritten = corpus.call(corpus.load_project_function(case.after, module, entry), args, kwargs)
        corpus.assert_same(rewritten, original, **tolerance)
