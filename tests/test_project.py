"""The project index (jaxfix/analysis/project.py): names resolved across modules, traced-ness and static-ness
solved over the project and the libraries' conventions, and what a module's findings then depend on."""

from __future__ import annotations

import ast
import marshal
import os
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from jaxfix import corpus, engine, parsed
from jaxfix.analysis.ast_syntax import ast_qualified_defs
from jaxfix.analysis.project import _SEEDING_NAMES, Project
from jaxfix.analysis.traced import qualified_defs
from jaxfix.cache import ResultCache
from jaxfix.engine import Settings, process_files
from jaxfix.project_io import _make_summary, _sent_summary, build_project, module_names, project_root
from tests.helpers import codemod_for_module

LOOP = codemod_for_module("loop_to_fori")
ALL_LOOPS = Settings(("JF101",), unsafe_fixes=True)


def _project(tmp_path: Path, files: dict[str, str], marker: bool = True) -> Path:
    if marker:
        tmp_path.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _facts(root: Path, name: str):
    return build_project([root]).facts_for(str(root / name))


MODEL = """
    import jax.numpy as jnp

    def relax(x, steps):
        for _ in range(steps):
            x = 0.5 * (x + jnp.cos(x))
        return x
"""


def test_root_is_the_nearest_marker_above_the_paths(tmp_path) -> None:
    _project(tmp_path, {"pkg/a.py": "x = 1\n"})
    assert project_root([tmp_path / "pkg" / "a.py"]) == tmp_path.resolve()


