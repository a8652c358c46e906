"""Which arguments of a compiled function its callers never read again and the function replaces, so that its
buffers may be donated (JF501), on `ast`: the calls that rebind an argument from the function's result, the proof
that an output is the updated argument with its shape and dtype, and what may still hold the caller's old buffer.

It reads the jitted functions and their calls (`facts.jitted`), the reaching definitions of the calling function
(`FileFacts.reaching`), which functions this module differentiates (`facts.traced`), and the library summaries
(`facts.summaries`: training calls, results of new arrays only, optimizer states that keep the parameters)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

from jaxfix.facts.flow import UNDEFINED, Parameter, block_activity, statement_of
from jaxfix.facts.jitted import (
    Jitted, assignments, call_sites, jitted_functions, jitted_methods, named_parameters, nested_jitted_functions,
    static_parameters,
)
from jaxfix.facts.knowledge.jax import ARRAY_CONVERSIONS, FILLED_LIKE, FRESH_BUFFER_NAMESPACES, TREE_MAPS
from jaxfix.facts.knowledge.tables import DONATION_KEYWORDS, REVERSE_MODE
from jaxfix.facts.spelling import in_order, names_in, value_of
from jaxfix.facts.summaries import TRAINING_CALLS, TRAINING_METHODS, Summaries

PMAP = "jax.pmap"
FILTER_JIT = "equinox.filter_jit"  # one keyword, `donate=`: every argument's arrays, or all but the first's
COMPILERS = frozenset(DONATION_KEYWORDS)
# Those that take jax.jit's keywords (donate_argnums and donate_argnames): the ones whose jitted methods are judged.
_BY_NAME = frozenset(c for c, keywords in DONATION_KEYWORDS.items() if "donate_argnames" in keywords)
# What marks a training step (a gradient taken in its body, or an optimizer's update applied) is in the library
# summaries: TRAINING_CALLS, TRAINING_METHODS. A step with none of these is not assumed to return the updated
# value of its arguments.
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()), *((ast.Match,) if hasattr(ast, "Match") else ()),
)


@dataclass
class Site:
    """One call site, for one parameter: the caller's variable and what the call does with it."""

    call: ast.Call
    variable: str
    keyword: bool
    position: int  # 0: the whole result; n: the n-th element of the returned tuple
    relay: ast.Name | None = None  # `state = new_state` right after `new_state, m = step(state, b)`: its value
    blocker: str | None = None  # why donation would be wrong here: reported, never fixed
    unsafe: str | None = None  # why donation is right only if the first value is held nowhere else
    # The first value may hold the arrays of another argument of the same call (`opt_state = tx.init(params)`,
    # `step(params, opt_state)`): XLA then refuses the donation on the first call. Its reason is shown first.
    shares: bool = False


@dataclass
class Donation:
    """What the calls of one compiled function let it donate."""

    params: list[str]  # its positional parameters, in order
    donated: list[tuple[int, str, list[Site]]]  # (index, name, every call's site) of each argument it may donate
    assumed: list[str]  # donated without a proof that the function returns them updated
    blockers: list[str]  # why the others are not donated: the first is the one to say


