"""JF601 print-in-traced: `print` of traced values inside traced code → `jax.debug.print`."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Safety, spelled_with_import
from jaxfix.facts.literals import concatenated, is_number
from jaxfix.facts.module import FileFacts
from jaxfix.facts.traced import Kind, call_args

_CONVERSIONS = {"r": "repr", "s": "str", "a": "ascii"}


class NotTranslatable(Exception):
    """Why this print cannot become an exactly equivalent jax.debug.print; shown in the finding."""


@dataclass
class _Template:
    """A str.format template and its arguments, built piece by piece from print's arguments."""

    text: list[str] = field(default_factory=list)
    args: list[cst.BaseExpression] = field(default_factory=list)

    def literal(self, value: str) -> None:
        self.text.append(value.replace("{", "{{").replace("}", "}}"))

    def escaped(self, value: str) -> None:
        """Text that is already brace-escaped (an f-string's literal part has the same escaping as str.format)."""
        self.text.append(value)

    def placeholder(self, arg: cst.BaseExpression, conversion: str = "", spec: str = "") -> None:
        self.text.append("{" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
        self.args.append(arg)


class PrintInTraced(Codemod):
    """
    ## What it does
    Finds `print(...)` calls inside traced code (a function under `jax.jit`, `jax.vmap`, `jax.grad`, a
    `lax.scan` body, ...) that print traced values, and rewrites them to `jax.debug.print` with an equivalent
    format string.

    ## Why is this bad?
    Python's `print` runs while JAX traces the function, not when the compiled function runs. It prints
    `Traced<ShapedArray(float32[3])>` instead of numbers, once per compilation instead of once per call, and
    nothing at all on a cache hit. `jax.debug.print` is staged into the computation and prints the runtime
    values on every call.

    ## Example
    ```python
    @jax.jit
    def step(x):
        loss = jnp.sum(x**2)
        print(f"loss = {loss:.3f}", jnp.max(x))
        return loss
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x):
        loss = jnp.sum(x**2)
        jax.debug.print("loss = {:.3f} {}", loss, jnp.max(x))
        return loss
    ```
    Traced values become `{}` placeholders formatted at run time, with their conversions and format specs; `sep`
    is folded into the format string.

    ## Fix safety
    Safe where every value printed is surely traced: a traced parameter, an item of one (`batch["x"]`), the
    result of `jax.numpy`/`lax` functions, array methods and arithmetic on such values. The computed values do
    not change; what is printed changes, which is the point: run-time values on every call instead of tracer
    descriptions at trace time. Several `jax.debug.print` calls in one function may print in any order unless
    you add `ordered=True` (which `vmap` does not support), and under `vmap` they print once per batch with
    batched values.

    A value known at trace time printed beside traced ones (`x.shape`, `x.dtype`, `len(x)`, a static argument, a
    module's hyperparameter such as `self.features`) is what a print in traced code is for: it shows what
    tracing knows, once per compilation. The fix formats it at trace time with `str`/`repr`/`format`, as `print`
    showed it, but `jax.debug.print` then shows it on every call: unsafe, and the message names the value. A
    traced value not proven an array (the result of a function of yours) is unsafe too: a Python value there
    would print as an array. An attribute of a traced pytree (`model.dim`, `state.step`) and a string made from
    a tracer (`str(x)`) get a display-only hint: a pytree's static fields (an NNX module's Python int, a
    flax.struct `pytree_node=False` field) are Python values at trace time, so `print(f"{model.dim = }")`
    shows `model.dim = 4` once where `jax.debug.print` would show `Array(4, dtype=int32)` on every call. Where
    every call in the project passes a module built with a Python int there (`foo = Foo(4, rngs)`,
    `jitted(foo)`), `model.dim` is static: alone it is a trace-time print, beside traced values an unsafe fix.

    ## When it stays quiet
    - `print` outside traced code, or inside a function handed to a host callback (`jax.debug.callback`).
    - `print` whose arguments are all static (`print(x.shape)` in a jitted function is a fine way to see
      shapes at trace time), types and avals (`jax.typeof(x)`) among them.
    - A local name or import that shadows `print`.
    It reports without a fix when an argument's kind is unknown, for `*args`/`**kwargs`, `file=`, an `end`
    other than a newline, a non-literal `sep`, nested format specs, or a `print` used as a value.
    """

    code = "JF601"
    name = "print-in-traced"
    summary = "print() of traced values inside traced code: use jax.debug.print"
    fix_safety = Safety.SAFE
    other_fix_safeties = (Safety.UNSAFE, Safety.DISPLAY_ONLY)
    screen = ("print",)
    looks_at = ("Call",)

    VALID = (
        Valid("import jax\n\ndef f(x):\n    print(x)\n    return x\n"),
        Valid("import jax\n\n@jax.jit\ndef f(x):\n    print(x.shape, x.dtype, len(x))\n    return x\n"),
        Valid(  # identity is a Python bool at trace time, of tracers too
            "import jax\n\n@jax.jit\ndef f(m):\n    print(f'{m[0] is m[1] = }')\n    return m\n"
        ),
        Valid(  # sharding metadata (an NNX Variable's `out_sharding` too) is static at trace time
            "import jax\n\n@jax.jit\ndef f(m):\n    print(f'{m.param.out_sharding = }', m.param.sharding)\n    return m\n"
        ),
        Valid(  # types and avals are Python objects at trace time: jax.debug.print would raise on them
            "import jax\n\n@jax.jit\ndef f(x):\n    print(jax.typeof(x))\n    t = jax.typeof(x)\n    print('type', t, type(x))\n"
            "    print(jax.eval_shape(jax.numpy.sin, x))\n    return x\n"
        ),
        Valid("import jax\n\n@jax.jit\ndef f(x):\n    jax.debug.print('{}', x)\n    return x\n"),
        Valid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnames='n')\n"
            "def f(x, n):\n    print('n =', n)\n    return x * n\n"
        ),
        Valid("import jax\n\n@jax.jit\ndef f(x):\n    print = lambda *a: None\n    print(x)\n    return x\n"),
        Valid(
            "import jax\n\n@jax.jit\ndef f(x):\n    def show(v):\n        print(v)\n"
            "    jax.debug.callback(show, x)\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n",
            "import jax\n\n@jax.jit\ndef f(x):\n    jax.debug.print(\"{}\", x)\n    return x\n",
            message="jax.debug.print",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    y = jnp.sin(x)\n"
            "    print('y is', y, 'of shape', y.shape, sep=': ')\n    return y\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    y = jnp.sin(x)\n"
            "    jax.debug.print(\"y is: {}: of shape: {}\", y, str(y.shape))\n    return y\n",
        ),
        Invalid(
            "from jax import jit\n\n@jit\ndef f(x):\n    print(f'{x!r} and {x.sum():.2f} {{braces}}')\n    return x\n",
            "from jax import jit\nimport jax\n\n@jit\ndef f(x):\n"
            "    jax.debug.print(\"{!r} and {:.2f} {{braces}}\", x, x.sum())\n    return x\n",
        ),
        Invalid(
            "import jax\nfrom jax import lax\n\ndef run(xs):\n    def step(c, x):\n        print('carry', c)\n"
            "        return c + x, None\n    return lax.scan(step, 0.0, xs)\n",
            "import jax\nfrom jax import lax\n\ndef run(xs):\n    def step(c, x):\n        jax.debug.print(\"carry {}\", c)\n"
            "        return c + x, None\n    return lax.scan(step, 0.0, xs)\n",
        ),
        Invalid(  # a static argument beside a traced value: it would print on every call (unsafe)
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n"
            "    print('n', n, x)\n    return x\n",
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n"
            "    jax.debug.print(\"n {} {}\", str(n), x)\n    return x\n",
            message="`n` is static",
        ),
        Invalid(  # an attribute of a traced module may be a static Python int: a hint, never applied
            "import jax\n\n@jax.jit\ndef f(model):\n    print(f'{model.dim = }')\n    return model\n",
            None,
            message="`model.dim` may be static",
        ),
        Invalid(
            "import jax\nimport sys\n\n@jax.jit\ndef f(x):\n    print(x, file=sys.stderr)\n    return x\n",
            None,
            message="file=",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x):\n    print(x, end='')\n    return x\n",
            None,
            message="end=",
        ),
    )

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each call of the builtin `print` in traced code with a `*`/`**` argument or a traced value among its
        positional arguments (or an f-string's fields), reported with the fix `_translate` decides."""
        binder, traced = facts.binder, facts.traced
        found = []
        for call in binder.calls:
            if not binder.is_builtin(call.func, "print") or not traced.in_traced_code(call):
                continue
            args = call_args(call)
            kinds = [traced.kind(arg.value) for arg in args if arg.keyword is None and not arg.star]
            for arg in args:
                if _fstring(facts, arg.value):
                    kinds.extend(traced.kind(part.value) for part in arg.value.values if type(part) is ast.FormattedValue)
            if Kind.TRACED not in kinds and not any(arg.star for arg in args):
                continue  # only static (or unknowable) values: printing them at trace time is fine
            try:
                if type(binder.parents.get(call)) is not ast.Expr:
                    raise NotTranslatable("its value is used")
                template = _Classified(facts, call)
            except NotTranslatable as reason:
                found.append(cls.finding(
                    facts, call, f"print() of a traced value runs at trace time; use jax.debug.print (no fix: {reason})"
                ))  # fmt: skip
                continue
            spelled, needed = spelled_with_import(binder, "jax.debug.print")
            plan = (call, tuple(template.kinds), spelled, needed)
            suspects: dict[str, list[str]] = {}  # why → the values it applies to
            for code, why in template.suspect.items():
                suspects.setdefault(why, []).append(code)
            reasons = [f"{_names(codes)} may be static ({why})" for why, codes in suspects.items()]
            if template.unproven:
                reasons.append(f"assumes {_names(template.unproven)} {_is(template.unproven)} an array, not proven")
            if template.static:
                reasons.append(f"{_names(template.static)} {_is(template.static)} static")
            if not reasons:
                found.append(cls.finding(
                    facts, call, "print() of a traced value runs at trace time and shows tracers; use jax.debug.print",
                    description="use jax.debug.print", plan=plan,
                ))  # fmt: skip
                continue
            # A value known at trace time is what a print in traced code is for: jax.debug.print would show it on
            # every call instead, and a Python value as an array. Not applied where the code suggests a Python value.
            safety = Safety.DISPLAY_ONLY if template.suspect else Safety.UNSAFE
            python_values = ", a Python value as an array," if template.suspect or template.unproven else ""
            found.append(cls.finding(
                facts, call,
                f"print() of a traced value runs at trace time and shows tracers; use jax.debug.print "
                f"({'hint only' if template.suspect else 'unsafe'}: {'; '.join(reasons)}: jax.debug.print would print "
                f"what is known at trace time on every call{python_values} instead of once when the function is traced)",
                safety=safety, description="use jax.debug.print", plan=plan,
            ))  # fmt: skip
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        call, kinds, spelled, needed = finding.plan
        node = bridge.cst_of(call)
        if not isinstance(node, cst.Call):
            return None
        template = _translate(node, iter(kinds), bridge.module)
        debug_print = cst.Call(
            func=cst.parse_expression(spelled),
            args=[cst.Arg(cst.SimpleString(_string_literal("".join(template.text))))]
            + [cst.Arg(arg) for arg in template.args],
        )
        imports = (needed,) if needed is not None else ()
        return Fix(finding.fix.safety, finding.fix.description, ((node, debug_print),), imports)


# ---- deciding, on ast -------------------------------------------------------------------------------------------


def _fstring(facts: FileFacts, value: ast.AST) -> bool:
    """An f-string written as one literal (LibCST's FormattedString; `"a" f"{x}"` is a ConcatenatedString)."""
    return type(value) is ast.JoinedStr and not concatenated(facts.positions.segment(value))


def _plain_string(value: ast.AST) -> bool:
    return type(value) is ast.Constant and type(value.value) is str


class _Classified:
    """What `_translate` makes of a print's values, decided on `ast`: the kind of each value it formats (in its
    order), the static values printed, those that may well be static (with why) and the traced values not proven
    arrays, by their code; raises NotTranslatable as `_translate` does."""

    def __init__(self, facts: FileFacts, call: ast.Call) -> None:
        self._facts = facts
        self.kinds: list[Kind] = []
        self.static: list[str] = []
        self.suspect: dict[str, str] = {}
        self.unproven: list[str] = []
        args = call_args(call)
        for arg in args:
            if arg.star:
                raise NotTranslatable(f"{arg.star}-arguments")
            keyword = arg.keyword
            if keyword == "sep":
                _literal_or_none(arg.value, "sep")
            elif keyword == "end":
                if _literal_or_none(arg.value, "end", default="\n") != "\n":
                    raise NotTranslatable("end= other than a newline")
            elif keyword == "file":
                if not (type(arg.value) is ast.Constant and arg.value.value is None):
                    raise NotTranslatable("file= (jax.debug.print writes to standard output)")
            elif keyword not in (None, "flush"):  # jax.debug.print's output is not buffered by this process's print
                raise NotTranslatable(f"unknown keyword {keyword}=")
        for value in [arg.value for arg in args if arg.keyword is None]:
            if _plain_string(value):
                continue
            if _fstring(facts, value):
                for part in value.values:
                    if type(part) is not ast.FormattedValue:
                        continue
                    spec = part.format_spec
                    if spec is not None and any(type(p) is ast.FormattedValue for p in spec.values):
                        raise NotTranslatable("a format spec with nested {…}")
                    self._value(part.value, part)
            else:
                self._value(value, call)

    def _value(self, value: ast.AST, parent: ast.AST) -> None:
        facts = self._facts
        kind = facts.traced.kind(value)
        code = facts.positions.with_parentheses(value, parent)
        if kind is Kind.TRACED:
            predicates = facts.predicates
            if not predicates.traced_tree(value):
                reason = predicates.static_suspect(value)
                if reason is not None:
                    self.suspect.setdefault(code, reason)
                else:
                    self.unproven.append(code)
        elif kind is Kind.STATIC:
            if not (is_number(value) or (type(value) is ast.Constant and value.value is None)):
                self.static.append(code)
        else:
            raise NotTranslatable(f"cannot tell whether `{code}` is traced")
        self.kinds.append(kind)


def _literal_or_none(value: ast.AST, keyword: str, *, default: str = " ") -> str:
    if type(value) is ast.Constant and value.value is None:
        return default
    if _plain_string(value):
        return value.value
    raise NotTranslatable(f"{keyword}= is not a string literal")


# ---- the fix, on LibCST -------------------------------------------------------------------------------------------


def _translate(node: cst.Call, kinds: Iterator[Kind], module: cst.Module) -> _Template:
    """The template of a print `check` found translatable, each value placed as the kind `check` gave it."""
    separator = " "
    for arg in node.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "sep":
            separator = _optional_literal(arg.value, "sep", default=" ")
    template = _Template()
    positional = [arg.value for arg in node.args if arg.keyword is None]
    for index, value in enumerate(positional):
        if index:
            template.literal(separator)
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)) and isinstance(value.evaluated_value, str):
            template.literal(value.evaluated_value)
        elif isinstance(value, cst.FormattedString):
            _add_fstring(template, value, kinds, module)
        else:
            _add_value(template, value, "", "", next(kinds))
    return template