def test_without_a_marker_the_paths_are_the_project(tmp_path) -> None:
    _project(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 2\n"}, marker=False)
    project = build_project([tmp_path / "a.py"])
    assert list(project.path_module) == [str((tmp_path / "a.py").resolve())]


def test_a_jit_in_another_module_traces_the_function(tmp_path) -> None:
    root = _project(tmp_path, {
        "model.py": MODEL,
        "train.py": "import jax\nfrom model import relax\nfast = jax.jit(relax, static_argnums=1)\n",
    })
    transforms, kinds = _facts(root, "model.py").traced["relax"]
    assert transforms == ("jax.jit",) and kinds == {"x": 2, "steps": 0}


def test_nothing_tracing_gives_no_facts(tmp_path) -> None:
    root = _project(tmp_path, {"model.py": MODEL, "train.py": "from model import relax\ny = relax(1.0, 3)\n"})
    assert not _facts(root, "model.py")


def test_what_the_module_sees_itself_is_left_to_it(tmp_path) -> None:
    root = _project(tmp_path, {"model.py": MODEL + "\nimport jax\nfast = jax.jit(relax)\n"})
    assert "relax" not in _facts(root, "model.py").traced


@pytest.mark.parametrize("train", [
    "import jax\nfrom functools import partial\nfrom model import relax\nf = partial(jax.jit, static_argnums=1)(relax)\n",
    "import jax\nimport model\nf = jax.jit(model.relax, static_argnames='steps')\n",
    "import jax\nfrom pkg import relax\nf = jax.jit(relax, static_argnums=(1,))\n",  # re-exported by pkg/__init__.py
    "import jax\nfrom functools import partial\nimport model\n\n@partial(jax.jit, static_argnums=1)\n"
    "def step(x, n):\n    return model.relax(x, n)\n",  # through a call from a jitted function
])
def test_ways_to_trace_across_modules(tmp_path, train) -> None:
    root = _project(tmp_path, {"model.py": MODEL, "pkg/__init__.py": "from .core import relax\n",
                               "pkg/core.py": "from model import relax\n", "train.py": train})
    assert _facts(root, "model.py").traced["relax"][1] == {"x": 2, "steps": 0}


def test_bound_methods_of_instances_and_base_classes(tmp_path) -> None:
    root = _project(tmp_path, {
        "envs.py": """
            class Base:
                def helper(self, s):
                    return s * 2

            class Env(Base):
                def step(self, state, action):
                    return self.helper(state) + action
        """,
        "trainer.py": "import jax\nfrom envs import Env\n\ndef main():\n    env = Env()\n    return jax.jit(env.step)\n",
    })
    traced = _facts(root, "envs.py").traced
    assert traced["Env.step"][1] == {"self": 1, "state": 2, "action": 2}
    assert "Base.helper" in traced  # `self.helper` from a traced method, found through the project base class


def test_a_factory_returns_what_the_trainer_jits(tmp_path) -> None:
    root = _project(tmp_path, {
        "steps.py": "def make_step(lr):\n    def step(p, g):\n        return p - lr * g\n    return step\n",
        "train.py": "import jax\nfrom steps import make_step\nstep = jax.jit(make_step(0.1))\n",
    })
    assert "make_step.<locals>.step" in _facts(root, "steps.py").traced


# The transformations and lax bodies the project index lacked until it read the module analysis' own tables
# (jaxfix/facts/knowledge/): each traces `f` of ops.py from train.py, as in the real projects they come from
# (haiku's `jax.eval_shape(init_fn, ...)`, flax's `jax.vjp(wrapper, ...)`, numpyro's `jax.custom_jvp(cdf)`).
@pytest.mark.parametrize("train,transform", [
    ("out = jax.custom_jvp(f)", "jax.custom_jvp"),
    ("out = jax.custom_vjp(f)", "jax.custom_vjp"),
    ("out = jax.eval_shape(f, jnp.ones(3), jnp.ones(3))", "jax.eval_shape"),
    ("out = jax.make_jaxpr(f)(jnp.ones(3), jnp.ones(3))", "jax.make_jaxpr"),
    ("out = jax.jvp(f, (jnp.ones(3), jnp.ones(3)), (jnp.ones(3), jnp.ones(3)))", "jax.jvp"),
    ("out, pullback = jax.vjp(f, jnp.ones(3), jnp.ones(3))", "jax.vjp"),
    ("out, tangent = jax.linearize(f, jnp.ones(3), jnp.ones(3))", "jax.linearize"),
    ("out = lax.associative_scan(f, jnp.arange(4.0))", "jax.lax.associative_scan"),
    ("out = lax.custom_root(f, jnp.ones(3), f, f)", "jax.lax.custom_root"),
    ("out = lax.custom_linear_solve(f, jnp.ones(3), f, f)", "jax.lax.custom_linear_solve"),
])
def test_every_transformation_the_module_analysis_knows_traces_across_modules(tmp_path, train, transform) -> None:
    root = _project(tmp_path, {
        "ops.py": "import jax.numpy as jnp\n\ndef f(x, y):\n    return jnp.tanh(x) * y\n",
        "train.py": f"import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\nfrom ops import f\n\n{train}\n",
    })
    transforms, kinds = _facts(root, "ops.py").traced["f"]
    assert transform in transforms and kinds == {"x": 2, "y": 2}


def test_a_function_another_module_stages_is_judged_as_traced(tmp_path) -> None:
    """`jax.make_jaxpr(residual)` and `jax.eval_shape(shapes_of, ...)` in train.py trace model.py's functions: a
    Python `if` on a traced value there fails (JF201) and `print` shows tracers (JF601), as it would were the
    call in model.py."""
    root = _project(tmp_path, {
        "model.py": """
            import jax.numpy as jnp

            def shapes_of(params, x):
                print("params", params)
                return jnp.tanh(x @ params)

            def residual(x, y):
                if x.sum() > 0:
                    return x - y
                return y - x
        """,
        "train.py": """
            import jax
            import jax.numpy as jnp

            from model import residual, shapes_of

            out = jax.eval_shape(shapes_of, jnp.ones((3, 3)), jnp.ones(3))
            jaxpr = jax.make_jaxpr(residual)(jnp.ones(3), jnp.ones(3))
        """,
    })
    settings = Settings(("JF201", "JF601"), unsafe_fixes=True)
    result = next(iter(process_files([str(root / "model.py")], settings, fix=False, write=False, jobs=1)))
    assert sorted((d.code, d.start.line) for d in result.diagnostics) == [("JF201", 9), ("JF601", 5)]


@pytest.mark.parametrize("source,qualname", [
    ("import flax.linen as nn\nclass M(nn.Module):\n    def __call__(self, x):\n        return x\n", "M.__call__"),
    ("from flax import nnx\nclass M(nnx.Module):\n    def __call__(self, x):\n        return x\n", "M.__call__"),
    ("import haiku as hk\ndef f(x):\n    return x\nnet = hk.transform(f)\n", "f"),
    ("import equinox as eqx\nclass M(eqx.Module):\n    def __call__(self, x):\n        return x\n", "M.__call__"),
    ("import optax\ndef t():\n    def init(p):\n        return ()\n    def update(u, s, p=None):\n        return u, s\n"
     "    return optax.GradientTransformation(init, update)\n", "t.<locals>.update"),
    ("from gymnax.environments import environment\nclass E(environment.Environment[S, P]):\n"
     "    def step_env(self, key, state, action, params):\n        return state\n", "E.step_env"),
])
def test_library_conventions(tmp_path, source, qualname) -> None:
    root = _project(tmp_path, {"lib.py": source})
    assert qualname in _facts(root, "lib.py").traced


def test_flags_of_conventionally_traced_methods_stay_python_values(tmp_path) -> None:
    root = _project(tmp_path, {"m.py": "import flax.linen as nn\nclass M(nn.Module):\n"
                                       "    def __call__(self, x, train: bool, deterministic=True):\n        return x\n"})
    assert _facts(root, "m.py").traced["M.__call__"][1] == {"self": 1, "x": 2, "train": 1, "deterministic": 1}


def test_static_facts(tmp_path) -> None:
    root = _project(tmp_path, {
        "m.py": """
            import flax.linen as nn
            import jax
            from flax import struct

            class MLP(nn.Module):
                features: int
                num_layers: int = 2

                def __call__(self, x):
                    return x

            class Config:
                depth: int = 3

            jax.tree_util.register_static(Config)

            @struct.dataclass
            class State:
                step: int
                apply_fn: object = struct.field(pytree_node=False)

            @jax.jit
            def f(config: Config, state: State, x):
                return x
        """,
    })
    static = _facts(root, "m.py").static_attrs
    assert static["MLP.__call__"] == {"self": ("features", "num_layers")}
    assert static["f"] == {"config": ("*",), "state": ("apply_fn",)}


def test_a_static_config_makes_a_static_trip_count(tmp_path) -> None:
    root = _project(tmp_path, {
        "m.py": """
            import jax
            import jax.numpy as jnp

            class Config:
                n: int = 3

            jax.tree_util.register_static(Config)

            @jax.jit
            def f(config: Config, x):
                for i in range(config.n):
                    if i > 1:
                        break
                    x = jnp.sin(x)
                return x
        """,
    })
    text = (root / "m.py").read_text()
    assert engine.analyse(text, [LOOP])[0]  # alone: `config` is a traced argument, range() of it fails
    assert not engine.analyse(text, [LOOP], project=_facts(root, "m.py"))[0]


def test_a_config_dict_is_never_a_traced_value(tmp_path) -> None:
    """An `ml_collections.ConfigDict` cannot be a traced argument (JAX rejects it): a parameter annotated with one
    is a Python value wherever its function is traced, by a jit or by a library's convention; an unannotated
    parameter beside it stays traced."""
    root = _project(tmp_path, {
        "m.py": """
            import haiku as hk
            import jax
            import ml_collections
            from ml_collections import config_dict

            class Tower(hk.Module):
                def __call__(self, x, settings: ml_collections.ConfigDict, other):
                    return x

            def f(x, frozen: config_dict.FrozenConfigDict, other):
                return x
        """,
        "train.py": "import jax\nimport m\n\nstep = jax.jit(m.f, static_argnums=1)\nloose = jax.jit(m.f)\n",
    })
    traced = _facts(root, "m.py").traced
    assert traced["Tower.__call__"][1] == {"self": 1, "x": 2, "settings": 0, "other": 2}
    assert traced["f"][1] == {"x": 2, "frozen": 0, "other": 2}


_FACTORY = """
    import ml_collections

    def get_config():
        config = ml_collections.ConfigDict()
        config.width = 16
        config.num_layers = 12
        return config
"""


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        # a ConfigDict from a factory, its fields then set: the name still holds the ConfigDict
        ("config = configs.get_config()\n    config.num_layers = n\n    config['width'] = 8", 0),
        ("config = configs.get_config()\n    config.num_layers += n", 0),
        ("config = ml_collections.ConfigDict({'num_layers': n})", 0),
        # rebound to something else, or a dict: nothing tells
        ("config = configs.get_config()\n    config = override(config, n)", 1),
        ("config = {'num_layers': n}", 1),
    ],
)
def test_a_config_dict_from_a_factory_stays_a_config_dict(tmp_path, make: str, kind: int) -> None:
    """`config = get_config()` then `config.num_layers = n` (ml_collections style, unannotated): a store into an
    attribute or item changes the object, it does not rebind the name, which still holds a ConfigDict, a Python
    value wherever a jitted function closes over it and passes it on."""
    root = _project(tmp_path, {
        "configs.py": _FACTORY,
        "model.py": "def forward(x, config):\n    return x\n",
        "train.py": "import jax\nimport ml_collections\nimport configs\nimport model\n\n"
                    f"def make_step(n):\n    {make}\n\n"
                    "    @jax.jit\n    def step(x):\n        return model.forward(x, config)\n\n    return step\n",
    })
    assert _facts(root, "model.py").traced["forward"][1] == {"x": 2, "config": kind}


