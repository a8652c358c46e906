"""The rules' `check(facts)` on `ast`. JF902 (legacy-prng-key) and JF901 (deprecated-api) answer every module from
`ast` alone: JF902's findings on probes of what `ast` and LibCST see differently (positions after non-ASCII text,
line endings, parentheses, shims, shadowed names) are those its LibCST visitor gave before it moved (the positions
it reported, kept here), and so are the counts of hints of both. JF901's findings and fixes on every embedded
example, every corpus file and these probes were those of its LibCST visitor when it moved (compared then, with
the fixes applied). A module whose findings need no fix is never parsed with LibCST."""

from __future__ import annotations

import pytest

from jaxfix import corpus, engine, registry
from jaxfix.analysis.screen import Screen
from jaxfix.codemod import Codemod, _visitor_names
from jaxfix.diagnostics import Diagnostic
from jaxfix.facts.module import FileFacts

JF901 = registry.by_code("JF901")
JF902 = registry.by_code("JF902")  # the PRNGKey hint: JF901's table, opt-in
FAMILY = (JF901, JF902)


def _answer(text: str, codemod: type[Codemod]) -> list[Diagnostic] | None:
    """The rule's `check` where its text screen passes the module (the engine asks no other); none where not."""
    if not codemod.may_match(text):
        return []
    return codemod.check(FileFacts(text, screen=Screen(text)))


def _check(text: str, codemod: type[Codemod]) -> list[Diagnostic] | None:
    answer = _answer(text, codemod)
    if answer is not None and codemod is JF902:
        assert not any(d.fixable for d in answer), "hints only: no fix to apply"
    return answer


def test_both_rules_answer_on_ast() -> None:
    assert JF901.answers_on_ast() and JF902.answers_on_ast()
    assert not _visitor_names(JF902) and not _visitor_names(JF901), "no LibCST visitor left"


def _cases():
    for kind, examples in (("INVALID", JF901.INVALID), ("VALID", JF901.VALID)):
        for index, example in enumerate(examples):
            yield pytest.param(example.code, id=f"JF901-{kind}-{index}")
    for case in corpus.cases():
        for path in dict.fromkeys([case.before, case.after]):
            yield pytest.param(path.read_text(encoding="utf-8"), id=f"JF901-{case.id}/{path.name}")


@pytest.mark.parametrize("text", list(_cases()))
def test_jf901_answers_every_module_and_plans_every_fix(text) -> None:
    answer = _check(text, JF901)
    assert answer is not None
    assert all(d.plan is not None for d in answer if d.fixable), "a fix `fix_finding` can build"


