"""Rewrites written to fool `jaxfix verify` (tests/planted/): each wrong one is caught with default options, and
its good twin (`*_fixed.py`) verifies. Each pair targets one way the verifier used to be fooled: a tolerance
scaled up for tiny values, integers never negative, floats never at the constants the code compares against (nor
at the inputs one step of its arithmetic carries onto them), no NaN among the drawn floats, float32 inputs to a
module that enables x64, float arrays for a PRNG key, settings read from the wrong folder."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
import pytest

from jaxfix.verify import collect, compare, runner, strategies, usage
from jaxfix.verify.settings import VerifySettings, load
from jaxfix.verify.targets import DIFFERS, VERIFIED, Options
from tests.helpers import invoke_in

PLANTED = Path(__file__).resolve().parent / "planted"

# pair: (function, a line the shrunk counterexample must contain)
PAIRS = {
    "tiny_values": ("correction", "rewrite gradient[0]: float32[1] [2.33715e-05]"),  # twice the original's: one doubling too many
    "negative_index": ("activation", "mode: -1"),
    "boundary": ("gate", "x: float32[] 0.37"),
    "stepped_boundary": ("time_above", "x: float32[1] [0.375]"),  # 0.375 * 0.8 lands on the 0.3 compared with
    "nan_propagation": ("hinge", "margin: nan"),  # the original's `1.0 - margin` keeps the NaN; the rewrite's 0 does not
    "key_by_use": ("jitter", "key: key<threefry2x32>[]"),
    "key_call_site": ("jitter", "key: key<threefry2x32>[]"),  # the key reaches jax.random through a helper
}
X64 = {"x64": ("total", "x: float64[1]")}  # its own worker: the module turns on x64 for the whole process


def _reports(pairs: dict[str, tuple[str, str]], after: str) -> dict[str, object]:
    """Reports by pair name."""
    targets = []
    for name, (function, _) in pairs.items():
        targets += collect.pair_targets(PLANTED / f"{name}_before.py", PLANTED / f"{name}_{after}.py", [function], VerifySettings())
    return dict(zip(pairs, runner.run(targets, Options())))


@pytest.fixture(scope="module")
def wrong():
    return {**_reports(PAIRS, "after"), **_reports(X64, "after")}


@pytest.fixture(scope="module")
def twins():
    return {**_reports(PAIRS, "fixed"), **_reports(X64, "fixed")}


@pytest.mark.parametrize("pair", [*PAIRS, *X64])
def test_wrong_rewrite_is_caught(pair: str, wrong) -> None:
    _, line = {**PAIRS, **X64}[pair]
    report = wrong[pair]
    assert report.status == DIFFERS, report
    assert any(line in text for text in report.devices[0].counterexample), report.devices[0].counterexample


@pytest.mark.parametrize("pair", [*PAIRS, *X64])
def test_good_twin_verifies(pair: str, twins) -> None:
    report = twins[pair]
    assert report.status == VERIFIED, report
    assert report.devices[0].examples >= 20


def test_a_key_the_function_hands_on_falls_back_to_its_call_site(twins) -> None:
    """Annotated `jax.Array` and passed to a helper: drawn as float arrays the original raises on every input,
    so the module's own call `jitter(jax.random.key(0), ...)` gives the inputs."""
    assert twins["key_call_site"].origin.startswith("call sites "), twins["key_call_site"]
    assert twins["key_by_use"].origin == "annotations"


def _cli(*args: str, cwd: Path):
    return invoke_in(cwd, *args)