def test_what_a_partial_binds_is_constant_under_a_convention(tmp_path) -> None:
    """`hk.transform(partial(forward, model_config=config))`: the bound arguments are constants of the transformed
    function; the others follow the convention (traced)."""
    root = _project(tmp_path, {
        "model.py": "def forward(tokens, scale, model_config):\n    return tokens\n",
        "train.py": "import functools\nimport haiku as hk\nimport model\n\n"
                    "def make(config):\n"
                    "    return hk.transform(functools.partial(model.forward, model_config=config))\n",
    })
    assert _facts(root, "model.py").traced["forward"][1] == {"tokens": 2, "scale": 2, "model_config": 0}


def test_qualified_names_agree_between_ast_and_libcst() -> None:
    source = textwrap.dedent("""
        def f():
            def g():
                def h():
                    pass
            if True:
                def k():
                    pass
            class C:
                def m(self):
                    pass

        class A:
            def m(self):
                def inner():
                    pass

        try:
            def t():
                pass
        except ImportError:
            def t():
                pass
    """)
    expected = {"f", "f.<locals>.g", "f.<locals>.g.<locals>.h", "f.<locals>.k", "A", "A.m", "A.m.<locals>.inner", "t"}
    expected.discard("A")
    assert set(ast_qualified_defs(ast.parse(source))) == expected
    assert set(qualified_defs(cst.parse_module(source))) == expected