def _add_fstring(template: _Template, value: cst.FormattedString, kinds: Iterator[Kind], module: cst.Module) -> None:
    prefix = value.prefix.lower().replace("f", "")
    for part in value.parts:
        if isinstance(part, cst.FormattedStringText):
            # Evaluate escapes (\n, \t) but keep {{ }}: they mean the same in str.format.
            template.escaped(ast.literal_eval(f"{prefix}{value.quote}{part.value}{value.quote}"))
            continue
        conversion = part.conversion or ""
        spec = "".join(p.value for p in part.format_spec) if part.format_spec else ""
        if part.equal is not None:
            whitespace = part.equal.whitespace_before.value + "=" + part.equal.whitespace_after.value
            template.literal(module.code_for_node(part.expression) + whitespace)
            conversion = conversion or ("" if spec else "r")
        _add_value(template, part.expression, conversion, spec, next(kinds))


def _add_value(template: _Template, value: cst.BaseExpression, conversion: str, spec: str, kind: Kind) -> None:
    if kind is Kind.TRACED:
        template.placeholder(value, conversion, spec)
        return
    # Known at trace time: formatted now, as print would: a str passes through jax.debug.print unchanged.
    formatted = value
    if conversion:
        formatted = cst.Call(cst.Name(_CONVERSIONS[conversion]), [cst.Arg(formatted)])
    if spec:
        spec_literal = cst.SimpleString(_string_literal(spec))
        formatted = cst.Call(cst.Name("format"), [cst.Arg(formatted), cst.Arg(spec_literal)])
    elif not conversion:
        formatted = cst.Call(cst.Name("str"), [cst.Arg(formatted)])
    template.placeholder(formatted)


def _is(codes: list[str]) -> str:
    return "is" if len(set(codes)) == 1 else "are"


def _names(codes: list[str]) -> str:
    """`a`, `a` and `b`, `a`, `b` and 2 more: the values a message names, each once."""
    unique = list(dict.fromkeys(codes))
    shown = [f"`{code}`" for code in unique[:3]]
    if len(unique) > 3:
        shown.append(f"{len(unique) - 3} more")
    words = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return words


def _optional_literal(value: cst.BaseExpression, keyword: str, *, default: str) -> str:
    if isinstance(value, cst.Name) and value.value == "None":
        return default
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)) and isinstance(value.evaluated_value, str):
        return value.evaluated_value
    raise NotTranslatable(f"{keyword}= is not a string literal")


def _string_literal(value: str) -> str:
    """A Python string literal for `value`, in double quotes where it can be."""
    literal = repr(value)
    if literal.startswith("'") and '"' not in value:
        literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
    return literal