class DonationFacts:
    """The compiled functions of one module whose calls rebind their arguments from their results, and which of
    those arguments each may donate (`FileFacts.donation`)."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.binder = facts.binder
        self.nested: set[ast.AST] = set()  # the bindings of the jitted functions defined in a function's body
        self.methods: dict[ast.AST, ast.ClassDef] = {}  # a jitted method -> its class
        self._by_node: dict[ast.AST, Jitted] = {}

    @cached_property
    def summaries(self) -> Summaries:
        return Summaries(self.binder)

    @cached_property
    def steps(self) -> list[Jitted]:
        """The jitted or pmapped functions (module-level, methods with `self` static, defined in a function's
        body) that may donate; fills `nested` and `methods`, and is read before `donatable`."""
        binder = self.binder
        jitted = jitted_functions(binder, COMPILERS)
        for cls in binder.tree.body:
            if type(cls) is ast.ClassDef:
                for method in jitted_methods(binder, cls, COMPILERS):
                    if method.binding is method.function and method.compiler in _BY_NAME:
                        jitted.append(method)
                        self.methods[method.function] = cls
        for function in binder.nodes_of(*_DEFS):
            for inner in nested_jitted_functions(binder, function, COMPILERS):
                jitted.append(inner)
                self.nested.add(inner.binding)
        for item in jitted:
            self._by_node[item.bound] = item
        return jitted

    def donatable(self, jitted: Jitted) -> Donation | None:
        """Which of `jitted`'s arguments every call rebinds from its result and it may donate (with what is assumed
        and what stops the others); None where it donates already or its calls or returns cannot be followed."""
        keywords = jitted.keywords
        if "donate_argnums" in keywords or "donate_argnames" in keywords or "donate" in keywords:
            return None
        function = jitted.function
        arguments = function.args
        if arguments.vararg is not None:
            return None  # `*args`: positions past the named parameters (a bare `*` only starts keyword-only ones)
        if jitted.compiler == FILTER_JIT and (arguments.kwonlyargs or arguments.kwarg):
            return None  # filter_jit's `donate=` would give these away too
        params = jitted.parameters
        if jitted.compiler == PMAP:
            broadcast = keywords.get("static_broadcasted_argnums")
            static = named_parameters({} if broadcast is None else {"static_argnums": broadcast}, params, "static")
        else:
            static = static_parameters(jitted)
        if static is None:
            return None
        offset = 0  # where the call's first positional argument lands in the signature
        if function in self.methods:
            if not params or params[0] != "self" or "self" not in static:
                return None  # a method whose `self` is traced: a pytree class, whose calls jaxfix does not follow
            offset = 1
        calls = self._method_call_sites(jitted) if offset else call_sites(self.binder, jitted)
        if not calls:
            return None
        returns = _returns(function)
        if not returns:
            return None
        arity = _arity(returns)
        if arity is None:
            return None
        donated: list[tuple[int, str, list[Site]]] = []
        assumed: list[str] = []  # donated without a proof that the step returns them updated
        blockers: list[str] = []
        self._calls = set(calls)
        self._relays: set[ast.Name] = set()
        trains = self._trains(function)
        candidates = []
        for index, param in enumerate(params):
            if param in static:
                continue
            sites = [self._site(call, index - offset, param) for call in calls]
            positions = {s.position for s in sites if s is not None}
            if any(s is None for s in sites) or len(positions) != 1:
                continue  # some call does not rebind this argument from one output
            position = positions.pop()
            if (position == 0) != (arity == 0) or position > arity:
                continue  # the calls unpack what the returns do not spell out as a tuple (or the other way)
            peers = self._updates(function, returns, param, position)
            if peers is None and not trains:
                continue  # not a training step: nothing says the output is the updated argument
            candidates.append((index, param, sites, peers))
            self._relays.update(site.relay for site in sites if site.relay is not None)
        proven = {param: sites for _, param, sites, peers in candidates if peers is not None and not peers}
        for index, param, sites, peers in candidates:
            if peers is None or peers and not all(
                peer in proven and self._shaped_like(site, proven[peer][n]) for peer in peers for n, site in enumerate(sites)
            ):
                if not trains:
                    continue
                assumed.append(param)
            self._donating = {_argument(site) for site in sites}
            checked = [self._aliasing(site) for site in sites]
            blocked = sorted((c for c in checked if c.blocker), key=lambda c: not c.shares)
            if blocked:
                if blocked[0].shares:  # the call itself would raise: the first thing to say
                    blockers.insert(0, blocked[0].blocker)
                else:
                    blockers.append(blocked[0].blocker)
                if param in assumed:
                    assumed.remove(param)
                continue
            donated.append((index, param, checked))
        return Donation(params, donated, assumed, blockers)

    def public(self, name: str) -> bool:
        """Whether other modules may call the module-level name `name`: it has no leading underscore, and
        `__all__`, where the module sets it, does not leave it out."""
        if name.startswith("_"):
            return False
        for stmt in self.binder.tree.body:
            if type(stmt) is ast.Assign and any(type(t) is ast.Name and t.id == "__all__" for t in stmt.targets):
                value = stmt.value
                if type(value) in (ast.List, ast.Tuple) and all(
                    type(e) is ast.Constant and type(e.value) in (str, bytes) for e in value.elts
                ):
                    return name in {e.value for e in value.elts}
                return True
        return True

    # ---- the step ------------------------------------------------------------------------------------------

    def _trains(self, function: ast.AST) -> bool:
        """Whether the function (nested functions included) takes a gradient or applies an optimizer's update."""
        qualified = self.binder.qualified
        for node in ast.walk(function):
            kind = type(node)
            if (kind is ast.Name or kind is ast.Attribute) and qualified(node) in TRAINING_CALLS:
                return True
            if kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in TRAINING_METHODS:
                return True
        return False

    def _method_call_sites(self, jitted: Jitted) -> list[ast.Call] | None:
        """Every `self.name(...)` call in the methods of the jitted method's class, or None when the module uses
        the attribute `name` of a name any other way (`learner.name(...)`, `self.name` passed or stored)."""
        cls = self.methods[jitted.function]
        parents = self.binder.parents
        calls = []
        for node in self.binder.nodes_of(ast.Attribute):
            if not (node.attr == jitted.name and type(node.value) is ast.Name):
                continue
            call = parents.get(node)
            method = self.facts.enclosing_function(node)
            if not (
                type(call) is ast.Call and call.func is node and node.value.id == "self"
                and type(method) in _DEFS and parents.get(method) is cls
            ):
                return None
            calls.append(call)
        return calls

    # ---- what the function returns -----------------------------------------------------------------------

    def _updates(self, function: ast.AST, returns: list[ast.Return], param: str, position: int) -> frozenset[str] | None:
        """Whether every return's output `position` is provably the updated `param`, with its shape and dtype:
        None when not; else the other parameters whose gradients it adds (`0.9 * velocity + grads`), which
        must then have the shape of `param` at every call (empty: nothing more to prove)."""
        writes = block_activity(function.body).writes
        if param in writes:
            return None  # `param` is rebound: a later use of the name is not the argument
        self._fn_params = set(self._parameters(function)) - set(writes)
        flow = self.facts.reaching(function)
        peers: set[str] = set()
        for ret in returns:
            value = ret.value if position == 0 and type(ret.value) is not ast.Tuple else ret.value.elts[position - 1]
            kinds = self._shaped(value, param, flow, self._statement(ret), {}, 0)
            if kinds is None or "param" not in kinds or kinds == {"param"}:
                return None  # no gradient in it: an integer array could turn into a float one
            peers |= {kind.split(":", 1)[1] for kind in kinds if kind.startswith("grad:")}
        return frozenset(peers)

    @staticmethod
    def _parameters(function: ast.AST) -> list[str]:
        arguments = function.args
        return [a.arg for a in (*arguments.posonlyargs, *arguments.args)]

    def _statement(self, node: ast.AST) -> ast.stmt | None:
        """The statement holding `node` as LibCST holds statements (a line by its first, a compound statement)."""
        return statement_of(node, self.binder.parents, self.facts.lines)

    def _shaped(self, expr, param, flow, statement, env, depth) -> set[str] | None:
        """For an elementwise expression of `param`, its gradients and numbers: the kinds of array operands in
        it ({"param", "grad"}, empty for a number); None for anything else."""
        if depth > 8:
            return None
        kind = type(expr)
        if _number(expr):
            return set()
        if kind is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):
            return self._shaped(expr.operand, param, flow, statement, env, depth + 1)
        if kind is ast.BinOp and type(expr.op) in _ELEMENTWISE:
            left = self._shaped(expr.left, param, flow, statement, env, depth + 1)
            right = self._shaped(expr.right, param, flow, statement, env, depth + 1)
            return None if left is None or right is None else left | right
        if kind is ast.Call:
            return self._tree_map(expr, param, flow, statement, depth)
        if kind is not ast.Name:
            return None
        if expr.id in env:
            return set(env[expr.id])
        if expr.id == param and not env:
            return {"param"}
        if self._module_number(expr.id):
            return set()
        if env:
            return None
        sources = flow.reaching(statement, expr.id) if statement is not None else frozenset()
        if len(sources) != 1:
            return None
        (source,) = sources
        of = self._gradient_of(source, expr.id)
        if of == param:
            return {"grad"}
        if of is not None and of in self._fn_params:
            return {f"grad:{of}"}
        if isinstance(source, ast.expr):
            return self._shaped(source, param, flow, self._statement(source), env, depth + 1)
        return None

    def _tree_map(self, call: ast.Call, param, flow, statement, depth) -> set[str] | None:
        """`jax.tree.map(lambda p, g: p - lr * g, params, grads)`: each tree is `param` or its gradient."""
        if self.binder.qualified(call.func) not in TREE_MAPS:
            return None
        if call.keywords or any(type(a) is ast.Starred for a in call.args) or len(call.args) < 2:
            return None
        fn, *trees = call.args
        if type(fn) is not ast.Lambda:
            return None
        lam = fn.args
        if lam.vararg is not None or lam.kwonlyargs or lam.kwarg is not None:
            return None
        names = [a.arg for a in (*lam.posonlyargs, *lam.args)]
        if len(names) != len(trees) or type(trees[0]) is not ast.Name or trees[0].id != param:
            return None
        env = {}
        for name, tree in zip(names, trees):
            kinds = self._shaped(tree, param, flow, statement, {}, depth + 1)
            if kinds not in ({"param"}, {"grad"}):
                return None
            env[name] = kinds
        return self._shaped(fn.body, param, flow, statement, env, depth + 1)

    def _gradient_of(self, source, name: str) -> str | None:
        """`g = jax.grad(f)(p, ...)`, `loss, g = jax.value_and_grad(f)(p, ...)` (argnums 0): the name `p`."""
        if type(source) is ast.Call:
            call, index, arity = source, None, 0
        elif type(source) is ast.Assign and len(source.targets) == 1 and type(source.value) is ast.Call:
            target = source.targets[0]
            if type(target) not in (ast.Tuple, ast.List):
                return None
            elements = target.elts
            found = [i for i, e in enumerate(elements) if type(e) is ast.Name and e.id == name]
            if len(found) != 1 or any(type(e) is ast.Starred for e in elements):
                return None
            call, index, arity = source.value, found[0], len(elements)
        else:
            return None
        transform = call.func
        if type(transform) is not ast.Call or not (call.args or call.keywords):
            return None
        kind = self.binder.qualified(transform.func)
        keywords = {k.arg: k.value for k in transform.keywords if k.arg is not None}
        if set(keywords) - {"has_aux", "argnums"}:
            return None
        argnums = keywords.get("argnums")
        if argnums is not None and not (_integer(argnums) and argnums.value == 0 and self._spelled(argnums) == "0"):
            return None
        aux = keywords.get("has_aux")
        if aux is not None and not (type(aux) is ast.Constant and type(aux.value) is bool):
            return None
        has_aux = aux is not None and aux.value is True
        if kind == "jax.grad":
            wanted = (0, 2) if has_aux else (None, 0)
        elif kind == "jax.value_and_grad":
            wanted = (1, 2)
        else:
            return None
        first = in_order(call)[0]
        if type(first) is not ast.Name or (index, arity) != wanted:
            return None
        return first.id

    def _spelled(self, node: ast.AST) -> str:
        return self.facts.positions.segment(node)

    def _module_number(self, name: str) -> bool:
        """A module-level constant bound once to a number (`LEARNING_RATE = 0.1`)."""
        found = assignments(self.binder, name)
        if len(found) != 1:
            return False
        node = found[0].node
        parent = self.binder.parents.get(node)
        if type(parent) is ast.Assign and len(parent.targets) == 1 and parent.targets[0] is node:
            value = parent.value
            while type(value) is ast.UnaryOp and type(value.op) is ast.USub:
                value = value.operand
            return _number(value)
        return False

    # ---- call sites --------------------------------------------------------------------------------------

    def _site(self, call: ast.Call, index: int, param: str) -> Site | None:
        """The call passes a local variable for `param` and rebinds it from one output: the site, else None."""
        if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        keyword = next((k for k in call.keywords if k.arg == param), None)
        positional = call.args
        arg = keyword.value if keyword is not None else (positional[index] if 0 <= index < len(positional) else None)
        if arg is not None and _self_attribute(arg) is not None:
            return self._attribute_site(call, arg, keyword is not None)
        if type(arg) is not ast.Name:
            return None
        variable = arg.id
        for other in in_order(call):
            if value_of(other) is not arg and variable in _spellings(other):
                return None  # passed twice: the same buffer donated and read
        assign = self.binder.parents.get(call)
        if not (type(assign) is ast.Assign and assign.value is call and len(assign.targets) == 1):
            return None
        target = assign.targets[0]
        position = _position(target, variable)
        relay = None
        if position is None:
            relay = self._relay(assign, variable)
            if relay is None:
                return None
            position = _position(target, relay.id)
            if position is None:
                return None
        return Site(call, variable, keyword is not None, position, relay)

    def _attribute_site(self, call: ast.Call, arg: ast.expr, keyword: bool) -> Site | None:
        """`self.params, self.opt_state = step(self.params, self.opt_state, batch)`: the site for `self.params`,
        rebound in the same statement (its variable is written `self.params`)."""
        attribute = _self_attribute(arg)
        for other in in_order(call):
            if value_of(other) is not arg and any(_self_attribute(n) == attribute for n in ast.walk(other)):
                return None  # passed twice
        assign = self.binder.parents.get(call)
        if not (type(assign) is ast.Assign and assign.value is call and len(assign.targets) == 1):
            return None
        target = assign.targets[0]
        if type(target) in (ast.Tuple, ast.List) and not any(type(e) is ast.Starred for e in target.elts):
            hits = [i for i, e in enumerate(target.elts) if _self_attribute(e) == attribute]
            position = hits[0] + 1 if len(hits) == 1 else None
        else:
            position = 0 if _self_attribute(target) == attribute else None
        return None if position is None else Site(call, f"self.{attribute}", keyword, position)

    def _relay(self, assign: ast.Assign, variable: str) -> ast.Name | None:
        """`new_state, m = step(state, b)` followed at once by `state = new_state` (among other such `a = new_a`
        statements): the name `new_state` in that statement, when the call's statement is the only binding of
        `new_state` in its scope and nothing but the relay reads it before the last call (after which it names
        the same last value as `state`)."""
        parent = self.binder.parents.get(assign)
        block = _block_of(assign, parent)
        if block is None:
            return None
        groups = self.facts.lines.group(block)
        at = next((i for i, (kind, group) in enumerate(groups) if any(s is assign for s in group)), None)
        if at is None or groups[at][0] != "line" or len(groups[at][1]) != 1:
            return None
        target = assign.targets[0]
        bound_nodes = [n for n in ast.walk(target) if type(n) is ast.Name]
        bound = names_in(target)
        relay = None
        for kind, group in groups[at + 1:]:
            small = group[0] if kind == "line" and len(group) == 1 else None
            if not (
                type(small) is ast.Assign and len(small.targets) == 1 and type(small.targets[0]) is ast.Name
                and type(small.value) is ast.Name and small.value.id in bound
            ):
                break  # the relays are the plain `a = new_a` statements right after the call
            if small.targets[0].id == variable:
                relay = small
                break
        if relay is None or relay.value.id == variable:
            return None
        new = relay.value.id
        scope = self.binder.scope_of.get(assign.value)
        own = assignments(self.binder, new, scope) if scope is not None else []
        if not own:
            return None
        for binding in own:
            if not any(binding.node is n for n in bound_nodes):
                return None  # bound elsewhere too
        reads = self.binder.reads
        for node in self.binder.references(scope, new):
            if node is relay.value:
                continue
            if reads[node].scope is not scope or not self._after_every_call(node, scope):
                return None
        return relay.value

    def _shaped_like(self, site: Site, peer: Site) -> bool:
        """Whether at this call the variable `site` passes has the shape and dtype of the one `peer` passes,
        by induction over the calls: each value it may hold is either an earlier call's output (which has the
        shape of the peer's, whose own output keeps its shape) or `jnp.zeros_like(peer)` (also `ones_like`,
        `full_like`, or `jax.tree.map` of one of them) taken from the same values of the peer that reach the call."""
        if "." in site.variable or "." in peer.variable:
            return False  # `self.params`: no data flow to prove a first value from
        flow = self.facts.reaching(self.facts.enclosing_function(site.call))
        statement = self._statement(site.call)
        peer_initial = {s for s in flow.reaching(statement, peer.variable) if not self._is_rebinding(s)}
        qualified = self.binder.qualified
        for source in flow.reaching(statement, site.variable):
            if self._is_rebinding(source):
                continue
            if type(source) is not ast.Call:
                return False
            callee = qualified(source.func)
            written = in_order(source)
            args = [a for a in written if type(a) not in (ast.keyword, ast.Starred)]
            if callee in TREE_MAPS and len(written) == 2 and len(args) == 2:
                callee, args = qualified(args[0]), args[1:]
            elif callee in TREE_MAPS:
                return False
            if callee not in FILLED_LIKE or not args or type(args[0]) is not ast.Name:
                return False
            if args[0].id != peer.variable or any(k.arg in ("dtype", "shape") for k in source.keywords):
                return False
            if set(flow.reaching(self._statement(source), peer.variable)) != peer_initial:
                return False
        return True

    def _makes_like(self, call: ast.Call) -> bool:
        """`jnp.zeros_like(x)` and its kin, or `jax.tree.map` of one of them: new arrays shaped like `x`."""
        qualified = self.binder.qualified
        callee = qualified(call.func)
        written = in_order(call)
        if callee in TREE_MAPS and written:
            callee = qualified(value_of(written[0]))
        return callee in FILLED_LIKE

    def _is_rebinding(self, source) -> bool:
        return type(source) is ast.Assign and source.value in self._calls or source in self._relays

    # ---- what may hold the old buffer ----------------------------------------------------------------------

    def _aliasing(self, site: Site) -> Site:
        """Fill in what may still hold the caller's old buffer: a blocker, or an unsafe reason."""
        if site.variable.startswith("self."):
            return self._attribute_aliasing(site)
        facts = self.facts
        enclosing = facts.enclosing_function(site.call)
        flow = facts.reaching(enclosing) if type(enclosing) is not ast.Lambda else None
        statement = self._statement(site.call)
        variable = site.variable
        scope = self.binder.scope_of.get(site.call)
        owner = scope.node if scope is not None else None
        if flow is None or owner is not enclosing or variable in flow.declared or variable not in flow.locals:
            site.blocker = f"`{variable}` at line {site.call.lineno} is not a local variable of the calling function"
            return site
        differentiated = self._differentiated(enclosing)
        if differentiated is not None:
            site.blocker = differentiated
            return site
        for source in flow.reaching(statement, variable):
            reason = self._source_problem(source, variable)
            if reason is None:
                continue
            if reason.startswith("!"):
                site.blocker = reason[1:]
                return site
            shared = self._shared_with_call(source, site)
            if shared is not None:
                site.shares = True
                if shared.startswith("!"):
                    site.blocker = shared[1:]
                    return site
                site.unsafe = shared
            site.unsafe = site.unsafe or reason
        # The first read with a problem, in source order (the same on every run).
        reads = self.binder.references(scope, variable)
        problems = [(node, problem) for node in reads if (problem := self._read_problem(node, scope, variable))]
        if problems:
            site.blocker = min(problems, key=lambda found: (found[0].lineno, found[0].col_offset))[1]
        return site

    def _differentiated(self, enclosing: ast.AST) -> str | None:
        """Why no call in `enclosing` may donate where this module differentiates `enclosing` (`jax.grad` of a
        whole training run): its backward pass reads the buffers the calls gave away. None where it does not."""
        if type(enclosing) is ast.Module:
            return None
        reverse = sorted(self.facts.traced.transforms(enclosing) & REVERSE_MODE)
        if not reverse:
            return None
        name = getattr(enclosing, "name", "lambda")
        return (
            f"this module differentiates `{name}` with `{reverse[0]}`, and its backward pass reads "
            "the buffers the call would donate (`Array has been deleted`)"
        )

    def _attribute_aliasing(self, site: Site) -> Site:
        """For `self.params` rebound at every call: a blocker where the module reads an attribute of that name
        anywhere else (another method may keep the old value: `p = self.params`, `return self.params`), stores it
        elsewhere but once (the first value), or differentiates the caller; an unsafe reason for a first value
        that may be held elsewhere, and always one for callers and subclasses in other modules."""
        name = site.variable[5:]
        differentiated = self._differentiated(self.facts.enclosing_function(site.call))
        if differentiated is not None:
            site.blocker = differentiated
            return site
        parents = self.binder.parents
        stores = []
        for node in self.binder.nodes_of(ast.Attribute):
            if node.attr != name or node in self._donating:
                continue
            parent = parents.get(node)
            if type(parent) is ast.Attribute and parent.value is node and parent.attr in _METADATA_ATTRIBUTES:
                continue
            small = _innermost_statement(node, parents)
            if type(small) is ast.Assign and small.value in self._calls:
                if any(t is node or any(n is node for n in ast.walk(t)) for t in small.targets):
                    continue  # rebound from a donating call
            if type(parent) is ast.Assign and any(t is node for t in parent.targets) and _self_attribute(node) == name:
                stores.append(parent)
                continue
            statement = self._statement(node)
            text = self._first_line(statement, whole=True)
            site.blocker = f"`{site.variable}` is also read at line {node.lineno} (`{text}`), which may keep the old buffer"
            return site
        if len(stores) != 1:
            site.blocker = f"`{site.variable}` is set in {len(stores)} places besides the calls"
            return site
        reason = self._source_problem(stores[0], site.variable)
        if reason is not None and reason.startswith("!"):
            site.blocker = reason[1:]
        site.unsafe = site.unsafe or reason or (
            f"`{site.variable}` is an attribute: code in other modules or subclasses may keep its old value"
        )
        return site

    def _source_problem(self, source, variable: str) -> str | None:
        """None for a fresh value; "!reason" for one that may be shared (a blocker); "reason" for an unsafe one."""
        if source is UNDEFINED:
            return f"!`{variable}` may be unbound before the call"
        if isinstance(source, Parameter):
            return f"!`{variable}` is a parameter of the calling function: its caller's array would be deleted"
        kind = type(source)
        if kind is ast.Assign and source.value in self._calls or source in self._calls or source in self._relays:
            return None  # rebound from an earlier call of the same function: a new buffer
        summaries = self.summaries
        if kind is ast.Assign and type(source.value) is ast.Call:
            if summaries.fresh_result(source.value, _unpacked_at(source, variable)) or self._copies(source.value):
                return None  # new arrays, by the library's summary (`params, state = forward.init(rng, x)`), or copies
            callee = self.facts.positions.callee(source.value)
            return f"`{variable}` starts as the result of `{callee}(...)`, which may be held elsewhere"
        if kind is ast.AugAssign:
            return None
        if kind is ast.BinOp or kind is ast.UnaryOp:
            return None
        if kind is ast.Assign and self._fresh(source.value) or self._fresh(source):
            return None  # `params = {"w": jax.random.normal(k, (3, 8)) * 0.1, "b": jnp.zeros(8)}`
        if kind is ast.Call:
            callee = self.binder.qualified(source.func) or ""
            fresh = callee.startswith(FRESH_BUFFER_NAMESPACES) and callee not in ARRAY_CONVERSIONS
            if fresh or self._makes_like(source):
                return None
            if summaries.fresh_result(source) or self._copies(source):
                return None  # new arrays, by the library's summary (`opt_state = optax.adam(1e-3).init(params)`)
            called = self._jitted_called(source)
            if called is not None and _returns_fresh(called):
                return None
            return f"`{variable}` starts as the result of `{self.facts.positions.callee(source)}(...)`, which may be held elsewhere"
        line = getattr(source, "lineno", "?")
        if isinstance(source, _DEFS + (ast.ClassDef,)) and source.decorator_list:
            line = source.decorator_list[0].lineno  # LibCST's def starts at its first decorator
        return f"!`{variable}` is bound at line {line} to a value that may be held elsewhere"

    def _copies(self, call: ast.Call) -> bool:
        """`jax.tree.map(jnp.copy, x)`: new arrays with the values of `x`, holding none of its buffers."""
        qualified = self.binder.qualified
        return (
            qualified(call.func) in TREE_MAPS
            and len(call.args) == 2 and not call.keywords
            and not any(type(a) is ast.Starred for a in call.args)
            and qualified(call.args[0]) == "jax.numpy.copy"
        )

    def _shared_with_call(self, source, site: Site) -> str | None:
        """For a first value made by a call from another argument of the same donating call (`opt_state =
        optimizer.init(params)`, then `step(params, opt_state)`): "!reason" (a blocker) when the library's
        summary says its result holds that argument's arrays, else the unsafe reason naming the assumption; None
        when the value is not made so. XLA rejects a call that donates a buffer it also receives (measured on
        JAX 0.10.2 with optax.contrib.prodigy, mechanize, cocob and dog: donating the state, the parameters or
        both raises `Attempt to donate a buffer which is also used by the same call` or its kin)."""
        call = source.value if type(source) is ast.Assign else source
        if type(call) is not ast.Call:
            return None
        received = {value_of(a).id for a in in_order(site.call) if type(value_of(a)) is ast.Name} - {site.variable}
        shared = next((n for a in in_order(call) for n in _preorder_names(value_of(a)) if n in received), None)
        if shared is None:
            return None
        code = _one_line(self.facts.positions.with_parentheses(call, self.binder.parents.get(call)))
        made = f"`{site.variable} = {code}`"
        error = "`Attempt to donate a buffer which is also used by the same call`"
        if self.summaries.init_keeps_params(call):
            return (
                f"!{made} keeps the arrays of `{shared}` in its state, and the call also receives `{shared}`: "
                f"donating either raises on the first call ({error}); to donate, make the state from copies: "
                f"`{site.variable} = jax.tree.map(jnp.copy, {code})`"
            )
        init = type(call.func) is ast.Attribute and call.func.attr == "init"
        return (
            f"{made} may hold the arrays of `{shared}`{' (optax.contrib.prodigy keeps them)' if init else ''}, and "
            f"the call also receives `{shared}`: then the first call raises ({error})"
        )

    def _passed_to_fresh(self, call: ast.Call, value: ast.AST) -> bool:
        """Whether `value`, an argument of `call`, ends in a result of new arrays only, by the library summaries:
        `optimizer.init(params)`, or `optimizer.init(eqx.filter(model, eqx.is_array))` through a call whose
        result holds the argument and is itself passed on."""
        parents = self.binder.parents
        for _ in range(4):
            held = self.summaries.holds_argument(call, value)
            if held is False:
                return True
            outer = _called_with(call, parents)
            if outer is not None and self._copies(outer) and outer.args[1] is call:
                return True  # `jax.tree.map(jnp.copy, optimizer.init(params))`: whatever init kept is copied
            if not (held and outer is not None):
                return False
            value, call = call, outer
        return False

    def _fresh(self, expr, depth: int = 0) -> bool:
        """Whether `expr` is a dict, list or tuple display whose leaves are all new arrays or numbers: arithmetic,
        `jax.numpy`/`jax.random` constructors, library calls that make new arrays."""
        kind = type(expr)
        if depth > 6 or kind not in (ast.Dict, ast.List, ast.Tuple):
            return False
        if kind is ast.Dict:
            if any(key is None for key in expr.keys):
                return False  # `**other`
            values = expr.values
        else:
            if any(type(e) is ast.Starred for e in expr.elts):
                return False  # `*rest`
            values = expr.elts
        qualified = self.binder.qualified
        for value in values:
            if _number(value) or type(value) in (ast.BinOp, ast.UnaryOp):
                continue
            if type(value) is ast.Call:
                callee = qualified(value.func) or ""
                if callee.startswith(FRESH_BUFFER_NAMESPACES) and callee not in ARRAY_CONVERSIONS:
                    continue
                if self._makes_like(value) or self.summaries.fresh_result(value):
                    continue
                return False
            if not self._fresh(value, depth + 1):
                return False
        return True

    def _jitted_called(self, call: ast.Call) -> Jitted | None:
        """The jitted function (module-level or nested) that `call` calls by its name, or None."""
        if type(call.func) is not ast.Name:
            return None
        found = [self._by_node.get(b.node) for b in self.binder.referents(call.func)]
        return found[0] if found and all(f is found[0] for f in found) else None

    def _read_problem(self, node: ast.Name, scope, variable: str) -> str | None:
        """None when this read of `variable` cannot keep its buffer alive past a donating call."""
        read = self.binder.reads[node]
        if read.scope is not scope:
            if assignments(self.binder, variable, read.scope):
                return None  # a parameter or local of that scope of the same name (LibCST may credit both)
            return f"`{variable}` is captured by a nested function or comprehension at line {node.lineno}"
        if self._after_every_call(node, scope):
            return None  # reads the last new value, which nothing donates any more
        parents = self.binder.parents
        parent = parents.get(node)
        call = _called_with(node, parents)
        if call is not None:
            if call in self._calls and node in self._donating:
                return None  # the donating call itself (`self.update(params, ...)`)
            called = self._jitted_called(call)
            if called is not None and (node in self._donating or _returns_fresh(called)):
                return None
            if self._makes_like(call):
                return None  # only the shape and dtype are read
            if self._passed_to_fresh(call, node):
                return None  # a library call whose result holds new arrays only (`tx.init(params)` of optax.adam)
            if self.binder.is_builtin(call.func, "print") or self.binder.is_builtin(call.func, "float"):
                return None
        kind = type(parent)
        if kind is ast.Attribute and parent.value is node and parent.attr in _METADATA_ATTRIBUTES:
            return None
        if kind in (ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign):
            return None
        if kind in (ast.Tuple, ast.List) and _is_store_target(parent, parents):
            return None
        small = _innermost_statement(node, parents)
        whole = isinstance(small, _COMPOUND)
        return (
            f"`{variable}` is also read at line {node.lineno} (`{self._first_line(small, whole=whole)}`), which may "
            "keep the old buffer alive"
        )

    def _first_line(self, statement: ast.stmt, whole: bool) -> str:
        """The first line of LibCST's code for `statement` stripped (`code_for(...).strip().splitlines()[0]`): of a
        line or compound statement (`whole`), with the comment lines before it that LibCST gives it and its
        decorators; of a small statement, its own code."""
        positions = self.facts.positions
        if not whole:
            return positions.segment(statement).strip().splitlines()[0]
        decorators = getattr(statement, "decorator_list", None)
        first = decorators[0].lineno if decorators else statement.lineno
        comment = self._leading_comment(statement, first)
        if comment is not None:
            return comment
        text = positions.text_line(first)
        if type(statement) is ast.If and self.facts.lines.is_elif(statement):
            text = text.lstrip()[2:]  # LibCST's code of an `elif` alone starts `if`
        return text.strip() if statement.end_lineno == first and not decorators else text.lstrip()

    def _leading_comment(self, statement: ast.stmt, first: int) -> str | None:
        """The topmost comment line of those LibCST puts in the statement's leading lines: the comment and blank
        lines right above it, less those indented past it that follow a block (that block's footer)."""
        positions = self.facts.positions
        indent = len(positions.text_line(first)) - len(positions.text_line(first).lstrip())
        found: list[str] = []
        line = first - 1
        while line >= 1:
            text = positions.text_line(line)
            stripped = text.strip()
            if stripped and not stripped.startswith("#"):
                break
            found.append(text)
            line -= 1
        if not found:
            return None
        found.reverse()
        if line >= 1 and self._ends_block(line, indent):
            while found and (not found[0].strip() or len(found[0]) - len(found[0].lstrip()) > indent):
                found.pop(0)
        comments = [t.strip() for t in found if t.strip()]
        return comments[0] if comments else None

    def _ends_block(self, line: int, indent: int) -> bool:
        """Whether the code line `line` above a statement indented `indent` lies deeper than it (a block ended)."""
        text = self.facts.positions.text_line(line)
        return len(text) - len(text.lstrip()) > indent

    def _after_every_call(self, node: ast.AST, scope) -> bool:
        """Whether `node` runs after every donating call in its scope has run for the last time: it lies in a
        later statement of the function's (or module's) own body than each of them."""
        owner = scope.node
        body = getattr(owner, "body", None)
        if type(body) is not list:
            return False
        read = self._top_line(node, owner, body)
        if read is None:
            return False
        scope_of = self.binder.scope_of
        for call in self._calls:
            if scope_of.get(call) is not scope:
                continue
            top = self._top_line(call, owner, body)
            if top is None or top >= read:
                return False
        return True

    def _top_line(self, node: ast.AST, owner: ast.AST, body: list[ast.stmt]) -> int | None:
        """Which of LibCST's statements of `owner`'s own body (lines, compound statements, one suite) holds
        `node`, by its index; None where it lies elsewhere (a decorator, a default)."""
        parents = self.binder.parents
        while node is not None:
            parent = parents.get(node)
            if parent is owner:
                break
            node = parent
        if node is None or not any(s is node for s in body):
            return None
        lines = self._line_index.get(id(owner))
        if lines is None:
            lines = self._line_index[id(owner)] = {
                id(s): index for index, (_, group) in enumerate(self.facts.lines.group(body)) for s in group
            }
        return lines.get(id(node))

    @cached_property
    def _line_index(self) -> dict[int, dict[int, int]]:
        return {}