def test_editing_another_module_rechecks_exactly_when_its_facts_change(tmp_path) -> None:
    root = _project(tmp_path, {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n"})
    model = str(root / "model.py")
    cache = ResultCache.for_settings(ALL_LOOPS, tmp_path / "cache")

    def check() -> list:
        return [d.code for d in next(iter(process_files([model], ALL_LOOPS, fix=False, write=False, jobs=1, cache=cache))).diagnostics]

    assert check() == ["JF101"]
    (root / "train.py").write_text("import jax\nfrom model import relax\nf = jax.jit(relax)\n# a comment\n")
    key_before = engine._key(cache, model, (root / "model.py").read_bytes(), build_project([model]).facts_for(model))
    assert check() == ["JF101"]  # same facts: the same cache entry answers
    (root / "train.py").write_text("from model import relax\n")
    key_after = engine._key(cache, model, (root / "model.py").read_bytes(), build_project([model]).facts_for(model))
    assert key_after != key_before
    assert check() == []  # nothing jits relax any more: model.py is checked again, and is quiet


def test_stdin_with_a_file_name_gets_the_project_facts(tmp_path) -> None:
    from typer.testing import CliRunner

    from jaxfix.cli import app

    root = _project(tmp_path, {"model.py": "", "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n"})
    old = Path.cwd()
    os.chdir(root)
    try:
        arguments = ["check", "--select", "JF101", "--stdin-filename", "model.py", "-"]
        named = CliRunner().invoke(app, arguments, input=textwrap.dedent(MODEL))
        unnamed = CliRunner().invoke(app, ["check", "--select", "JF101", "-"], input=textwrap.dedent(MODEL))
    finally:
        os.chdir(old)
    assert "JF101" in named.output, named.output
    assert "JF101" not in unnamed.output, unnamed.output


def _notebook(cells: list[str]) -> str:
    import json

    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    })


def test_a_notebook_that_jits_a_project_function_traces_it(tmp_path) -> None:
    root = _project(tmp_path, {"model.py": MODEL})
    (root / "explore.ipynb").write_text(_notebook(["import jax\nfrom model import relax", "%time y = 1", "f = jax.jit(relax, static_argnums=1)"]))
    transforms, kinds = _facts(root, "model.py").traced["relax"]
    assert transforms == ("jax.jit",) and kinds == {"x": 2, "steps": 0}


