"""The parts of `jaxfix verify`, each on its own: input specs from annotations, pyproject specs and call sites;
which functions a rewrite changed; the comparison; the strategies; the runner's isolation and timeouts."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from jaxfix.config import ConfigError
from jaxfix.verify import annotations, callsites, compare, functions, inputs, runner, strategies
from jaxfix.verify import settings as verify_settings
from jaxfix.verify.targets import DIFFERS, UNVERIFIED, VERIFIED, Module, Options, Report, Source, Target


def _annotation(text: str):
    return annotations.spec_for(ast.parse(text, mode="eval").body)


# ---- annotations ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotation, spec",
    [
        ('Float[Array, "b d"]', {"kind": "array", "dtype": "float32", "shape": ["b", "d"], "numpy": False}),
        ('Int32[Array, ""]', {"kind": "array", "dtype": "int32", "shape": [], "numpy": False}),
        ('jaxtyping.Bool[jax.Array, "*batch 3"]', {"kind": "array", "dtype": "bool", "shape": ["*batch", 3], "numpy": False}),
        ('Float64[np.ndarray, "n _"]', {"kind": "array", "dtype": "float64", "shape": ["n", "_"], "numpy": True}),
        ('Float[Array, "... #c"]', {"kind": "array", "dtype": "float32", "shape": ["...", "c"], "numpy": False}),
        ('Key[Array, ""]', {"kind": "key", "shape": []}),
        ("jax.Array", {"kind": "array", "dtype": "float32", "shape": None, "numpy": False}),
        ("jnp.ndarray", {"kind": "array", "dtype": "float32", "shape": None, "numpy": False}),
        ("np.ndarray", {"kind": "array", "dtype": "float32", "shape": None, "numpy": True}),
        ("npt.NDArray[np.float64]", {"kind": "array", "dtype": "float64", "shape": None, "numpy": True}),
        ("float", {"kind": "float"}),
        ("int", {"kind": "int"}),
        ("Optional[bool]", {"kind": "bool"}),
        ("float | None", {"kind": "float"}),
        ("'Float[Array, \"n\"]'", {"kind": "array", "dtype": "float32", "shape": ["n"], "numpy": False}),
    ],
)
def test_annotation_specs(annotation: str, spec: dict) -> None:
    assert _annotation(annotation) == spec


@pytest.mark.parametrize("annotation", ['Float[Array, "n+1"]', "str", "MyArray", "dict[str, float]", 'Float[Array, n]'])
def test_annotations_without_a_spec(annotation: str) -> None:
    assert _annotation(annotation) is None


def test_signature_specs_positional_then_defaults_then_keywords() -> None:
    tree = ast.parse("def f(x: jax.Array, n: int, scale=2.0, *, flag: bool, mode='a'): ...")
    params, positional, missing = inputs.signature_specs(tree.body[0].args, lambda a: annotations.spec_for(a.annotation))
    assert [name for name, _ in params] == ["x", "n", "scale", "flag", "mode"]
    assert positional == 2  # scale keeps its default, so flag goes by keyword
    assert params[2][1] == {"kind": "default"} and missing == []


def test_a_parameter_without_annotation_or_default_is_missing(tmp_path: Path) -> None:
    source = "def f(x, y: float):\n    return x * y\n"
    (tmp_path / "m.py").write_text(source)
    found, why = inputs.sources(tmp_path / "m.py", source, "f", verify_settings.VerifySettings())
    assert found == []
    assert "no annotation for x" in why and "no call with literal arguments" in why


def test_instance_methods_are_not_verified(tmp_path: Path) -> None:
    source = "class C:\n    def m(self, x: float):\n        return x\n    @staticmethod\n    def s(x: float):\n        return x\n"
    (tmp_path / "m.py").write_text(source)
    assert "instance method" in inputs.sources(tmp_path / "m.py", source, "C.m", verify_settings.VerifySettings())[1]
    assert inputs.sources(tmp_path / "m.py", source, "C.s", verify_settings.VerifySettings())[0][0].origin == "annotations"


# ---- [tool.jaxfix.verify] ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, spec",
    [
        ("float32[b, 16]", {"kind": "array", "dtype": "float32", "shape": ["b", 16], "numpy": False}),
        ("np.float64[3]", {"kind": "array", "dtype": "float64", "shape": [3], "numpy": True}),
        ("int32", {"kind": "array", "dtype": "int32", "shape": None, "numpy": False}),
        ("int 1..20", {"kind": "int", "min": 1, "max": 20}),
        ("float -0.5..0.5", {"kind": "float", "min": -0.5, "max": 0.5}),
        ("key[4]", {"kind": "key", "shape": [4]}),
        ("bool", {"kind": "bool"}),
        ("= jnp.eye(3)", {"kind": "value", "expr": "jnp.eye(3)"}),
        (0.5, {"kind": "value", "expr": "0.5"}),
        (True, {"kind": "value", "expr": "True"}),
        ({"w": "float32[d]"}, {"kind": "dict", "items": {"w": {"kind": "array", "dtype": "float32", "shape": ["d"], "numpy": False}}}),
    ],
)
def test_pyproject_specs(value, spec) -> None:
    assert verify_settings.parse_spec(value) == spec


def test_pyproject_settings_and_errors(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jaxfix]\nselect = ["JF1"]\n[tool.jaxfix.verify]\nmax-examples = 7\ntimeout = 30\n'
        '[tool.jaxfix.verify.functions."src/m.py:f"]\nx = "float32[n]"\n[tool.jaxfix.verify.functions.f]\nx = "float"\n'
    )
    loaded = verify_settings.load(tmp_path)
    assert loaded.options.max_examples == 7 and loaded.options.timeout == 30.0
    assert loaded.specs_for(tmp_path / "src" / "m.py", "f") == {"x": verify_settings.parse_spec("float32[n]")}
    assert loaded.specs_for(tmp_path / "other.py", "f") == {"x": {"kind": "float"}}
    from jaxfix import config

    assert config.load(tmp_path).select == ["JF1"], "[tool.jaxfix.verify] is no unknown key for the main settings"
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix.verify.functions.f]\nx = "floot32[n]"\n')
    with pytest.raises(ConfigError, match="cannot read the spec 'floot32"):
        verify_settings.load(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.verify]\nmax_examples = 3\n")
    with pytest.raises(ConfigError, match="unknown .* key"):
        verify_settings.load(tmp_path)


# ---- call sites -------------------------------------------------------------------------------------------


def test_call_sites_in_the_module_and_the_tests(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    module = textwrap.dedent(
        """
        import jax
        import jax.numpy as jnp

        def f(x, n):
            return x * n

        def demo():
            key = jax.random.key(0)
            x = jax.random.normal(key, (8, 3))
            return f(x, 4), f(x, n=unknown_name)
        """
    )
    (tmp_path / "pkg" / "m.py").write_text(module)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text(
        "import numpy as np\nfrom pkg.m import f as g\n\ndef test_it():\n    assert g(np.ones((2, 2), dtype=np.float32), 3).shape == (2, 2)\n"
    )
    found = callsites.find(tmp_path / "pkg" / "m.py", module, "f", "pkg.m")
    assert found.calls == [
        {"args": ["jax.random.normal(jax.random.key(0), (8, 3))", "4"], "kwargs": {}},
        {"args": ["np.ones((2, 2), dtype=np.float32)", "3"], "kwargs": {}},
    ]
    assert "import numpy as np" in found.imports and "import jax.numpy as jnp" in found.imports
    assert found.where[1].endswith("test_m.py:5")


# ---- which functions changed ------------------------------------------------------------------------------


def test_changed_functions_and_their_callers() -> None:
    before = "from jax.tree_util import tree_map as tm\n\ndef a(x):\n    return tm(f, x)\n\ndef b(x):\n    return x + 1\n\ndef c(x):\n    return b(x)\n\nd = jax.jit(c)\n"
    after = before.replace("from jax.tree_util import tree_map as tm", "from jax.tree import map as tm").replace("x + 1", "x + 1.0")
    assert functions.changed(before, after) == ["a", "b"]  # a reads the rebound `tm`; b's own code changed
    assert functions.callers(ast.parse(after), {"b"}) == ["c", "d"]
    assert functions.reached(ast.parse(after), "d") == {"c", "b"}
    assert functions.owner_at(ast.parse(after), 7) == "b"


# ---- comparison -------------------------------------------------------------------------------------------


def _compare(a, b, **kwargs):
    return compare.compare(compare.Outcome(value=a), compare.Outcome(value=b), size=kwargs.pop("size", 1), **kwargs)[0]


def test_comparison_is_exact_on_structure_shape_dtype() -> None:
    assert "structure" in _compare((np.ones(2),), [np.ones(2)]).message
    assert "shape (2,) != (3,)" in _compare(np.ones(2, np.float32), np.ones(3, np.float32)).message
    assert "dtype float32 != float64" in _compare(np.ones(2, np.float32), np.ones(2, np.float64)).message
    assert _compare(np.arange(3), np.arange(3)) is None
    assert "at [2]: 2 != 3 (exact" in _compare(np.arange(3), np.array([0, 1, 3])).message
    assert _compare({"a": 1.5, "b": None}, {"a": np.float32(1.5), "b": None}) is None, "a Python float is float32 to JAX"


def test_comparison_of_floats_nan_inf_and_tolerance() -> None:
    a = np.array([1.0, np.nan, np.inf, 0.0], np.float32)
    assert _compare(a, a.copy()) is None, "NaN where NaN"
    assert "NaN in one" in _compare(a, np.array([1.0, 0.0, np.inf, 0.0], np.float32)).message
    assert "infinity" in _compare(a, np.array([1.0, np.nan, -np.inf, 0.0], np.float32)).message
    close = np.float32(1.0) + np.float32(5e-6)
    assert _compare(np.float32(1.0), close) is None  # within 1e-5 relative
    assert _compare(np.float32(1.0), np.float32(1.0001)) is not None
    assert _compare(np.float32(1.0), np.float32(1.0001), size=2**10) is None, "tolerance grows with the problem size"
    assert _compare(np.float32(1.0), np.float32(1.0001), rtol=1e-3, atol=0.0) is None, "case.toml tolerances win"
    assert _compare(np.float64(1.0), np.float64(1.0 + 1e-9)) is not None, "float64 is held to 1e-12"


def test_same_exception_type_agrees() -> None:
    raised = lambda error: compare.Outcome(error=error)  # noqa: E731
    assert compare.compare(raised(ValueError("a")), raised(ValueError("b")), size=1)[0] is None
    assert "raises TypeError" in compare.compare(raised(ValueError("a")), raised(TypeError("b")), size=1)[0].message
    assert "the original returns; the rewrite raises" in compare.compare(compare.Outcome(value=1), raised(TypeError("b")), size=1)[0].message


# ---- strategies -------------------------------------------------------------------------------------------


def test_named_dimensions_agree_across_arguments() -> None:
    params = (
        ("x", {"kind": "array", "dtype": "float32", "shape": ["*batch", "n", "d"]}),
        ("w", {"kind": "array", "dtype": "float32", "shape": ["d", "_"], "numpy": True}),
        ("y", {"kind": "array", "dtype": "int32", "shape": ["*batch", "n"]}),
        ("z", {"kind": "array", "dtype": "float32", "shape": None}),
        ("u", {"kind": "array", "dtype": "float32", "shape": None}),
    )
    strategy = strategies.from_specs(params, 5, magnitude=10.0, nan=False, evaluate=eval)

    @settings(max_examples=40, database=None, deadline=None)
    @given(strategy)
    def check(call: strategies.Call) -> None:
        x, w, y, z, u = call.args
        assert isinstance(x, strategies.Drawn) and isinstance(w, np.ndarray)
        assert x.array.shape[-1] == w.shape[0] and x.array.shape[:-1] == y.array.shape
        assert z.array.shape == u.array.shape, "shapeless arrays share a shape"
        special = strategies.special_floats(np.float32, 10.0)
        assert np.all((np.abs(x.array) <= 10.0) | np.isin(x.array, special)) and np.all(np.isfinite(x.array))
        assert not np.any((x.array != 0) & (np.abs(x.array) < np.finfo(np.float32).tiny)), "no subnormals"

    check()


def test_values_like_an_example() -> None:
    import jax
    import jax.numpy as jnp

    example = ({"w": jnp.arange(3.0), "steps": 5, "flag": True, "name": "relu"}, jax.random.key(1))
    strategy = strategies.like(example)

    @settings(max_examples=30, database=None, deadline=None)
    @given(strategy)
    def check(value) -> None:
        tree, key = value
        assert tree["w"].array.shape == (3,) and tree["w"].array.dtype == np.float32
        special = strategies.special_floats(np.float32, 4.0)
        assert np.all((np.abs(tree["w"].array) <= 4.0) | np.isin(tree["w"].array, special)), "within twice the example's magnitude"
        assert tree["steps"] in (-1, 0, 1, 5) and tree["name"] == "relu" and isinstance(tree["flag"], bool)
        assert isinstance(key, strategies.DrawnKey)

    check()


# ---- the runner -------------------------------------------------------------------------------------------


def _target(tmp_path: Path, name: str, before: str, after: str, source: Source) -> Target:
    path = tmp_path / f"{name}.py"
    path.write_text(before)
    return Target(id=f"{path}::{name}", name=name, before=Module(str(path), before), after=Module(str(path), after), sources=(source,))


def test_a_function_past_its_timeout_is_stopped_and_the_next_still_runs(tmp_path: Path) -> None:
    slow = "import time\n\ndef slow(x):\n    time.sleep(600)\n    return x\n"
    dies = "import os\n\ndef dies(x):\n    os._exit(3)\n"
    fine = "def fine(x):\n    print('user output never reaches the report channel')\n    return x * 2\n"
    source = Source(kind="examples", origin="test", calls=({"args": ["1.0"], "kwargs": {}},))
    targets = [
        _target(tmp_path, "slow", slow, slow, source),
        _target(tmp_path, "dies", dies, dies, source),
        _target(tmp_path, "fine", fine, fine.replace("x * 2", "x + x"), source),
    ]
    reports = list(runner.run(targets, Options(max_examples=5, timeout=2.0)))
    assert [r.name for r in reports] == ["slow", "dies", "fine"]
    assert reports[0].status == UNVERIFIED and "timed out after 2 s" in reports[0].reason
    assert "it was running the input x: 0.0" in reports[0].reason
    assert reports[1].status == UNVERIFIED and "worker died (exit code 3)" in reports[1].reason
    assert reports[2].status == VERIFIED


def test_the_rewrite_is_not_run_where_the_original_ran_past_its_deadline(tmp_path: Path) -> None:
    """Halving until below 1 never ends on inf: the Python loop is stopped at the deadline, and its rewrite, a
    lax.while_loop inside XLA, could not be: it is not run there, and the inputs that end are compared."""
    before = "def halvings(x):\n    while x > 1.0:\n        x = x / 2.0\n    return x\n"
    after = "import jax\n\ndef halvings(x):\n    return jax.lax.while_loop(lambda v: v > 1.0, lambda v: v / 2.0, x)\n"
    source = Source(kind="examples", origin="test", calls=({"args": ["3.0"], "kwargs": {}},))
    (report,) = runner.run([_target(tmp_path, "halvings", before, after, source)], Options(max_examples=30, timeout=30.0, deadline=0.5, grad=False))
    assert report.status == VERIFIED, report
    assert any("ran for more than 0.5 s" in note or "DeadlineExceeded" in note for note in report.devices[0].notes), report.devices[0].notes


def test_check_and_apply_never_import_user_code(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from jaxfix.cli import app

    marker = tmp_path / "imported"
    (tmp_path / "m.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nimport jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
    )
    for command in (["check", str(tmp_path)], ["apply", "--diff", str(tmp_path)], ["apply", str(tmp_path)]):
        CliRunner().invoke(app, command)
        assert not marker.exists(), command


def test_report_status_from_devices() -> None:
    from jaxfix.verify.targets import DeviceReport

    assert Report("t", "f").status == UNVERIFIED
    assert Report("t", "f", through=["g"]).status == VERIFIED
    both = [DeviceReport("cpu", status=VERIFIED), DeviceReport("gpu", status=DIFFERS)]
    assert Report("t", "f", devices=both).status == DIFFERS


def test_inputs_the_original_rejects_are_not_compared(tmp_path: Path) -> None:
    """An input on which the original raises (here: a negative count) or does not terminate within the deadline
    (a Python while loop) is outside what it accepts: the rewrite may return there, and is not run at all
    after a non-terminating original (a lax.while_loop cannot be interrupted)."""
    raises = "def last(xs, n: int):\n    out = [x * 2.0 for x in xs[: max(n, 0)]]\n    return out[-1]\n"
    extends = "import jax.numpy as jnp\n\ndef last(xs, n: int):\n    return jnp.where(n > 0, xs[max(n, 1) - 1] * 2.0, 0.0)\n"
    loops = "def steps(n: int):\n    count = 0\n    while n != 0:\n        n -= 1\n        count += 1\n    return count\n"
    while_loop = (
        "import jax\n\ndef steps(n: int):\n"
        "    return jax.lax.while_loop(lambda c: c[0] != 0, lambda c: (c[0] - 1, c[1] + 1), (n, 0))[1]\n"
    )
    count = Source(kind="specs", origin="test", params=(("n", {"kind": "int", "min": -2, "max": 3}),), positional=1)
    xs_n = Source(kind="examples", origin="test", calls=({"args": ["jnp.arange(4.0)", "3"], "kwargs": {}},))
    targets = [_target(tmp_path, "last", raises, extends, xs_n), _target(tmp_path, "steps", loops, while_loop, count)]
    last, steps = runner.run(targets, Options(max_examples=12, deadline=0.25))
    assert last.status == VERIFIED, last
    assert any("the original raised (IndexError) on" in note for note in last.devices[0].notes)
    assert steps.status == VERIFIED, steps
    assert any("the original raised (DeadlineExceeded) on" in note for note in steps.devices[0].notes)


def test_the_verification_worker_caches_compiles_in_its_scratch_folder(monkeypatch, tmp_path: Path) -> None:
    """Every compile of a run goes to JAX's persistent cache in the worker's scratch folder (an original that
    builds a new jit per call compiles the same program once per example); a cache the user set stays theirs,
    and `jaxfix bench`, which measures compiles, has none."""
    from jaxfix.bench.run import WORKER as BENCH

    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    monkeypatch.delenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", raising=False)
    env = runner.worker_env(str(tmp_path), runner.VERIFY.compile_cache)
    assert env["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "jax-compilation-cache")
    assert env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    assert env["HYPOTHESIS_STORAGE_DIRECTORY"] == str(tmp_path)
    assert "JAX_COMPILATION_CACHE_DIR" not in runner.worker_env(str(tmp_path), BENCH.compile_cache)
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/users/own/cache")
    env = runner.worker_env(str(tmp_path), runner.VERIFY.compile_cache)
    assert env["JAX_COMPILATION_CACHE_DIR"] == "/users/own/cache" and "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in env


def test_within_noise_excuses_no_more_than_the_originals_own_rounding() -> None:
    """A gap between original and rewrite is rounding only where the original compiled as one program is at
    least half as far off; NaN and other leaves must match exactly."""
    wanted, other = [np.float32([1.0, 2.0])], [np.float32([1.0, 2.0 + 4e-6])]
    assert compare.within_noise(wanted, [np.float32([1.0, 2.0 + 8e-6])], other)
    assert not compare.within_noise(wanted, [np.float32([1.0, 2.0 + 1e-5])], other)
    assert not compare.within_noise(wanted, [np.float32([1.0 + 1e-6, 2.0])], [np.float32([1.0, 2.0])])  # no noise
    assert not compare.within_noise([np.float32([np.nan])], [np.float32([0.0])], [np.float32([np.nan])])
    assert not compare.within_noise(wanted, [np.float32([1.0, 2.0]), np.int32(1)], other)  # structure
    assert not compare.within_noise([np.int32(1)], [np.int32(2)], [np.int32(2)])
