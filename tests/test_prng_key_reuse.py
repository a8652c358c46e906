"""JF701 and the key analysis behind it: which paths make a reuse, and what stops the fix."""

from __future__ import annotations

import textwrap

import pytest

from codemods.prng_key_reuse import PrngKeyReuse
from tests.helpers import findings, rewrite


def _found(source: str):
    return findings(textwrap.dedent(source), PrngKeyReuse)


@pytest.mark.parametrize(
    "source",
    [
        # a rebinding between the draws
        """
        import jax
        def f(key):
            a = jax.random.normal(key)
            key = jax.random.fold_in(key, 1)
            return a, jax.random.normal(key)
        """,
        # a draw in the loop body from the loop's own target
        """
        import jax
        def f(keys):
            return [jax.random.normal(k) for k in keys]
        """,
        # break after the only draw in the loop: it runs once
        """
        import jax
        def f(key, xs):
            for x in xs:
                y = jax.random.normal(key)
                break
            return y
        """,
        # try/else: the else only runs when the body did not reach the handler
        """
        import jax
        def f(key):
            try:
                n = int("3")
            except ValueError:
                return jax.random.normal(key)
            return jax.random.uniform(key, (n,))
        """,
        # a lambda's body runs later, in its own scope
        """
        import jax
        def f(key):
            g = lambda k: jax.random.normal(k)
            return g(key)
        """,
        # a key attribute or a subscript is not followed
        """
        import jax
        def f(self, keys):
            return jax.random.normal(self.key), jax.random.normal(self.key), jax.random.normal(keys[0]), jax.random.normal(keys[0])
        """,
        # jax.random.clone: reuse on purpose
        """
        import jax
        def f(key):
            return jax.random.normal(jax.random.clone(key)), jax.random.normal(key)
        """,
        # the name `random` that is not jax.random
        """
        import random
        def f(key):
            return random.choice(key), random.choice(key)
        """,
    ],
)
def test_not_a_reuse(source: str) -> None:
    assert _found(source) == []


@pytest.mark.parametrize(
    "source, message",
    [
        ("""
        import jax
        def f(key):
            return jax.random.normal(key) + jax.random.uniform(key=key)
        """, "line 4"),
        ("""
        import jax
        def f(key, n):
            while n > 0:
                n = n - 1
                x = jax.random.normal(key)
            return x
        """, "every iteration"),
        ("""
        import jax
        def f(key):
            try:
                a = jax.random.normal(key)
                b = int("x")
            except ValueError:
                a = jax.random.uniform(key)
            return a
        """, "line 5"),
        ("""
        import jax
        def f(key, xs):
            for x in xs:
                a = jax.random.normal(key)
                b = jax.random.uniform(key)
            return a + b
        """, "previous iteration"),
    ],
)
def test_reuse(source: str, message: str) -> None:
    found = _found(source)
    assert found and any(message in d.message for d in found), [d.message for d in found]


def test_two_draws_in_a_loop_body_each_get_a_key() -> None:
    source = textwrap.dedent(
        """
        import jax
        def f(key, xs):
            for x in xs:
                a = jax.random.normal(key)
                b = jax.random.uniform(key)
            return a + b
        """
    )
    assert rewrite(source, PrngKeyReuse) == textwrap.dedent(
        """
        import jax
        def f(key, xs):
            for x in xs:
                key, subkey = jax.random.split(key)
                a = jax.random.normal(subkey)
                key, subkey_2 = jax.random.split(key)
                b = jax.random.uniform(subkey_2)
            return a + b
        """
    )


@pytest.mark.parametrize(
    "source, blocker",
    [
        ("""
        import jax
        key = jax.random.key(0)
        def f():
            return jax.random.normal(key), jax.random.normal(key)
        """, "not a local"),
        ("""
        import jax
        def f(key):
            a = jax.random.normal(key)
            g = lambda: key
            return a, jax.random.normal(key), g
        """, "nested function"),
        ("""
        import jax
        def f(key, n):
            while jax.random.uniform(key) < 0.5:
                n += 1
            return n
        """, "not in a statement of its own"),
    ],
)
def test_reported_without_a_fix(source: str, blocker: str) -> None:
    found = _found(source)
    assert found and all(d.fix is None for d in found)
    assert blocker in found[0].message, found[0].message


def test_fix_reuses_the_random_alias_and_keeps_comments() -> None:
    source = "from jax import random\n\ndef f(rng):\n    # first\n    a = random.normal(rng)\n    return a, random.normal(rng)\n"
    assert rewrite(source, PrngKeyReuse) == (
        "from jax import random\n\ndef f(rng):\n    # first\n    rng, subkey = random.split(rng)\n"
        "    a = random.normal(subkey)\n    return a, random.normal(rng)\n"
    )


def test_safe_only_apply_leaves_it() -> None:
    source = "import jax\n\ndef f(key):\n    return jax.random.normal(key), jax.random.normal(key)\n"
    assert rewrite(source, PrngKeyReuse, unsafe=False) == source