# ---- helpers on the tree -----------------------------------------------------------------------------------


def _returns(function: ast.AST) -> list[ast.Return]:
    """The returns of the function's own code (not of nested functions or classes)."""
    found = []
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*_DEFS, ast.ClassDef, ast.Lambda)):
            continue
        if type(node) is ast.Return:
            found.append(node)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _arity(returns: list[ast.Return]) -> int | None:
    """0 for a single returned value, n for a tuple of n; None when returns differ or unpack."""
    arities = set()
    for ret in returns:
        value = ret.value
        if value is None:
            return None
        if type(value) is ast.Tuple:
            if any(type(e) is ast.Starred for e in value.elts):
                return None
            arities.add(len(value.elts))
        else:
            arities.add(0)
    return arities.pop() if len(arities) == 1 else None


def _returns_fresh(jitted: Jitted) -> bool:
    """Whether no return of the jitted function hands back one of its parameters unchanged (jit may then
    forward the input buffer as the output)."""
    arguments = jitted.function.args
    params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for ret in _returns(jitted.function):
        values = ret.value.elts if type(ret.value) is ast.Tuple else [ret.value]
        for value in values:
            value = value.value if type(value) is ast.Starred else value
            if value is None or (type(value) is ast.Name and value.id in params):
                return False
    return True


