"""Static checker for user agent and action source (SPEC.md part 2, agent source restrictions).

Used by the platform at create and update (every violation is listed with its line in the
400 INVALID_PARAMETERS), by the runtime server before each run, and on its own:

    python3 -m platform_runtime.checker FILE      # or "-" / no argument: read stdin

prints {"ok": bool, "violations": [{"line", "col", "message"}]} and exits 0 (ok) or 1
(violations); 2 when the file cannot be read. Lines and columns are 1-based.

The checker works on the AST, so identifiers are already NFKC-normalised by the parser
(a fullwidth "ｅｖａｌ" is seen as "eval") and comments or strings cannot hide anything.
It is the first of several layers: it refuses what is clearly an escape attempt and keeps
the Python-level rules enforceable; file, process and network access are enforced again at
run time by the sandbox, where they can be enforced completely (see README.md).

Decisions about syntax that is harmless by itself (the nested expressions are checked):
- decorators: a decorator is an expression applied with a call; it is checked like any other
  expression, so `@exec` or `@getattr` is refused by the name rules, `@functools.cache` passes.
- metaclass= and other class keywords: plain expressions, checked as such. A metaclass only
  receives the class name, bases and namespace the user wrote anyway.
- `del`: deleting a name or item gives no new capability; attribute targets go through the
  attribute rules (`del x.__class__` is refused).
- `global` / `nonlocal`: only change scoping; the names are checked (no `global __builtins__`).
- `try/except*` (PEP 654): the handler bodies and the `as` name are ordinary code and are
  checked like every other node (RestrictedPython's bypass came from not visiting TryStar).
- `match`: class patterns read attributes by keyword (`case C(__class__=x)`), so those keyword
  names go through the attribute rules.
- `type(x)` with one argument is allowed (its result cannot be walked without a refused
  attribute); the three-argument form and starred calls are refused. `type` as a value
  (`isinstance(c, type)`, `class M(type)`) is allowed.
- dunder method definitions (`def __init__`) are allowed inside class bodies only; the special
  methods run with the objects the user already holds.
- string annotations are parsed and checked as expressions, because typing.get_type_hints and
  friends evaluate them with eval().
- str.format / format_map read attributes and items named inside the template
  ("{0.__class__}"), out of reach of the AST. They are allowed only on a literal template, or on
  a module-level name bound exactly once to a literal template, whose fields use neither "."
  nor "[". f-strings are fine: their expressions are part of the AST and checked.
  `getattr(x, "format")` would hand out the same method without a template to check: refused.
- functools.wraps / update_wrapper copy the attributes named in `assigned` and `updated` with
  getattr, from library code: a call that chooses them (`assigned=("__globals__",)`) is a
  computed getattr and is refused; the default form is fine.
"""

from __future__ import annotations

import ast
import json
import string
import sys
from dataclasses import asdict, dataclass

from . import policy


@dataclass(frozen=True, order=True)
class Violation:
    line: int
    col: int
    message: str


_FORMATTER = string.Formatter()

# functools.wraps(wrapped) and update_wrapper(wrapper, wrapped): positional arguments beyond
# these name the attributes to copy.
_WRAPPER_POSITIONAL = {"wraps": 1, "update_wrapper": 2}


def _format_fields_safe(template: str) -> str | None:
    """Returns None when the template's replacement fields are plain names or positions,
    otherwise a reason. Format specs may nest fields; they are checked recursively."""
    try:
        parts = list(_FORMATTER.parse(template))
    except (ValueError, TypeError) as exc:
        return f"malformed format string ({exc})"
    for _literal, field, spec, _conversion in parts:
        if field is not None and ("." in field or "[" in field):
            return f"format field '{{{field}}}' reads an attribute or item"
        if spec:
            inner = _format_fields_safe(spec)
            if inner:
                return inner
    return None