_KEY = "import jax\n\n"
DECIDED = {  # modules the `ast` must answer for, and how many hints each holds
    "plain": (_KEY + "k = jax.random.PRNGKey(0)\n", 1),
    "from_random": ("from jax import random\nk = random.PRNGKey(0)\nclass A:\n    def f(self):\n        return self.random.PRNGKey(1)\n", 1),
    "from_import_alias": ("from jax.random import PRNGKey as P\nk = P(0)\n", 1),
    "from_import": ("import jax\nfrom jax.random import PRNGKey\nk = PRNGKey(0)\nx = obj.PRNGKey(1)\nf(PRNGKey=2)\n", 1),
    "module_alias": ("import jax.random as jr\nimport jax.numpy as jnp\nk = jr.PRNGKey(0) + jnp.zeros(2)\n", 1),
    "attribute_of_it": (_KEY + "doc = jax.random.PRNGKey.__doc__\nf = jax.random.PRNGKey\n", 2),
    "parenthesized": (_KEY + "k = (jax.random).PRNGKey(0), (jax.random.PRNGKey)(1), (\n    jax.random\n    .PRNGKey(2))\n", 3),
    "non_ascii_before": (_KEY + "é = 'ü€𝔘'; k = jax.random.PRNGKey(0)  # ✓\ns = 'ñ' + str(jax.random.PRNGKey(1))\n", 2),
    "tabs": (_KEY + "def f():\n\tif True:\n\t\treturn jax.random.PRNGKey(0)\n", 1),
    "crlf": (_KEY.replace("\n", "\r\n") + "def f():\r\n    return jax.random.PRNGKey(0)\r\n", 1),
    "cr": (_KEY.replace("\n", "\r") + "def f():\r    return jax.random.PRNGKey(0)\r", 1),
    "continuation": (_KEY + "k = \\\n    jax.random.PRNGKey(0)\n", 1),
    "before_the_import": ("def g():\n    return jax.random.PRNGKey(0)\nimport jax\n", 1),
    "import_in_try": ("try:\n    import jax\nexcept ImportError:\n    pass\nk = jax.random.PRNGKey(0)\n", 1),
    "shim_try": (_KEY + "try:\n    k = jax.random.PRNGKey(0)\n    def g():\n        return jax.random.PRNGKey(1)\nexcept (ValueError, AttributeError):\n    k = jax.random.key(0)\n", 0),
    "other_try": (_KEY + "try:\n    k = jax.random.PRNGKey(0)\nexcept ValueError:\n    k = None\nfinally:\n    jax.random.PRNGKey(1)\n", 2),
    "annotation_decorator_default": (_KEY + "@jax.random.PRNGKey\ndef f(k: jax.random.PRNGKey = jax.random.PRNGKey(0)) -> None: ...\n", 3),
    "lambda_comprehension_class": (_KEY + "f = lambda s: jax.random.PRNGKey(s)\nks = [jax.random.PRNGKey(i) for i in range(2)]\nclass C:\n    k = jax.random.PRNGKey(0)\n", 3),
    "subscript_target": (_KEY + "jax.random.PRNGKey(0)[0] = 1\n", 1),
    "star_import": ("from jax.random import *\nimport jax\nk = PRNGKey(0) + jax.random.PRNGKey(1)\n", 1),
    "relative_import": ("from . import random\nk = random.PRNGKey(0)\n", 0),
    "two_bindings_no_row": ("import numpy as random\nfrom jax import numpy as random\nx = random.zeros(2)\nimport jax\nk = jax.random.PRNGKey(0)\n", 1),
    "unrelated_parameter": (_KEY + "def f(key, rng):\n    return jax.random.PRNGKey(0)\n", 1),
    "match_and_walrus": (_KEY + "match x:\n    case [a, *rest]:\n        k = jax.random.PRNGKey(0)\nif (n := 1):\n    pass\n", 1),
    "tree_map_is_not_a_row": (_KEY + "y = jax.tree_util.tree_map(f, x)\nk = jax.random.PRNGKey(0)\n", 1),
    "no_hint": (_KEY + "k = jax.random.key(0)\n", 0),
    "two_imports_of_jax": ("import jax\nimport jax.random\nk = jax.random.PRNGKey(0)\n", 1),
    "same_import_in_a_function": (_KEY + "def f():\n    import jax\n    return jax.random.PRNGKey(0)\n\nk = jax.random.PRNGKey(1)\n", 2),
    "form_feed": (_KEY + "k = jax.random.PRNGKey(0)\x0c; j = jax.random.PRNGKey(1)\n", 2),
    "elif_body": (_KEY + "if x:\n    pass\nelif y:\n    k = jax.random.PRNGKey(0)\n", 1),
    "import_in_class": (_KEY + "class A:\n    import numpy as np\n    k = jax.random.PRNGKey(0)\n", 1),
    "comprehension_test": (_KEY + "k = [jax.random.PRNGKey(0) for _ in range(3) if jax.random.PRNGKey(1)]\n", 2),
    "other_hints": (_KEY + "import jax.numpy as jnp\nr = jax.device_put_replicated(x, ds)\ny = jnp.fix(x)\n"
                    "c = jax.xla_computation(f)\n", 3),
    "hinted_module": (_KEY + "jax.experimental.host_callback.id_tap(f, x)\nh = jax.experimental.maps.xmap\n", 2),
    "moved_module_reference": (_KEY + "net = jax.experimental.stax.serial(a)\nk = jax.random.PRNGKey(0)\n", 1),
    "removed_hints": (_KEY + "import jax.numpy as jnp\ny = jnp.in1d(a, b)\ns = jax.sharding.PositionalSharding(ds)\n"
                      "d = jax.dlpack.to_dlpack(x)\n", 3),
    "hinted_module_member": (_KEY + "n = jax.lib.xla_bridge.device_count()\nu = jax.util.safe_zip(a, b)\n", 2),
    "shim_handler": (_KEY + "try:\n    s = jax.sharding.NamedSharding\nexcept (ImportError, AttributeError):\n"
                     "    s = jax.sharding.PositionalSharding\n    k = jax.random.PRNGKey(0)\n", 0),
    "hasattr_shim": (_KEY + "if hasattr(jax.random, 'key'):\n    k = jax.random.key(0)\nelse:\n    k = jax.random.PRNGKey(0)\n", 0),
    "version_shim": (_KEY + "k = jax.random.key(0) if jax.__version__ > '0.4.16' else jax.random.PRNGKey(0)\n", 0),
    "hasattr_shim_other_row": (_KEY + "if hasattr(jax, 'tree'):\n    f = jax.tree.map\nelif old:\n    f = jax.tree_map\n"
                               "    g = (jax.tree_map)\nk = jax.random.PRNGKey(0)\n", 1),
    "version_shim_other_row": (_KEY + "while (\n    jax.__VERSION__ < '0.4'  # a test in parentheses\n):\n    pass\n"
                               "else:\n    f = jax.tree_map\n", 0),
    "shim_handler_other_row": (_KEY + "try:\n    E = jax.errors.JaxRuntimeError\nexcept AttributeError:\n"
                               "    try:\n        E = jax.lib.xla_extension.XlaRuntimeError\n    except Exception:\n"
                               "        E = None\n", 0),
    "shim_imports_of_several_homes": ("try:\n    from jax import enable_x64\nexcept ImportError:\n    from jax.experimental "
                                      "import enable_x64\nwith enable_x64():\n    enable_x64.x = 1\nimport jax\n"
                                      "k = jax.random.PRNGKey(0)\n", 1),
    "conflicting_imports": ("import jax\nimport numpy as jax\nk = jax.random.PRNGKey(0)\n", 0),
    "other_handler": (_KEY + "try:\n    s = None\nexcept ValueError:\n    s = jax.sharding.PositionalSharding\n", 1),
    "parameter_shadows": (_KEY + "def f(jax):\n    return jax.random.PRNGKey(0)\n", 0),  # the binder follows the scopes
    "assigned": ("from jax import random\nrandom = make()\nk = random.PRNGKey(0)\n", 0),  # the binder follows the scopes
    "import_in_function": ("def f():\n    import jax\n    return jax.random.PRNGKey(0)\n", 1),  # the binder follows the scopes
    "global": (_KEY + "def f():\n    global jax\n    return jax.random.PRNGKey(0)\n", 1),  # the binder follows the scopes
    "several_homes_rebound": ("try:\n    from jax import enable_x64\nexcept ImportError:\n    from jax.experimental "
                              "import enable_x64\ndef f():\n    enable_x64 = g\nwith enable_x64():\n    pass\n", 0),
    "comprehension_variable": (_KEY + "ks = [jax.random.PRNGKey(i) for jax in mods]\n", 0),  # the binder follows the scopes
}
# Modules where JF901's `check` once left the answer to its visitor (shims, f-strings, stores, other rows); JF902's
# findings there, where the LibCST visitor reported them (line, column), before JF902 moved onto `ast`.
UNDECIDED = {
    "shim_word_in_a_comment": (_KEY + "if old:  # jax version\n    k = jax.random.PRNGKey(0)\n", [(4, 9)]),
    "shim_word_in_a_comment_other_row": (_KEY + "if old:  # HASATTR\n    f = jax.tree_map\n", []),
    "several_homes_unguarded": ("from jax import enable_x64\nfrom jax.experimental import enable_x64\n", []),
    "fstring": (_KEY + "s = f'{jax.random.PRNGKey(0)}'\n", [(3, 8)]),
    "assigned_to": (_KEY + "jax.random.PRNGKey = make\n", []),
    "deleted": (_KEY + "del jax.random.PRNGKey\n", []),
    "other_row": (_KEY + "k = jax.random.PRNGKey(0)\ny = jax.tree_map(f, x)\n", [(3, 5)]),
    "hint_imported": ("from jax import device_put_replicated\nimport jax\nr = device_put_replicated(x, ds)\n", []),
    "other_row_imported": ("from jax import tree_map\nimport jax\nk = jax.random.PRNGKey(0)\n", [(3, 5)]),
    "import_of_the_key_module_path": ("import jax.random.PRNGKey\nk = jax.random.PRNGKey(0)\n", [(2, 5)]),
    "from_import_through_the_key": ("import jax\nfrom jax.random.PRNGKey import x\n", []),
    "value_row": (_KEY + "import jax.numpy as jnp\nk = jax.random.PRNGKey(0)\nm = jnp.NINF\n", [(4, 5)]),
}