def _number(expr: ast.AST) -> bool:
    """An int or float literal (LibCST's Integer, Float; not a bool, not a complex)."""
    return type(expr) is ast.Constant and type(expr.value) in (int, float)


def _integer(expr: ast.AST) -> bool:
    return type(expr) is ast.Constant and type(expr.value) is int


def _spellings(argument: ast.AST) -> set[str]:
    """The names an argument's value spells as LibCST holds them (attributes', keywords', lambdas' parameters)."""
    return names_in(value_of(argument))


def _preorder_names(node: ast.AST) -> Iterator[str]:
    """The names `node` spells, in the order of LibCST's `walk` (analysis/syntax.py: a node, then its children
    from the last to the first)."""
    kind = type(node)
    if kind is ast.Name:
        yield node.id
        return
    if kind is ast.Attribute:
        yield node.attr
        yield from _preorder_names(node.value)
        return
    if kind is ast.keyword:
        yield from _preorder_names(node.value)
        if node.arg is not None:
            yield node.arg
        return
    if kind is ast.Call:
        children = [node.func, *in_order(node)]
    else:
        children = sorted(
            (c for c in ast.iter_child_nodes(node) if hasattr(c, "lineno")), key=lambda c: (c.lineno, c.col_offset)
        )
        if kind is ast.Lambda:
            children = [*(a for a in ast.walk(node.args) if type(a) is ast.arg), node.body]
    for child in reversed(children):
        if type(child) is ast.arg:
            yield child.arg
        else:
            yield from _preorder_names(child)


