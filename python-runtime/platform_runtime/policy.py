"""What user code may import and touch. Shared by the static checker and the runtime sandbox,
so that both layers enforce the same rules (SPEC.md part 2, "Agent source restrictions")."""

from __future__ import annotations

# Modules user source may import. An entry also allows its submodules ("strands" allows
# "strands.models.bedrock"; "urllib.parse" does NOT allow "urllib.request").
ALLOWED_MODULES: tuple[str, ...] = (
    # The agent framework and its model classes (strands.models.*), plus its tool package.
    "strands",
    "strands_tools",
    # Strands connects MCP servers with `MCPClient(lambda: streamablehttp_client(url))`; that
    # factory lives in the `mcp` package. Only the HTTP client transports are allowed (the stdio
    # transport spawns processes and stays out).
    "mcp.client.streamable_http",
    "mcp.client.sse",
    # The standard modules listed in the spec.
    "json",
    "datetime",
    "time",
    "uuid",
    "typing",
    "dataclasses",
    "collections",
    "itertools",
    "functools",
    "re",
    "math",
    "random",
    "base64",
    "hashlib",
    "urllib.parse",
    # AWS SDK (model calls go through it).
    "boto3",
    "botocore",
)

# Names that may be imported from a module that is itself not allowed: `from asyncio import
# Queue` only. A voice agent's `receive()` waits for what `send()` was given, which needs a queue
# or an event of the running loop; the rest of asyncio (subprocesses, raw sockets, the loop
# itself) stays out, and `import asyncio` is still refused.
ALLOWED_NAMES_FROM: dict[str, frozenset[str]] = {
    "asyncio": frozenset({"Queue", "QueueEmpty", "Event", "Lock", "sleep", "wait_for",
                          "TimeoutError", "CancelledError"}),
}


def name_import_allowed(module: str, name: str) -> bool:
    """True when `from module import name` is allowed although `module` itself is not."""
    names = ALLOWED_NAMES_FROM.get(module) if isinstance(module, str) else None
    return names is not None and isinstance(name, str) and name in names


# `from __future__ import annotations` is a compiler directive, not a module use.
ALWAYS_ALLOWED_MODULES = frozenset({"__future__"})


def module_allowed(name: str) -> bool:
    """True when `name` (a dotted absolute module name) may be imported by user code."""
    if not isinstance(name, str) or not name:
        return False
    if name in ALWAYS_ALLOWED_MODULES:
        return True
    parts = name.split(".")
    # Private submodules (re._parser, json._something) are never allowed.
    if any(not p or p.startswith("_") for p in parts):
        return False
    for entry in ALLOWED_MODULES:
        if name == entry or name.startswith(entry + "."):
            return True
    return False


# Builtins user code may not name at all. They are also removed from the builtins the
# sandbox hands to user code, so a reference that slipped past the checker is a NameError.
DENIED_BUILTINS = frozenset({
    "eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "help",
    "memoryview", "globals", "locals", "vars", "dir", "exit", "quit", "copyright",
    "credits", "license", "execfile", "reload", "__build_class__", "__loader__", "__spec__",
})

# Builtins that are fine when called in a checked form only (see checker.visit_Call):
# getattr/setattr/delattr with a literal, allowed attribute name; type() with one argument.
CALL_FORM_BUILTINS = frozenset({"getattr", "setattr", "delattr"})

# Dunder names user code may read or bind. Everything else that starts and ends with "__"
# (__builtins__, __import__, __loader__, __spec__, __file__ ...) is refused.
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__doc__", "__debug__"})

# Attribute names refused in addition to every name starting with "_".
DENIED_ATTRIBUTES = frozenset({
    # Frames, code objects and tracebacks: the generator/coroutine frame escapes
    # (RestrictedPython CVE-2023-37271 and friends) walk gi_frame -> f_back -> f_globals.
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running", "cr_suspended",
    "ag_frame", "ag_code", "ag_await", "ag_running", "ag_suspended",
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_lasti",
    "f_lineno", "f_trace_lines", "f_trace_opcodes",
    "tb_frame", "tb_next", "tb_lasti", "tb_lineno",
    "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_freevars",
    "co_cellvars", "co_lnotab", "co_linetable", "co_exceptiontable",
    "func_globals", "func_code", "func_closure", "func_defaults", "func_dict",
    "im_func", "im_self", "im_class", "cell_contents",
    # Class hierarchy walking (the __subclasses__ family without underscores).
    "mro",
    # Real builtins and module handles that lead straight out of the Python-level sandbox.
    "builtins", "bltns", "eval", "exec", "exec_", "execfile", "os", "sys", "subprocess", "socket",
    "importlib", "ctypes", "pickle", "marshal", "posix", "nt", "shutil", "gc", "inspect",
    "modules", "load_module", "exec_module",
    # Process creation entry points, in case a module handle slips through.
    "system", "popen", "fork", "forkpty", "fork_exec", "spawn", "spawnv", "spawnve",
    "spawnl", "spawnle", "spawnlp", "spawnvp", "posix_spawn", "posix_spawnp",
    "execv", "execve", "execl", "execle", "execlp", "execvp", "execvpe",
    # Computed attribute access and introspection helpers. string.Formatter().get_field walks
    # "0.__init__.__globals__" by getattr from library code, where the "_" rule cannot see it.
    "attrgetter", "methodcaller", "getattr_static", "currentframe", "getframeinfo",
    "getouterframes", "getinnerframes", "settrace", "setprofile", "addaudithook",
    "Formatter", "get_field", "vformat", "walk_tb", "walk_stack",
    # Signals by process handle: no audit event exists for these (seccomp refuses them too).
    "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    # typing evaluates annotation strings with eval(): a second, unchecked code path.
    "get_type_hints", "ForwardRef", "evaluate_forward_ref", "get_annotations",
    # The audit hook parses code compiled at run time with `ast`: a module handle would let its
    # functions be replaced (`x.ast.iter_fields = ...`) and the check see nothing.
    "ast",
    # enum.global_enum writes into sys.modules[cls.__module__] (the sandbox limits it as well).
    "global_enum",
})


# Dunder attributes that are fine to read: they give a string or a method that only does what
# the object's own syntax already does (`super().__init__(...)`, `type(e).__name__`). None of
# them leads anywhere new without a second, refused step (__globals__, __class__, __dict__...).
SAFE_DUNDER_ATTRIBUTES = frozenset({
    "__init__", "__post_init__", "__name__", "__qualname__", "__module__", "__doc__",
    "__enter__", "__exit__", "__aenter__", "__aexit__", "__iter__", "__next__", "__aiter__",
    "__anext__", "__len__", "__contains__", "__getitem__", "__setitem__", "__delitem__",
    "__repr__", "__str__", "__format__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__hash__", "__bool__", "__call__",
})


# Attribute reads that hand out a frame. CPython raises the `object.__getattr__` audit event for
# these (and for __code__, f_code, gi_code, cr_code, ag_code, __defaults__), but not for what a
# frame leads to (f_back, f_globals, f_locals, f_builtins) nor for __globals__ or __closure__:
# the sandbox has to stop the first step, wherever the read happens near user code.
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})


def attribute_allowed(name: str) -> bool:
    """True when user code may read or write the attribute `name`."""
    if not isinstance(name, str):
        return False
    if name in SAFE_DUNDER_ATTRIBUTES:
        return True
    return not name.startswith("_") and name not in DENIED_ATTRIBUTES


# The file name every piece of user code is compiled under. The sandbox recognises user
# frames by it (co_filename), so it must not look like a real path.
USER_FILENAME = "<user-source>"
