"""A short fuzzing run (benchmarks/fuzz.py is the long one): hypothesmith programs and mutated corpus cases
through every codemod: no crash, every output compiles, a second apply changes nothing, and the screens hide no
finding. Idempotence over the corpus itself is a property too: any case, applied twice, equals applied once."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxfix import corpus, engine, registry

_spec = importlib.util.spec_from_file_location("jaxfix_fuzz", Path(__file__).resolve().parent.parent / "benchmarks" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

SHORT = settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
SOURCES = fuzz.corpus_sources()
UNSAFE = engine.Settings(tuple(c.code for c in registry.all_codemods()), unsafe_fixes=True)


@SHORT
@given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
def test_generated_programs(program: str) -> None:
    texts = fuzz.variants(program)
    for index, text in enumerate(texts):
        assert fuzz.problems_of(text, bare=index == len(texts) - 1) == [], text


@SHORT
@given(st.integers(0, len(SOURCES) - 1), st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_mutated_corpus_cases(index: int, seed: int, steps: int) -> None:
    text = fuzz.mutate(SOURCES[index], random.Random(seed), steps)
    if fuzz.compiles(text):
        assert fuzz.problems_of(text) == [], text


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([c for c in corpus.cases()]))
def test_applying_twice_equals_applying_once(case) -> None:
    once, _, _, errors = engine.fix_text(case.before.read_text(), UNSAFE)
    twice, applied, _, _ = engine.fix_text(once, UNSAFE)
    assert not errors
    assert twice == once and applied == 0


def test_the_checks_catch_a_broken_codemod(monkeypatch) -> None:
    """The fuzzer's oracle can fail: a codemod that crashes on every call is reported (every rule is a `check`-rule:
    the crash is planted in the facts they read)."""
    from jaxfix.facts.module import FileFacts

    def broken(self):
        raise RuntimeError("planted")

    monkeypatch.setattr(FileFacts, "traced", property(broken))
    text = next(t for t in SOURCES if "for " in t and "jit" in t)
    assert any("crashed" in problem for problem in fuzz.problems_of(text))


def test_mutations_are_reproducible_and_mostly_compile() -> None:
    assert fuzz.mutants(20, seed=1) == fuzz.mutants(20, seed=1)
    assert len(fuzz.mutants(20, seed=1)) == 20


def test_a_blocked_update_names_the_first_reference_whatever_runs_beside_it() -> None:
    """Found by the fuzzer: JF401 named whichever escaping reference a scope's (unordered) accesses gave first, so
    its message changed with the codemods run beside it. It names the first in the file now."""
    text = "import jax.numpy as jnp\n\n\ndef both(v):\n    yield x\n    x = jnp.zeros(3)\n    y = x\n    y = x\n    x[0] = v\n    return x, y\n"
    jf401 = [c for c in registry.all_codemods() if c.code == "JF401"]
    alone = [d.message for d in engine.analyse(text, jf401)[0]]
    together = [d.message for d in engine.analyse(text, registry.all_codemods())[0] if d.code == "JF401"]
    assert alone == together and "line 5 (`yield x`)" in alone[0]


def test_a_static_name_the_function_does_not_have_is_no_crash() -> None:
    """Found by the fuzzer: JF503 crashed on `static_argnames` naming no positional parameter."""
    text = (
        "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\n\n"
        "@partial(jax.jit, static_argnames=('i', 'lr'))\ndef moments(xs, power, *, lr):\n    return jnp.asarray(xs) ** power * lr\n\n\n"
        "def schedule(n):\n    for step in range(n):\n        moments([0.5 * i + 1 for i in range(n)], power=2, lr=0.1 * step)\n"
    )
    diagnostics, errors, _ = engine.analyse(text, registry.all_codemods())
    assert not errors
    assert any(d.code == "JF503" and "`lr`" in d.message for d in diagnostics)


def test_a_fresh_name_is_never_a_keyword() -> None:
    """Found by the fuzzer: JF102 named a list `returns`' element `return` (its singular) and crashed on the
    statement it built. Fresh names skip keywords."""
    text = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef discounted_returns(rewards, gamma):\n"
        "    g = jnp.zeros_like(rewards[0])\n    returns = []\n    for t in reversed(range(rewards.shape[0])):\n"
        "        returns.append(g)\n        g = rewards[t] + gamma * g\n    return jnp.stack(returns[::-1])\n"
    )
    fixed, applied, _, errors = engine.fix_text(text, UNSAFE)
    assert not errors and applied == 1
    assert "return_t = g" in fixed and compile(fixed, "<fixed>", "exec")