def test_a_notebook_reads_the_project_facts(tmp_path) -> None:
    """A config registered static in config.py makes `range(cfg.layers)` in a notebook's jitted function a static
    trip count (rewritable), not a traced one (which fails)."""
    from tests.helpers import invoke_in

    root = _project(tmp_path, {
        "config.py": """
            import dataclasses
            import jax

            @dataclasses.dataclass(frozen=True)
            class Config:
                layers: int = 12

            jax.tree_util.register_static(Config)
        """,
    })
    cell = (
        "import jax\nimport jax.numpy as jnp\nfrom config import Config\n\n@jax.jit\ndef forward(cfg: Config, x):\n"
        "    for _ in range(cfg.layers):\n        x = jnp.tanh(x) * 0.9\n    return x"
    )
    (root / "run.ipynb").write_text(_notebook([cell]))
    result = invoke_in(root, "check", "--no-cache", "--select", "JF101", "run.ipynb")
    assert "run.ipynb:cell 1:7:14: JF101 [*unsafe] this Python loop unrolls `cfg.layers` times" in result.output, result.output
    piped = invoke_in(root, "check", "--select", "JF101", "--stdin-filename", "run.ipynb", "-", input=(root / "run.ipynb").read_text())
    assert "JF101 [*unsafe] this Python loop unrolls `cfg.layers` times" in piped.output, piped.output


def _project_case_files():
    for case in corpus.project_cases():
        codemod = codemod_for_module(case.codemod)
        for folder in dict.fromkeys([case.before, case.after]):
            project = build_project([folder], root=folder)
            for path in sorted(folder.glob("*.py")):
                yield pytest.param(codemod, path, project.facts_for(str(path)), id=f"{case.id}/{folder.name}/{path.name}")


@pytest.mark.parametrize("codemod,path,facts", list(_project_case_files()))
def test_screens_pass_project_cases_where_they_match(codemod, path, facts) -> None:
    """The screens know the project's facts: where the codemod, unscreened, reports in a module of a project
    case, the screens let the module through."""
    from libcst.metadata import MetadataWrapper

    text = path.read_text(encoding="utf-8")
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    found, errors = engine._run_codemods(wrapper, [codemod], None, facts)
    assert not errors
    if found:
        assert engine.screened(text, [codemod], project=facts) == [codemod]