def test_settings_come_from_the_checked_files_pyproject(tmp_path: Path) -> None:
    """`shift` has neither annotations nor call sites: its inputs are in the pyproject.toml beside it, and jaxfix
    runs from another folder (whose own pyproject.toml has none)."""
    project = tmp_path / "project"
    shutil.copytree(PLANTED / "own_settings", project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text("[tool.jaxfix]\n")
    wrong = _cli("verify", str(project / "shift_before.py"), str(project / "shift_after.py"), cwd=elsewhere)
    assert wrong.exit_code == 1, wrong.output
    assert "differs" in wrong.output and "(pyproject.toml)" not in wrong.output
    good = _cli("verify", str(project / "shift_before.py"), str(project / "shift_fixed.py"), cwd=elsewhere)
    assert good.exit_code == 0, good.output
    assert "verified  50 examples (pyproject.toml)" in good.output
    assert load(project / "shift_before.py").functions["shift"]["k"] == {"kind": "int", "min": 0, "max": 3}


# ---- the parts --------------------------------------------------------------------------------------------


def _compare(a, b):
    return compare.compare(compare.Outcome(value=a), compare.Outcome(value=b), size=4)[0]


def test_a_relative_error_of_one_is_never_hidden_by_scale() -> None:
    for scale in (1e-6, 1e-3, 1.0, 1e6):
        wanted = np.array([1.0, 0.5, 3.0], np.float32) * scale
        assert _compare(wanted, wanted * 2) is not None, scale
        assert _compare(wanted, wanted * (1 + 1e-6)) is None, scale
    difference = _compare(np.float32(1e-6), np.float32(2e-6))
    assert "rtol 2e-05" in difference.message and "atol 2e-11" in difference.message


def test_near_zero_values_are_judged_against_their_leaf() -> None:
    """Cancellation: an element near zero in a leaf of ones may be off by rounding of the ones."""
    assert _compare(np.array([1.0, 1e-9], np.float32), np.array([1.0, 2e-9], np.float32)) is None
    assert _compare(np.zeros(3, np.float32), np.zeros(3, np.float32)) is None
    assert _compare(np.zeros(3, np.float32), np.full(3, 1e-6, np.float32)) is not None


def test_compared_constants_are_read_from_the_original() -> None:
    tree = ast.parse(
        "def f(x, y):\n    if x > 0.5:\n        return jnp.clip(y, -2, 3.5)\n    return jnp.where(y <= -0.25, y, 0.0)\n"
    )
    assert set(usage.compared_constants(tree, "f")) == {0.5, -2.0, 3.5, -0.25, 0.0}
    special = strategies.special_floats(np.float32, 10.0, (0.5,))
    assert 0.5 in special and float(np.nextafter(np.float32(0.5), np.float32(1))) in special
    assert 0.0 in special and max(special) >= 1e5 and min(abs(v) for v in special if v) <= 1e-7


def test_constants_reached_through_one_step_of_arithmetic_are_drawn() -> None:
    """`x = x * 2.0` then `x > 3.0` meets 3.0 exactly from 1.5; `x + 1.0`, `x - 0.5`, `x / 4`, `10 - x` likewise."""
    tree = ast.parse(
        "def f(x, n):\n"
        "    for _ in range(n):\n"
        "        x = x * 2.0\n"
        "        x = jnp.where(x > 3.0, x - 0.5, x + 1.0)\n"
        "        x /= 4\n"
        "        y = 10 - x\n"
        "    return x, y * (2 * 3)\n"
    )
    found = usage.compared_constants(tree, "f")
    assert found[0] == 3.0, "the compared constant comes first"
    assert {1.5, 3.5, 2.0, 12.0, 7.0} <= set(found)
    assert 6.0 not in found, "`2 * 3` is arithmetic of literals, not a step of the input"
    floats = strategies.at_constants(np.float32, (0.3 / 0.8,))
    assert 0.375 in floats and float(np.float32(0.375) * np.float32(0.8)) == float(np.float32(0.3))


def test_nan_infinities_and_negative_zero_are_drawn_by_default() -> None:
    """A fair share of examples holds NaN or an infinity, and most stay finite, however many float arguments
    there are; -0.0 is among the specials."""
    from hypothesis import HealthCheck, given, seed, settings

    for count in (1, 6):
        params = tuple((f"x{i}", {"kind": "array", "dtype": "float32", "shape": [3]}) for i in range(count))
        seen: list[list[np.ndarray]] = []

        @seed(0)
        @settings(max_examples=200, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(strategies.from_specs(params, count, magnitude=10.0, nan=Options().nan, evaluate=eval))
        def draw(call) -> None:
            seen.append([leaf.array for leaf in call.args])

        draw()
        share = {what: np.mean([any(test(a).any() for a in arrays) for arrays in seen]) for what, test in (("nan", np.isnan), ("inf", np.isinf))}
        assert 0.03 <= share["nan"] <= 0.4 and 0.03 <= share["inf"] <= 0.4, (count, share)
        assert np.mean([all(np.isfinite(a).all() for a in arrays) for arrays in seen]) >= 0.4, count
        assert any(np.isposinf(a).any() for arrays in seen for a in arrays) and any(np.isneginf(a).any() for arrays in seen for a in arrays)
    zeros = [v for v in strategies.special_floats(np.float32, 10.0) if v == 0.0]
    assert sorted(np.signbit(zeros)) == [False, True], "0.0 and -0.0"


def test_prng_keys_are_recognised_by_use() -> None:
    source = (
        "import jax\nfrom jax import random as jr\n"
        "def f(key, rng, x, seed):\n"
        "    a, b = jax.random.split(key)\n"
        "    k = jax.random.key(seed)\n"
        "    return jr.normal(rng, x.shape) + jax.random.uniform(k, ())\n"
    )
    assert usage.key_parameters(ast.parse(source), "f") == {"key", "rng"}


@pytest.mark.parametrize(
    "text, on",
    [
        ('import jax\njax.config.update("jax_enable_x64", True)\n', True),
        ('from jax import config\nconfig.update("jax_enable_x64", False)\n', False),
        ("import jax\njax.enable_x64()\n", True),
        ("import jax\n", False),
    ],
)
def test_x64_is_detected_in_the_module(text: str, on: bool, monkeypatch) -> None:
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    assert usage.enables_x64(text) is on


def test_x64_changes_only_dtypes_not_spelled_out() -> None:
    from jaxfix.verify import annotations

    def spec(text: str) -> dict:
        return annotations.spec_for(ast.parse(text, mode="eval").body, x64=True)

    assert spec('Float[Array, "n"]')["dtype"] == "float64"
    assert spec('Float32[Array, "n"]')["dtype"] == "float32"
    assert spec("jax.Array")["dtype"] == "float64"
    assert spec('Int[Array, ""]')["dtype"] == "int64"


def test_ints_include_negatives_and_examples_stay_small() -> None:
    from hypothesis import given, settings

    seen: set[int] = set()

    @settings(max_examples=60, database=None, deadline=None)
    @given(strategies.like((5,)))
    def check(value) -> None:
        (steps,) = value
        assert steps in (-1, 0, 1, 5), "a loop bound from an example stays one of few small values"
        seen.add(steps)

    check()
    assert -1 in seen


def test_mutation_sites_are_found() -> None:
    """benchmarks/mutation.py's mutations: each kind it names is made where the code has a site for it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mutation", Path(__file__).resolve().parent.parent / "benchmarks" / "mutation.py")
    mutation = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutation)
    source = (
        "import jax\nimport jax.numpy as jnp\n"
        "def f(x, n):\n"
        "    x = jax.lax.fori_loop(0, n, lambda i, x: x * 2, x)\n"
        "    y = jnp.where(x > 0, x, -x)\n"
        "    c, ys = jax.lax.scan(lambda c, v: (c + v, c), 0.0, y)\n"
        "    z = jax.vmap(jnp.sum, in_axes=0)(jnp.ones((2, 3), dtype=jnp.float32))\n"
        "    return ys, z\n"
    )
    made = mutation.mutants(source)
    assert {kind for kind, _ in made} == {"bound off by one", "branch swap", "reverse flipped", "axis change", "dtype change"}
    assert any("jax.lax.fori_loop(0, n + 1," in text for kind, text in made if kind == "bound off by one")
    assert any("jnp.where(x > 0, -x, x)" in text for kind, text in made if kind == "branch swap")
    assert any("reverse=True" in text for kind, text in made if kind == "reverse flipped")
    assert any("in_axes=1" in text for kind, text in made if kind == "axis change")
    assert any("dtype=jnp.float16" in text for kind, text in made if kind == "dtype change")