class _Checker(ast.NodeVisitor):
    def __init__(self, line_offset: int = 0, col_offset: int = 0,
                 literal_names: dict[str, str] | None = None) -> None:
        self.violations: list[Violation] = []
        self._line_offset = line_offset
        self._col_offset = col_offset
        self._ok_names: set[int] = set()  # Name nodes already validated as a call target
        self._class_depth = 0  # >0 while directly inside a class body
        self._literal_names = literal_names or {}

    # -- reporting -------------------------------------------------------------------
    def report(self, node: ast.AST, message: str) -> None:
        line = getattr(node, "lineno", 1) or 1
        col = (getattr(node, "col_offset", 0) or 0) + 1
        if self._line_offset:
            # Nested parse of a string annotation: point at the string itself.
            line, col = self._line_offset, self._col_offset + 1
        self.violations.append(Violation(line, col, message))

    # -- names -----------------------------------------------------------------------
    def _check_binding_name(self, node: ast.AST, name: str | None, what: str) -> None:
        if name is None:
            return
        if _is_dunder(name) and name not in policy.ALLOWED_DUNDER_NAMES:
            self.report(node, f"{what} '{name}' is not allowed (dunder names are reserved)")

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if id(node) in self._ok_names:
            return
        if name in policy.DENIED_BUILTINS:
            self.report(node, f"use of '{name}' is not allowed")
        elif name in policy.CALL_FORM_BUILTINS:
            self.report(node, f"'{name}' may only be called directly with a literal attribute name")
        elif _is_dunder(name) and name not in policy.ALLOWED_DUNDER_NAMES:
            self.report(node, f"name '{name}' is not allowed (dunder names are reserved)")

    # -- attributes ------------------------------------------------------------------
    def _check_attr_name(self, node: ast.AST, attr: str) -> bool:
        if policy.attribute_allowed(attr):
            return True
        if attr.startswith("_"):
            self.report(node, f"access to attribute '{attr}' is not allowed "
                              "(names starting with '_' are reserved)")
            return False
        if attr in policy.DENIED_ATTRIBUTES:
            self.report(node, f"access to attribute '{attr}' is not allowed")
            return False
        return True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        # Reading `.format` hands out a bound str.format (called now or later), so every read
        # is checked; storing an attribute that happens to be called `format` is harmless.
        if (self._check_attr_name(node, node.attr) and node.attr in ("format", "format_map")
                and isinstance(node.ctx, ast.Load)):
            self._check_format_receiver(node)
        self.visit(node.value)

    def _check_format_receiver(self, node: ast.Attribute) -> None:
        receiver = node.value
        template: str | None = None
        if isinstance(receiver, ast.Constant) and isinstance(receiver.value, str):
            template = receiver.value
        elif isinstance(receiver, ast.Name) and receiver.id in self._literal_names:
            template = self._literal_names[receiver.id]
        if template is None:
            self.report(node, f"'.{node.attr}' is only allowed on a literal template "
                              "(use an f-string instead)")
            return
        reason = _format_fields_safe(template)
        if reason:
            self.report(node, f"'.{node.attr}' template not allowed: {reason}")

    # -- calls -----------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in policy.CALL_FORM_BUILTINS:
                self._check_attr_call(node, func.id)
                self._ok_names.add(id(func))
            elif func.id == "type":
                if len(node.args) != 1 or node.keywords or any(
                        isinstance(a, ast.Starred) for a in node.args):
                    self.report(node, "type() is only allowed with one argument")
        self._check_wrapper_call(node)
        self.generic_visit(node)

    def _check_wrapper_call(self, node: ast.Call) -> None:
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else None)
        positional = _WRAPPER_POSITIONAL.get(name)
        if positional is None:
            return
        chooses = (len(node.args) > positional
                   or any(isinstance(a, ast.Starred) for a in node.args)
                   or any(k.arg in (None, "assigned", "updated") for k in node.keywords))
        if chooses:
            self.report(node, f"{name}() may not choose the attributes it copies "
                              "(assigned/updated read attributes by name)")

    def _check_attr_call(self, node: ast.Call, fname: str) -> None:
        expected = {"getattr": (2, 3), "setattr": (3,), "delattr": (2,)}[fname]
        args = node.args
        if node.keywords or any(isinstance(a, ast.Starred) for a in args) or len(args) not in expected:
            self.report(node, f"{fname}() must be called with plain arguments")
            return
        name_arg = args[1]
        if not (isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str)):
            self.report(node, f"{fname}() needs a literal attribute name (computed names are not allowed)")
            return
        if self._check_attr_name(node, name_arg.value) and fname == "getattr" and (
                name_arg.value in ("format", "format_map")):
            self.report(node, f"getattr(..., '{name_arg.value}') is not allowed "
                              "(use an f-string or a literal template)")

    def visit_keyword(self, node: ast.keyword) -> None:
        self._check_binding_name(node, node.arg, "keyword argument")
        self.visit(node.value)

    # -- imports ---------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not policy.module_allowed(alias.name):
                self.report(node, f"import of '{alias.name}' is not allowed")
            self._check_binding_name(node, alias.asname, "import alias")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.report(node, "relative imports are not allowed")
            return
        for alias in node.names:
            if alias.name == "*":
                self.report(node, f"'from {module} import *' is not allowed")
                continue
            if not (policy.module_allowed(module) or policy.module_allowed(f"{module}.{alias.name}")
                    or policy.name_import_allowed(module, alias.name)):
                parent_of_allowed = any(e.startswith(module + ".") for e in policy.ALLOWED_MODULES)
                shown = f"{module}.{alias.name}" if parent_of_allowed else module
                self.report(node, f"import of '{shown}' is not allowed")
                continue
            if module == "__future__":
                continue
            if not policy.attribute_allowed(alias.name):
                self.report(node, f"importing '{alias.name}' from '{module}' is not allowed")
            self._check_binding_name(node, alias.asname, "import alias")

    # -- definitions -----------------------------------------------------------------
    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if _is_dunder(node.name) and self._class_depth == 0:
            self.report(node, f"function name '{node.name}' is not allowed outside a class body")
        for deco in node.decorator_list:
            self.visit(deco)
        self._visit_arguments(node.args)
        if node.returns is not None:
            self._visit_annotation(node.returns)
        for tp in getattr(node, "type_params", None) or []:
            self.visit(tp)
        saved, self._class_depth = self._class_depth, 0
        for stmt in node.body:
            self.visit(stmt)
        self._class_depth = saved

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_arguments(node.args)
        saved, self._class_depth = self._class_depth, 0
        self.visit(node.body)
        self._class_depth = saved

    def _visit_arguments(self, args: ast.arguments) -> None:
        every = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for a in every:
            self._check_binding_name(a, a.arg, "parameter name")
            if a.annotation is not None:
                self._visit_annotation(a.annotation)
        for default in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._check_binding_name(node, node.name, "class name")
        for deco in node.decorator_list:
            self.visit(deco)
        for base in node.bases:
            self.visit(base)
        for kw in node.keywords:
            self.visit(kw)
        for tp in getattr(node, "type_params", None) or []:
            self.visit(tp)
        saved, self._class_depth = self._class_depth, 1
        for stmt in node.body:
            self.visit(stmt)
        self._class_depth = saved

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        self._visit_annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def _visit_annotation(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self._check_string_expression(node, node.value)
        else:
            # Nested string annotations, e.g. list["X"], are checked too; the values of
            # Literal["open", "closed"] are data, not expressions.
            for sub in _annotation_strings(node):
                self._check_string_expression(sub, sub.value)
            self.visit(node)

    def _check_string_expression(self, node: ast.AST, text: str) -> None:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            return  # not an expression, typing treats it as a plain string
        inner = _Checker(line_offset=getattr(node, "lineno", 1),
                         col_offset=getattr(node, "col_offset", 0),
                         literal_names=self._literal_names)
        inner.visit(tree)
        for v in inner.violations:
            self.violations.append(Violation(v.line, v.col, f"in string annotation: {v.message}"))

    # -- other binding sites ---------------------------------------------------------
    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._check_binding_name(node, node.name, "exception name")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self._check_binding_name(node, name, "global name")

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        for name in node.names:
            self._check_binding_name(node, name, "nonlocal name")

    def visit_MatchClass(self, node: ast.AST) -> None:
        for attr in node.kwd_attrs:
            self._check_attr_name(node, attr)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.AST) -> None:
        self._check_binding_name(node, node.name, "pattern name")
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.AST) -> None:
        self._check_binding_name(node, node.name, "pattern name")

    def visit_MatchMapping(self, node: ast.AST) -> None:
        self._check_binding_name(node, node.rest, "pattern name")
        self.generic_visit(node)