def test_the_editor_reads_the_project_and_its_open_buffers(tmp_path) -> None:
    """The language server's documents: a buffer is judged with its project's facts, and an edit to another open
    buffer (saved or not) changes them."""
    from jaxfix.server.documents import Documents

    root = _project(tmp_path, {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n"})
    (root / "pyproject.toml").write_text("[tool.jaxfix]\nselect = ['JF101']\n")
    documents = Documents()
    model_text = (root / "model.py").read_text()
    model, train = root / "model.py", root / "train.py"
    assert [d.code for d in documents.analysis("file:///model.py", model, model_text).diagnostics] == ["JF101"]
    documents.analysis("file:///train.py", train, "from model import relax\n")  # jit removed, not saved
    assert documents.analysis("file:///model.py", model, model_text).diagnostics == []
    documents.forget("file:///train.py")  # closed unsaved: the file on disk counts again
    assert [d.code for d in documents.analysis("file:///model.py", model, model_text).diagnostics] == ["JF101"]


@pytest.mark.parametrize("decorator,imports", [
    ("pjit", "from jax.experimental.pjit import pjit"),
    ("nnx.jit", "from flax import nnx"),
    ("eqx.filter_jit", "import equinox as eqx"),
])
def test_pjit_and_the_libraries_jits_dispatch_asynchronously(decorator, imports) -> None:
    source = (f"import time\n{imports}\n\n@{decorator}\ndef f(x):\n    return x * 2\n\ndef bench(x):\n"
              "    t0 = time.perf_counter()\n    out = f(x)\n    return time.perf_counter() - t0, out\n")
    assert [d.code for d in engine.analyse(source, [codemod_for_module("timing_without_block")])[0]] == ["JF702"]


def test_files_of_one_name_keep_their_own_facts(tmp_path) -> None:
    root = _project(tmp_path, {
        "a/model.py": MODEL,
        "b/model.py": "def relax(x, steps):\n    return x\n",
        "b/train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n",
    })
    project = build_project([root])
    names = {Path(p).relative_to(root.resolve()).as_posix(): m for p, m in project.path_module.items()}
    assert len(set(names.values())) == 3
    assert not project.facts_for(str(root / "b" / "model.py")) or not project.facts_for(str(root / "a" / "model.py"))


def test_arguments_a_partial_binds_by_keyword_are_constants(tmp_path) -> None:
    """flax's wmt example: `jax.pmap(functools.partial(predict_step, beam_size=config.beam_size))` makes
    `beam_size` a Python int, in predict_step and in the functions of other modules it passes it to."""
    root = _project(tmp_path, {
        "decode.py": "def search(x, beam_size=4):\n    return x\n",
        "train.py": "import functools\nimport jax\nimport decode\n\n"
                    "def predict(x, beam_size=4):\n    return decode.search(x, beam_size=beam_size)\n\n"
                    "p = jax.pmap(functools.partial(predict, beam_size=8))\n",
    })
    assert _facts(root, "decode.py").traced["search"][1] == {"x": 2, "beam_size": 0}
    local = "import functools\nimport jax\nimport jax.numpy as jnp\n\ndef f(x, n):\n    return jnp.zeros((n,)) + x\n\n" \
            "g = jax.jit(functools.partial(f, n=3))\n"
    assert engine.analyse(local, [codemod_for_module("traced_shape")])[0] == []


def test_a_warm_run_reads_the_facts_back_and_an_edit_solves_again(tmp_path) -> None:
    root = _project(tmp_path, {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n"})
    folder = tmp_path / "cache"
    cold = build_project([root], folder)
    warm = build_project([root], folder)
    model = str(root / "model.py")
    assert warm.preset is not None and not warm.modules  # nothing summarised or solved again
    assert warm.facts_for(model) == cold.facts_for(model) and warm.facts_for(model).digest() == cold.facts_for(model).digest()
    (root / "train.py").write_text("from model import relax\n")
    edited = build_project([root], folder)
    assert edited.modules and not edited.facts_for(model)


def test_summaries_are_kept_in_one_pack_per_project_with_its_files_as_they_are(tmp_path, monkeypatch) -> None:
    """An edit that changes what the project solves reads the other files' summaries from the pack, makes only
    the edited file's, and the pack keeps the summaries of the files as they are now (the earlier one goes); a
    pack that cannot be read is no pack."""
    import marshal

    import jaxfix.project_io as module

    root = _project(tmp_path, {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n"})
    folder = tmp_path / "cache"
    build_project([root], folder)
    [pack] = folder.rglob("summaries-*.pack")
    before = marshal.loads(pack.read_bytes())
    assert len(before) == 2 and not list(folder.rglob("*.summary"))
    made: list[str] = []
    real = module._make_summary
    monkeypatch.setattr(module, "_make_summary", lambda job, *a, **k: made.append(job[1]) or real(job, *a, **k))
    (root / "train.py").write_text("from model import relax\n")
    edited = build_project([root], folder)
    assert made == ["train"] and not edited.facts_for(str(root / "model.py"))
    after = marshal.loads(pack.read_bytes())
    assert len(after) == 2 and len(set(after) - set(before)) == 1, "the edited file's summary replaced its earlier one"
    pack.write_bytes(b"not marshal")
    made.clear()
    (root / "train.py").write_text("import jax\nfrom model import relax\nf = jax.jit(relax)\n")
    assert build_project([root], folder).facts_for(str(root / "model.py")).traced and sorted(made) == ["model", "train"]


def _analysed(monkeypatch, paths: list[str], cache: ResultCache) -> tuple[dict[str, list[str]], list[str]]:
    """Each path's codes from `process_files` with the cache, and the paths analysed anew (not answered by it)."""
    analysed: list[str] = []
    real = engine.process_text

    def counting(path, *args, **kwargs):
        analysed.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(engine, "process_text", counting)
    results = process_files(paths, ALL_LOOPS, fix=False, write=False, jobs=1, cache=cache)
    return {r.path: [d.code for d in r.diagnostics] for r in results}, analysed


def test_an_edit_rechecks_the_modules_whose_facts_it_changes_and_only_them(tmp_path, monkeypatch) -> None:
    """The cache after an edit to train.py: model.py, whose facts train.py's jit makes, is analysed again exactly
    when those facts change; an edit that leaves train.py's summary as it was (a comment, lines moved) reuses the
    stored facts without solving the project again."""
    train_text = "import jax\nfrom model import relax\nf = jax.jit(relax)\n"
    root = _project(tmp_path, {"model.py": MODEL, "train.py": train_text})
    model, train = str(root / "model.py"), str(root / "train.py")
    cache = ResultCache.for_settings(ALL_LOOPS, tmp_path / "cache")
    found, analysed = _analysed(monkeypatch, [model, train], cache)
    assert found[model] == ["JF101"] and sorted(analysed) == sorted([model, train])

    solved: list[int] = []
    real_solve = Project._solve

    def counting_solve(self):
        solved.append(1)
        return real_solve(self)

    monkeypatch.setattr(Project, "_solve", counting_solve)
    (root / "train.py").write_text("# the training script\n\n" + train_text + "# a comment\n")  # same summary, lines moved
    found, analysed = _analysed(monkeypatch, [model, train], cache)
    assert found[model] == ["JF101"] and analysed == [train] and not solved  # the stored facts answer

    (root / "train.py").write_text(train_text + "def unrelated():\n    return 1\n")  # a new summary, the same facts
    found, analysed = _analysed(monkeypatch, [model, train], cache)
    assert found[model] == ["JF101"] and analysed == [train] and solved  # solved again; model.py's entry answers

    (root / "train.py").write_text("from model import relax\n")  # nothing jits relax any more
    found, analysed = _analysed(monkeypatch, [model, train], cache)
    assert found[model] == [] and sorted(analysed) == sorted([model, train])

    (root / "train.py").write_text(train_text)  # jitted again: model.py's facts are back, and so is its finding
    found, analysed = _analysed(monkeypatch, [model, train], cache)
    assert found[model] == ["JF101"] and model in analysed


def test_two_projects_checked_in_one_run_are_indexed_apart(tmp_path) -> None:
    """`jaxfix check a/ b/`: a's trainer jits a's `model.relax`, never b's module of the same name."""
    a = _project(tmp_path / "a", {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax, static_argnums=1)\n"})
    b = _project(tmp_path / "b", {"model.py": MODEL})
    results = process_files([str(a / "model.py"), str(b / "model.py")], ALL_LOOPS, fix=False, write=False, jobs=1)
    codes = {Path(r.path).parent.name: [d.code for d in r.diagnostics] for r in results}
    assert codes == {"a": ["JF101"], "b": []}


def test_every_project_is_summarised_before_the_first_is_solved(tmp_path, monkeypatch) -> None:
    """A run over several projects hands every project's summaries to the workers first, so that they work while
    this process solves one project after another; each project's facts stay its own, in the order of the paths."""
    from jaxfix.engine import _facts_by_project

    a = _project(tmp_path / "a", {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax, static_argnums=1)\n"})
    b = _project(tmp_path / "b", {"model.py": MODEL})
    events: list[str] = []
    real_solve = Project._solve

    def logged_solve(self):
        events.append("solve")
        return real_solve(self)

    def logged_map(function, items, keys=None):
        events.append("summarise")
        return map(function, items)

    monkeypatch.setattr(Project, "_solve", logged_solve)
    paths = [str(b / "model.py"), str(a / "model.py"), str(a / "train.py")]
    groups = list(_facts_by_project(paths, None, None, logged_map))
    assert events[:2] == ["summarise", "summarise"] and events.count("solve") == 2
    assert [indices for indices, _, _ in groups] == [[0], [1, 2]]
    assert [root for _, _, root in groups] == [b.resolve(), a.resolve()], "each with its root (its cache pack's name)"
    facts = {path: found for _, group, _ in groups for path, found in group.items()}
    assert facts[paths[1]].traced and not facts[paths[0]].traced


def test_projects_sharing_a_cache_keep_their_own_stored_facts(tmp_path) -> None:
    a = _project(tmp_path / "a", {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax)\n"})
    b = _project(tmp_path / "b", {"model.py": MODEL, "train.py": "import jax\nfrom model import relax\ng = jax.jit(relax)\n"})
    folder = tmp_path / "cache"
    build_project([a], folder)
    build_project([b], folder)
    warm_a, warm_b = build_project([a], folder), build_project([b], folder)
    assert warm_a.preset is not None and not warm_a.modules  # a's facts were not lost when b's were stored
    assert warm_b.preset is not None and not warm_b.modules


def test_summaries_made_in_worker_processes_give_the_same_facts(tmp_path) -> None:
    """Enough files for the workers to summarise them (workers.Workers): the facts, and so the findings, are those
    of summaries made in this process."""
    files = {f"util{index}.py": "x = 1\n" for index in range(10)}
    root = _project(tmp_path, {**files, "model.py": MODEL, "train.py": "import jax\nfrom model import relax\nf = jax.jit(relax, static_argnums=1)\n"})
    paths = sorted(str(p) for p in root.glob("*.py"))
    serial, parallel = (
        [(r.path, [d.code for d in r.diagnostics]) for r in process_files(paths, ALL_LOOPS, fix=False, write=False, jobs=jobs)]
        for jobs in (1, 2)
    )
    assert parallel == serial and (str(root / "model.py"), ["JF101"]) in parallel


def test_the_calls_passed_over_fast_are_those_that_seed_nothing() -> None:
    """`Project._may_seed` tells from the callee's resolutions what `_transform` and `_qualified_names` would:
    a call it passes over names neither a transformation nor a lax body's or a convention wrapper's callee."""
    repository = Path(__file__).resolve().parent.parent
    seeding = 0
    for folder in ("corpus", "examples"):
        project = build_project([repository / folder], root=repository / folder)
        for module, summary in project.modules.items():
            if summary["module"] != module:
                continue
            scopes = [(None, summary["calls"]), *((qual, info["calls"]) for qual, info in summary["functions"].items())]
            for function, calls in scopes:
                for call in calls:
                    callee = call["f"]
                    if callee is None or "n" not in callee:
                        continue
                    seeds = project._transform(module, function, callee)[0] is not None or bool(
                        project._qualified_names(module, callee) & _SEEDING_NAMES
                    )
                    assert project._may_seed(module, function, callee["n"]) == seeds, (module, function, callee)
                    seeding += seeds
    assert seeding > 50


def test_a_summary_is_marshalled_only_for_another_process() -> None:
    """A summary made in the process that asked for it comes back as it is; from a worker, marshalled: the same."""
    source = Path(__file__).resolve().parent.parent / "jaxfix" / "analysis" / "project.py"
    job = (source.read_bytes(), "jaxfix.analysis.project", False, False)
    try:
        here = _sent_summary(os.getpid(), job)
        there = _sent_summary(os.getpid() + 1, job)  # what a worker, another process, sends
    finally:
        parsed.forget()
    assert isinstance(here, dict) and isinstance(there, bytes)
    assert marshal.loads(there) == here == _make_summary(job)


def test_package_names_remembered_by_folder_are_those_found_anew() -> None:
    repository = Path(__file__).resolve().parent.parent
    packages: dict[Path, list[str]] = {}
    paths = sorted(repository.glob("jaxfix/**/*.py")) + sorted(repository.glob("corpus/**/*.py"))
    for path in paths:
        assert module_names(path, repository, packages) == module_names(path, repository)
    assert len(packages) < len(paths)


_TRANSFORMED = [
    ("jax.jit(step, static_argnums=1)", {"x": 2, "n": 0, "scale": 2}),
    ("jax.jit(step, static_argnames=('n', 'scale'))", {"x": 2, "n": 0, "scale": 0}),
    ("jax.jit(step, static_argnums=k)", {"x": 1, "n": 1, "scale": 1}),  # not a literal: nothing known
    ("jax.grad(step, argnums=(0, 2))", {"x": 2, "n": 1, "scale": 2}),
    ("jax.vmap(step, in_axes=(0, None, None))", {"x": 2, "n": 1, "scale": 1}),
    ("jax.vmap(step, in_axes=(0, axis, 1))", {"x": 2, "n": 1, "scale": 2}),  # `axis` may be None
    ("jax.vmap(step, in_axes=None)", {"x": 1, "n": 1, "scale": 1}),
    ("jax.vmap(step)", {"x": 2, "n": 2, "scale": 2}),
    ("jax.jit(partial(step, scale=2.0))", {"x": 2, "n": 2, "scale": 0}),
    ("eqx.filter_jit(partial(step, 1.0))", {"x": 0, "n": 1, "scale": 1}),  # partial's constants stay static
]


@pytest.mark.parametrize("wrapped,kinds", _TRANSFORMED, ids=[w for w, _ in _TRANSFORMED])
def test_a_transformation_says_the_same_of_its_parameters_in_the_module_and_from_another(tmp_path, wrapped, kinds) -> None:
    """One rule (facts.traced.parameter_kinds) reads a transformation's options for the module's own facts and for
    the project index's, so a function transformed in another module gets the kinds it would get at home."""
    from jaxfix.facts.binder import Binder
    from jaxfix.facts.traced import Traced

    head = "import jax\nimport equinox as eqx\nfrom functools import partial\n"
    step = "def step(x, n, scale):\n    return x * scale\n"
    root = _project(tmp_path, {"model.py": step, "train.py": f"{head}from model import step\nk = 1\naxis = 0\nfast = {wrapped}\n"})
    _, across = _facts(root, "model.py").traced["step"]
    tree = ast.parse(f"{head}{step}k = 1\naxis = 0\nfast = {wrapped}\n")
    at_home = Traced(tree, Binder(tree))
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    assert dict(across) == kinds
    assert {p: int(at_home.seeded_kind(function, p)) for p in kinds} == kinds