def _called_with(node: ast.AST, parents: dict) -> ast.Call | None:
    """The call that `node` is an argument of (`f(node)`, `f(k=node)`, `f(*node)`), else None."""
    parent = parents.get(node)
    kind = type(parent)
    if kind is ast.keyword or kind is ast.Starred:
        holder = parents.get(parent)
        if type(holder) is ast.Call and (kind is ast.keyword or any(a is parent for a in holder.args)):
            return holder
        return None
    if kind is ast.Call and parent.func is not node:
        return parent
    return None


def _block_of(statement: ast.stmt, parent: ast.AST) -> list[ast.stmt] | None:
    """The block of `parent` that holds `statement` (a `body`, `orelse`, `finalbody`, a handler's or case's)."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if type(block) is list and any(s is statement for s in block):
            return block
    return None


def _innermost_statement(node: ast.AST, parents: dict) -> ast.stmt | None:
    while node is not None and not isinstance(node, ast.stmt):
        node = parents.get(node)
    return node


def _is_store_target(node: ast.AST, parents: dict) -> bool:
    while type(node) in (ast.Tuple, ast.List):
        parent = parents.get(node)
        if type(parent) is ast.Assign and any(t is node for t in parent.targets):
            return True
        if type(parent) in (ast.For, ast.AsyncFor, ast.comprehension) and parent.target is node:
            return True
        node = parent
    return False


def _argument(site: Site) -> ast.expr:
    for written in in_order(site.call):
        value = value_of(written)
        if type(value) is ast.Name and value.id == site.variable:
            return value
        if site.variable.startswith("self.") and _self_attribute(value) == site.variable[5:]:
            return value
    raise AssertionError("a site always passes its variable")


def _one_line(code: str) -> str:
    """The first line of `code`, with `...` where more followed (for a call quoted in a message)."""
    lines = code.strip().splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "")


def _self_attribute(expr) -> str | None:
    """`attr` for the expression `self.attr`, else None."""
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == "self":
        return expr.attr
    return None


def _position(target: ast.expr, name: str) -> int | None:
    """0 when the target is `name`; n when `name` is its n-th element; None otherwise."""
    if type(target) is ast.Name:
        return 0 if target.id == name else None
    if type(target) in (ast.Tuple, ast.List) and not any(type(e) is ast.Starred for e in target.elts):
        hits = [i for i, e in enumerate(target.elts) if type(e) is ast.Name and e.id == name]
        return hits[0] + 1 if len(hits) == 1 else None
    return None


def _unpacked_at(assign: ast.Assign, variable: str) -> int | None:
    """Which element of the tuple `assign` unpacks binds `variable` (`params, state = ...`: 0 for params); None
    when the result is not unpacked into names."""
    if len(assign.targets) != 1 or type(assign.targets[0]) not in (ast.Tuple, ast.List):
        return None
    elements = assign.targets[0].elts
    if any(type(e) is not ast.Name for e in elements):
        return None
    names = [e.id for e in elements]
    return names.index(variable) if names.count(variable) == 1 else None