@pytest.mark.parametrize("name", DECIDED)
def test_the_ast_answers_for_plain_modules(name) -> None:
    """Counts are of both rules that read the table: JF901's hints and JF902's PRNGKey hints."""
    text, count = DECIDED[name]
    answers = [_check(text, codemod) for codemod in FAMILY]
    assert None not in answers and sum(len(a) for a in answers) == count


@pytest.mark.parametrize("name", UNDECIDED)
def test_both_answer_where_jf901_once_left_it_to_libcst(name) -> None:
    text, where = UNDECIDED[name]
    assert [(d.start.line, d.start.column) for d in _check(text, JF902)] == where
    assert _check(text, JF901) is not None
    assert engine.analyse(text, [JF901])[2] is None and engine.analyse(text, [JF902])[2] is None  # no fix wanted


def test_a_module_the_ast_answers_for_is_not_parsed_with_libcst(monkeypatch) -> None:
    text = DECIDED["from_random"][0] + "x = 1  # noqa: JF902\n"
    monkeypatch.setattr(engine.cst, "parse_module", lambda *a, **k: pytest.fail("parsed with LibCST"))
    monkeypatch.setattr(engine.fastnodes, "parse_module", lambda *a, **k: pytest.fail("parsed with LibCST"))
    diagnostics, errors, wrapper = engine.analyse(text, list(FAMILY))
    assert wrapper is None and not errors and len(diagnostics) == 1


