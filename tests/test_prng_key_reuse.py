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


# ---- aliases: one key under two names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, message",
    [
        # Flax-style: `rng = key`, then a draw from each
        ("""
        import jax
        def init(key):
            rng = key
            w = jax.random.normal(key, (3,))
            return w, jax.random.normal(rng, (3,))
        """, "holds the same key as `key`"),
        # both names of a tuple bound to one key
        ("""
        import jax
        def init(rng):
            params_rng, dropout_rng = rng, rng
            return jax.random.normal(params_rng), jax.random.bernoulli(dropout_rng, 0.5)
        """, "holds the same key as `params_rng`"),
        # a tuple built with the key, unpacked after a draw from it
        ("""
        import jax
        def f(key, x):
            state = (x, key)
            a = jax.random.normal(key)
            _, rng = state
            return a, jax.random.normal(rng)
        """, "holds the same key as `key`"),
        # an alias bound in the loop gets the same key each iteration
        ("""
        import jax
        def f(key, n):
            out = []
            for _ in range(n):
                k = key
                out.append(jax.random.normal(k))
            return out
        """, "every iteration"),
    ],
)
def test_reuse_through_an_alias(source: str, message: str) -> None:
    found = _found(source)
    assert found and any(message in d.message for d in found), [d.message for d in found]


@pytest.mark.parametrize(
    "source",
    [
        # the alias keeps the incoming key, but nothing draws from it after the split
        """
        import jax
        def f(key):
            seed_key = key
            key, subkey = jax.random.split(key)
            return jax.random.normal(subkey), jax.random.normal(key), jax.random.key_data(seed_key)
        """,
        # rebinding one name leaves the other: `a, b = b, a` swaps two distinct keys
        """
        import jax
        def f(key, other):
            key, other = other, key
            return jax.random.normal(key), jax.random.normal(other)
        """,
        # an alias drawn from once, the original never again
        """
        import jax
        def f(key):
            rng = key
            return jax.random.normal(rng)
        """,
    ],
)
def test_alias_not_a_reuse(source: str) -> None:
    assert _found(source) == []


def test_alias_fix_splits_the_name_the_later_draw_reads() -> None:
    # `key, subkey = split(key)` before the first draw would leave `rng` holding the consumed key
    source = textwrap.dedent(
        """
        import jax
        def init(key):
            rng = key
            w = jax.random.normal(key, (3,))
            return w, jax.random.normal(rng, (3,))
        """
    )
    assert rewrite(source, PrngKeyReuse) == textwrap.dedent(
        """
        import jax
        def init(key):
            rng = key
            rng, subkey = jax.random.split(rng)
            w = jax.random.normal(subkey, (3,))
            return w, jax.random.normal(rng, (3,))
        """
    )


def test_alias_fix_splits_the_original_where_the_alias_is_bound_later() -> None:
    # `k` is not bound yet at the first draw: the split goes to `key`, which `k = key` then takes
    source = textwrap.dedent(
        """
        import jax
        def f(key):
            a = jax.random.normal(key)
            k = key
            return a, jax.random.normal(k)
        """
    )
    assert rewrite(source, PrngKeyReuse) == textwrap.dedent(
        """
        import jax
        def f(key):
            key, subkey = jax.random.split(key)
            a = jax.random.normal(subkey)
            k = key
            return a, jax.random.normal(k)
        """
    )


def test_alias_in_a_loop_splits_the_key_the_alias_is_bound_from() -> None:
    # splitting `k` would leave `key` consumed and `k = key` would hand it back next iteration: the check of the
    # fix rejects `k` and takes `key`
    source = textwrap.dedent(
        """
        import jax
        def f(key, n):
            out = []
            for _ in range(n):
                k = key
                out.append(jax.random.normal(k))
            return out
        """
    )
    fixed = rewrite(source, PrngKeyReuse)
    assert "        key, subkey = jax.random.split(key)\n        out.append(jax.random.normal(subkey))\n" in fixed
    assert _found(fixed) == []


# ---- lax loops: the carry brings the key back ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, message",
    [
        ("""
        import jax
        def f(key, xs):
            def step(key, x):
                return key, x + jax.random.normal(key)
            return jax.lax.scan(step, key, xs)
        """, "every step of `jax.lax.scan`"),
        ("""
        import jax
        def f(key, x):
            def body(i, state):
                x, key = state
                return x + jax.random.normal(key), key
            return jax.lax.fori_loop(0, 3, body, (x, key))
        """, "every step of `jax.lax.fori_loop`"),
        ("""
        from jax import lax, random
        def f(key):
            def body(state):
                i, x, key = state
                return i + 1, x + random.normal(key), key
            return lax.while_loop(lambda s: s[0] < 3, body, (0, 0.0, key))
        """, "every step of `jax.lax.while_loop`"),
        # through partial: the carry is the parameter after the bound ones
        ("""
        import jax
        from functools import partial
        def f(key, xs, scale):
            def step(scale, key, x):
                return key, scale * jax.random.normal(key)
            return jax.lax.scan(partial(step, scale), key, xs)
        """, "every step of `jax.lax.scan`"),
        # the carry returned under the name it was built with (PureJaxRL's `runner_state`)
        ("""
        import jax
        def f(key, xs):
            def step(runner_state, x):
                obs, rng = runner_state
                a = jax.random.normal(rng)
                runner_state = (obs + a, rng)
                return runner_state, a
            return jax.lax.scan(step, (0.0, key), xs)
        """, "every step of `jax.lax.scan`"),
        # the key split within the step, then drawn from and carried: the next step splits a consumed key
        ("""
        import jax
        def f(key):
            def body(i, carry):
                x, key = carry
                key, sub = jax.random.split(key)
                x = x + jax.random.normal(sub) + jax.random.normal(key)
                return (x, key)
            return jax.lax.fori_loop(0, 3, body, (0.0, key))
        """, "previous step of `jax.lax.fori_loop`"),
    ],
)
def test_reuse_across_steps_of_a_lax_loop(source: str, message: str) -> None:
    found = _found(source)
    assert found and any(message in d.message for d in found), [d.message for d in found]
    # each fix carries the key a split leaves over: nothing is left to find
    assert _found(rewrite(textwrap.dedent(source), PrngKeyReuse)) == []