def _annotation_strings(node: ast.AST):
    """String constants inside an annotation expression, except the arguments of Literal[...]."""
    if isinstance(node, ast.Subscript):
        target = node.value
        name = target.id if isinstance(target, ast.Name) else (
            target.attr if isinstance(target, ast.Attribute) else "")
        if name == "Literal":
            return
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _annotation_strings(child)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _literal_template_names(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound exactly once anywhere in the source, to a string literal.
    Such a name can serve as a `.format` template (PROMPT = "Hello {name}")."""
    bindings: dict[str, int] = {}

    def bind(name: str) -> None:
        bindings[name] = bindings.get(name, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bind(node.id)
        elif isinstance(node, ast.arg):
            bind(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
        elif isinstance(node, ast.alias):
            bind((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name)
                bind(name)  # a rebinding from another scope: never a constant
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name)
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            bind(node.name)
        elif type(node).__name__ == "MatchMapping" and getattr(node, "rest", None):
            bind(node.rest)
    result: dict[str, str] = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
                and bindings.get(stmt.targets[0].id) == 1):
            result[stmt.targets[0].id] = stmt.value.value
    return result


def check_source(source: str) -> list[Violation]:
    """All violations in `source`, sorted by position. An empty list means the source passes."""
    if not isinstance(source, str):
        return [Violation(1, 1, "source must be a string")]
    try:
        tree = ast.parse(source, filename=policy.USER_FILENAME, mode="exec")
    except SyntaxError as exc:
        return [Violation(exc.lineno or 1, exc.offset or 1, f"syntax error: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [Violation(1, 1, f"source cannot be parsed: {type(exc).__name__}")]
    checker = _Checker(literal_names=_literal_template_names(tree))
    try:
        checker.visit(tree)
    except RecursionError:
        return [Violation(1, 1, "source is nested too deeply")]
    return sorted(set(checker.violations))


def check_expression(text: str) -> list[Violation]:
    """Checks a single expression (a string annotation evaluated at run time)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        return [Violation(exc.lineno or 1, exc.offset or 1, f"syntax error: {exc.msg}")]
    checker = _Checker()
    checker.visit(tree)
    return sorted(set(checker.violations))


class _DynamicCodeChecker(_Checker):
    """The rules for text a library compiles while the sandbox is on, which are stricter than
    for the agent's source: that code runs with the builtins of the library frame that
    evaluates it (the real ones, whose __import__ knows no allowlist) and often in a library
    module's globals, where `sys` or `system` is a plain name."""

    def visit_Name(self, node: ast.Name) -> None:
        super().visit_Name(node)
        if id(node) not in self._ok_names and not policy.attribute_allowed(node.id):
            self.report(node, f"name '{node.id}' is not allowed in code compiled at run time")

    def visit_Import(self, node: ast.AST) -> None:
        self.report(node, "imports are not allowed in code compiled at run time")

    visit_ImportFrom = visit_Import


def check_dynamic_code(source: bytes | str, parse=ast.parse) -> list[Violation]:
    """Checks text that library code compiles at run time (an annotation typing evaluates, a
    template with a field name in it): the exact characters the compiler received, judged as
    user code. Raises SyntaxError when they parse neither as statements nor as an expression,
    so that what cannot be checked is not compiled. `parse` is passed in by the sandbox, which
    captured it before user code ran."""
    tree = None
    for mode in ("exec", "eval"):  # " x" is an expression but not a statement
        try:
            tree = parse(source, mode=mode)
            break
        except SyntaxError:
            continue
    if tree is None:
        raise SyntaxError("code compiled at run time does not parse")
    literal_names = _literal_template_names(tree) if isinstance(tree, ast.Module) else {}
    checker = _DynamicCodeChecker(literal_names=literal_names)
    checker.visit(tree)
    return sorted(set(checker.violations))


def result_json(violations: list[Violation]) -> dict:
    return {"ok": not violations, "violations": [asdict(v) for v in violations]}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        sys.stderr.write("usage: python -m platform_runtime.checker [FILE | -]\n")
        return 2
    try:
        if not args or args[0] == "-":
            source = sys.stdin.read()
        else:
            with open(args[0], encoding="utf-8") as fh:
                source = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"cannot read source: {exc}\n")
        return 2
    violations = check_source(source)
    sys.stdout.write(json.dumps(result_json(violations)) + "\n")
    return 0 if not violations else 1


if __name__ == "__main__":
    sys.exit(main())