def test_no_visitor_is_left_so_only_a_wanted_fix_parses_with_libcst(monkeypatch) -> None:
    """Every rule decides on `ast` (JF301, the last visitor, moved): `check` with no fix wanted parses no module
    with LibCST, even one where every rule may match; with fixes wanted, a module with a fixable finding is parsed,
    to build its fix."""
    text = _KEY + (
        "import jax.numpy as jnp\n\nk = jax.random.PRNGKey(0)\n\ndef f(w, xs: jax.Array):\n"
        "    return jnp.stack([jnp.dot(w, x) for x in xs])\n"
    )
    assert not [c.code for c in registry.all_codemods() if not c.answers_on_ast()], "no LibCST visitor left"
    with monkeypatch.context() as patched:
        patched.setattr(engine.cst, "parse_module", lambda *a, **k: pytest.fail("parsed with LibCST"))
        patched.setattr(engine.fastnodes, "parse_module", lambda *a, **k: pytest.fail("parsed with LibCST"))
        diagnostics, _, wrapper = engine.analyse(text, registry.all_codemods())
    assert wrapper is None and {d.code for d in diagnostics} == {"JF902", "JF301"}
    diagnostics, _, wrapper = engine.analyse(text, registry.all_codemods(), fixes=True)
    assert wrapper is not None  # JF301's finding has a fix: built on LibCST
    assert any(d.code == "JF301" and d.fix is not None and d.fix.changes for d in diagnostics)


def test_suppressed_hints_stay_suppressed() -> None:
    text = _KEY + "a = jax.random.PRNGKey(0)  # noqa: JF902\nb = jax.random.PRNGKey(1)\n"
    diagnostics, _, wrapper = engine.analyse(text, [JF902])
    assert wrapper is None and [d.start.line for d in diagnostics] == [4]


def test_jaxfix_check_of_a_tree_with_findings_parses_no_file_with_libcst(tmp_path, monkeypatch) -> None:
    """`jaxfix check` (text output, no fix asked for) of the bundled examples and a slice of the corpus, which hold
    findings of every family, fixable ones among them: no module is parsed with LibCST (one process, so that the
    patch reaches every file); `--diff` of the same tree parses the modules it fixes."""
    import shutil
    from pathlib import Path

    from tests.helpers import invoke_in

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "examples", tmp_path / "examples")
    for case in sorted((root / "corpus").glob("*/*/before.py"))[::3]:
        shutil.copy(case, tmp_path / f"{case.parent.parent.name}_{case.parent.name}.py")
    parsed: list[int] = []

    def counting(original):
        def counted(*args, **kwargs):
            parsed.append(1)
            return original(*args, **kwargs)
        return counted

    monkeypatch.setattr(engine.cst, "parse_module", counting(engine.cst.parse_module))  # libcst's own
    monkeypatch.setattr(engine.fastnodes, "parse_module", counting(engine.fastnodes.parse_module))
    result = invoke_in(tmp_path, "check", "--no-cache", "-j", "1", "--exit-zero", ".")
    assert result.exit_code == 0, result.output
    assert sum(" JF" in line for line in result.output.splitlines()) > 50  # findings of many rules
    assert parsed == []
    result = invoke_in(tmp_path, "apply", "--diff", "--unsafe-fixes", "--no-cache", "-j", "1", ".")
    assert result.output.count("+++ ") > 10 and parsed  # fixes are built on LibCST, only here