@pytest.mark.parametrize(
    "source",
    [
        # split at each step, the key left over carried (PureJaxRL)
        """
        import jax
        def f(key, xs):
            def env_step(runner_state, x):
                obs, rng = runner_state
                rng, rng_action = jax.random.split(rng)
                obs = obs + jax.random.normal(rng_action)
                runner_state = (obs, rng)
                return runner_state, obs
            return jax.lax.scan(env_step, (0.0, key), xs)
        """,
        # keys from the scanned-over input, one per step
        """
        import jax
        def f(key, n):
            def step(total, k):
                return total + jax.random.normal(k), None
            return jax.lax.scan(step, 0.0, jax.random.split(key, n))
        """,
        # a key that the carry holds but the body never draws from
        """
        import jax
        def f(key, xs):
            def step(carry, x):
                total, key = carry
                return (total + x, key), x
            return jax.lax.scan(step, (0.0, key), xs)
        """,
    ],
)
def test_lax_loop_not_a_reuse(source: str) -> None:
    assert _found(source) == []


def test_scan_fix_carries_the_key_left_over() -> None:
    source = textwrap.dedent(
        """
        import jax
        def rollout(key, xs):
            def step(carry, x):
                obs, key = carry
                action = jax.random.categorical(key, obs + x)
                noise = jax.random.normal(key, obs.shape)
                return (obs + noise, key), action
            return jax.lax.scan(step, (xs[0], key), xs)
        """
    )
    found = _found(source)
    assert len(found) == 2 and all(d.fix is not None for d in found)
    assert rewrite(source, PrngKeyReuse) == textwrap.dedent(
        """
        import jax
        def rollout(key, xs):
            def step(carry, x):
                obs, key = carry
                key, subkey = jax.random.split(key)
                action = jax.random.categorical(subkey, obs + x)
                key, subkey_2 = jax.random.split(key)
                noise = jax.random.normal(subkey_2, obs.shape)
                return (obs + noise, key), action
            return jax.lax.scan(step, (xs[0], key), xs)
        """
    )


@pytest.mark.parametrize(
    "source, blocker",
    [
        # the body returns the carry it was given: no split changes what it hands back
        ("""
        import jax
        def f(key, xs):
            def step(carry, x):
                obs, key = carry
                return carry, obs + jax.random.normal(key)
            return jax.lax.scan(step, (0.0, key), xs)
        """, "cannot change the key the body hands back"),
        # the carry is built before the draw
        ("""
        import jax
        def f(key, xs):
            def step(runner_state, x):
                obs, rng = runner_state
                runner_state = (obs, rng)
                return runner_state, jax.random.normal(rng)
            return jax.lax.scan(step, (0.0, key), xs)
        """, "cannot change the key the body hands back"),
    ],
)
def test_lax_loop_reported_without_a_fix(source: str, blocker: str) -> None:
    found = _found(source)
    assert found and all(d.fix is None for d in found)
    assert blocker in found[0].message, found[0].message


def test_no_partial_fix_in_a_body_that_repeats_every_step() -> None:
    # splitting between the two draws would make them differ within a step, but every step would still draw
    # what the one before drew: the whole body is left to the user
    source = textwrap.dedent(
        """
        import jax
        def f(key, xs):
            def step(carry, x):
                obs, key = carry
                a = jax.random.normal(key)
                b = jax.random.uniform(key)
                return carry, a + b
            return jax.lax.scan(step, (0.0, key), xs)
        """
    )
    found = _found(source)
    assert len(found) == 2 and all(d.fix is None for d in found)
    assert any("every step would still draw the same numbers" in d.message for d in found)
    assert rewrite(source, PrngKeyReuse) == source


def test_drawing_scopes_are_those_with_a_draw_of_their_own() -> None:
    # the module first, then the defs in `flow.walk` order (LibCST's `syntax.walk` order, in which fresh
    # `subkey` names are handed out); a lambda's draw is its def's, a nested def's is not
    import ast

    from jaxfix.facts.binder import Binder
    from jaxfix.facts.flow import walk
    from jaxfix.facts.keys import KeyFacts

    source = textwrap.dedent(
        """
        import jax
        key = jax.random.key(0)
        def outer(key):
            def inner(k):
                return jax.random.normal(k)
            g = lambda: jax.random.uniform(key)
            return inner
        def plain(x):
            return jax.random.fold_in(x, 1)
        def first(key):
            return jax.random.split(key)
        x = jax.random.normal(key)
        """
    )
    tree = ast.parse(source)
    facts = KeyFacts(Binder(tree), source)
    walked = [n.name for n in walk(tree) if isinstance(n, ast.FunctionDef)]
    assert walked == ["first", "plain", "outer", "inner"]
    drawing = facts.drawing_scopes()
    assert drawing[0] is tree
    assert [scope.name for scope in drawing[1:]] == ["first", "outer", "inner"]
    draws = [n for n in walk(tree) if isinstance(n, ast.Call) and facts.consumed_key(n) is not None]
    assert sorted(facts.consumed_key(n).id for n in draws) == ["k", "key", "key", "key"]
    assert facts.consumed_key(ast.parse("jax.random.normal(key)").body[0].value) is None  # not in the module
