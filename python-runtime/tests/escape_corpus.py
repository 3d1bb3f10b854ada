"""Escape attempts against the runtime, as data.

Each entry:
  id       short name
  ref      where the technique comes from
  expect   "static": the checker must refuse the source;
           "runtime": the source passes the checker (it only uses allowed names) and the
           sandboxed child must stop it
  stage    for "runtime" entries: the layer expected to stop it at run time. For "static"
           entries, when present, the same source is also run on a server started with
           --no-static-check, to show the runtime layers stop it even if the checker missed it
  reason   a fragment the run-time error message must contain (the reason, not just the layer)
  options  extra /invoke fields (timeoutMs, memoryMb, allowHosts)
  needs    "seccomp" or "boto3" when the entry only applies where that exists

Every source is an action: a handler that returns body "ESCAPED" only if the attempt worked.
The event carries "scratch", a path under a temporary directory the test owns, and "runtimeFile",
a path inside the runtime directory (readable, never written).
"""

from textwrap import dedent

ESCAPED = 'return {"statusCode": 200, "body": "ESCAPED"}'


def _h(body: str, prelude: str = "") -> str:
    """A handler whose body is `body` followed by the ESCAPED return."""
    lines = dedent(body).strip("\n").splitlines()
    inner = "\n".join("    " + line for line in lines)
    return f"{dedent(prelude).strip()}\n\n\ndef handler(event, context):\n{inner}\n    {ESCAPED}\n"


FORK_EXEC = (
    'r, w = typing.sys.modules["os"].pipe()\n'
    'typing.sys.modules["_posixsubprocess"].fork_exec([b"/bin/true"], [b"/bin/true"], True, (w,), '
    'None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1, None, True)'
)

CORPUS = [
    # --- imports -------------------------------------------------------------------------
    dict(id="import-os", reason="import of 'os'", ref="basic", expect="static", stage="import guard",
         source=_h('os.system("true")', "import os")),
    dict(id="import-subprocess", ref="basic", expect="static", stage="import guard",
         source=_h('subprocess.run(["true"])', "import subprocess")),
    dict(id="from-os-import-system", ref="basic", expect="static", stage="import guard",
         source=_h('system("true")', "from os import system")),
    dict(id="importlib", ref="RestrictedPython docs: importlib", expect="static", stage="import guard",
         source=_h('importlib.import_module("os").system("true")', "import importlib")),
    dict(id="dunder-import", ref="__import__ builtin", expect="static", stage="import guard",
         source=_h('__import__("os").system("true")')),
    dict(id="ctypes", ref="ctypes", expect="static", stage="import guard",
         source=_h('ctypes.CDLL(None).system(b"true")', "import ctypes")),
    dict(id="pickle", ref="pickle deserialisation", expect="static", stage="import guard",
         source=_h('pickle.loads(b"cos\\nsystem\\n(S\'true\'\\ntR.")', "import pickle")),
    dict(id="marshal", ref="marshal code loading", expect="static", stage="import guard",
         source=_h('marshal.loads(b"")', "import marshal")),
    dict(id="relative-import", ref="relative import", expect="static", stage="import guard",
         source=_h("pass", "from . import secrets")),
    dict(id="star-import", ref="import *", expect="static", stage="import guard",
         source=_h("pass", "from json import *")),
    dict(id="private-module-alias", reason="running shell commands", ref="private module aliases (random._os)", expect="static",
         stage="audit hook", source=_h('random._os.system("true")', "import random")),
    dict(id="urllib-request-through-parse", reason="'urllib.request'", ref="package attribute after import urllib.parse",
         expect="runtime", stage="import guard",
         source=_h('urllib.request.urlopen("file:///etc/passwd").read()', "import urllib.parse")),
    # --- dangerous builtins ------------------------------------------------------------------
    dict(id="eval", ref="eval", expect="static", stage="restricted builtins",
         source=_h('eval("1 + 1")')),
    dict(id="exec", ref="exec", expect="static", stage="restricted builtins",
         source=_h('exec("x = 1")')),
    dict(id="compile", ref="compile", expect="static", stage="restricted builtins",
         source=_h('compile("1", "x", "eval")')),
    dict(id="open-read", ref="open", expect="static", stage="restricted builtins",
         source=_h('open("/etc/passwd").read()')),
    dict(id="breakpoint", ref="breakpoint -> pdb", expect="static", stage="restricted builtins",
         source=_h("breakpoint()")),
    dict(id="vars", ref="vars() namespace access", expect="static", stage="restricted builtins",
         source=_h("vars(handler)")),
    dict(id="globals", ref="globals()['__builtins__']", expect="static", stage="restricted builtins",
         source=_h('globals()["__builtins__"]')),
    dict(id="builtins-name", ref="__builtins__ lookup", expect="static",
         source=_h('__builtins__["eval"]("1")')),
    dict(id="fullwidth-eval", ref="NFKC identifier normalisation", expect="static",
         stage="restricted builtins", source=_h('ｅｖａｌ("1")')),
    dict(id="type-three-args", ref="type(name, bases, dict)", expect="static",
         source=_h('type("X", (), {"y": 1})')),
    # --- attribute walks -------------------------------------------------------------------
    dict(id="subclasses-walk", reason="running shell commands", ref="().__class__.__base__.__subclasses__() (classic)", expect="static",
         stage="audit hook",
         source=_h('''
             for cls in ().__class__.__base__.__subclasses__():
                 if cls.__name__ == "_wrap_close":
                     cls.__init__.__globals__["system"]("true")
                     return {"statusCode": 200, "body": "ESCAPED"}
             return {"statusCode": 200, "body": "gadget not found"}''')),
    dict(id="mro-walk", ref="__mro__ walk", expect="static",
         source=_h("[].__class__.__mro__[-1].__subclasses__()")),
    dict(id="mro-method", ref="mro() without underscores", expect="static",
         source=_h("type([]).mro()[-1]")),
    dict(id="generator-frame", reason="'gi_frame'", ref="RestrictedPython CVE-2023-37271 (gi_frame)", expect="static",
         stage="audit hook",
         source=_h('''
             gen = (x for x in [1])
             gen.gi_frame.f_back.f_globals["__builtins__"]''')),
    dict(id="coroutine-frame", reason="'cr_frame'", ref="CVE-2023-37271 (cr_frame)", expect="static", stage="audit hook",
         source=_h('''
             coro = probe()
             coro.cr_frame.f_globals''', "async def probe():\n    return 1")),
    dict(id="async-generator-frame", reason="'ag_frame'", ref="CVE-2023-37271 (ag_frame)", expect="static",
         stage="audit hook",
         source=_h("agen().ag_frame.f_back", "async def agen():\n    yield 1")),
    dict(id="traceback-frame", reason="'tb_frame'", ref="tb_frame from a caught exception", expect="static",
         stage="audit hook",
         source=_h('''
             try:
                 1 / 0
             except ZeroDivisionError as exc:
                 exc.__traceback__.tb_frame.f_back.f_globals''')),
    dict(id="function-globals", reason="running shell commands", ref="__globals__ of a runtime method", expect="static",
         stage="audit hook",
         source=_h('context.get_remaining_time_in_millis.__func__.__globals__["os"].system("true")')),
    dict(id="function-code", reason="'__code__'", ref="__code__ / co_consts", expect="static", stage="audit hook",
         source=_h("handler.__code__.co_consts")),
    dict(id="except-star", reason="'tb_frame'", ref="RestrictedPython CVE-2025-22153 (try/except*)", expect="static",
         stage="audit hook",
         source=_h('''
             try:
                 raise ExceptionGroup("g", [ValueError("x")])
             except* ValueError as group:
                 group.__traceback__.tb_frame.f_back.f_globals''')),
    dict(id="match-class-attribute", ref="match/case keyword attribute lookup", expect="static",
         source=_h('''
             match handler:
                 case object(__globals__=g):
                     g["__builtins__"]''')),
    dict(id="sys-modules", reason="running shell commands", ref="sys.modules cache", expect="static", stage="audit hook",
         source=_h('typing.sys.modules["os"].system("true")', "import typing")),
    dict(id="sys-getframe", reason="frame access", ref="sys._getframe", expect="static", stage="audit hook",
         source=_h("typing.sys._getframe(0).f_back.f_globals", "import typing")),
    dict(id="inspect-currentframe", reason="frame access", ref="inspect.currentframe via dataclasses.inspect",
         expect="static", stage="audit hook",
         source=_h("dataclasses.inspect.currentframe().f_back.f_globals", "import dataclasses")),
    dict(id="settrace", reason="tracing", ref="sys.settrace hands out frames", expect="static", stage="audit hook",
         source=_h("typing.sys.settrace(lambda *a: None)", "import typing")),
    dict(id="addaudithook", ref="adding an audit hook", expect="static",
         stage="contained ('hook not installed')",
         source=_h('''
             seen = []
             typing.sys.addaudithook(lambda name, args: seen.append(name))
             typing.sys.audit("corpus.probe")
             if not seen:
                 return {"statusCode": 403, "body": "hook not installed"}''', "import typing")),
    # --- format strings --------------------------------------------------------------------
    dict(id="format-attribute", ref="RestrictedPython CVE-2023-41039 (str.format)", expect="static",
         source=_h('"{0.__class__.__base__.__subclasses__}".format(1)')),
    dict(id="format-map", ref="CVE-2023-41039 (format_map)", expect="static",
         source=_h('"{f.__globals__}".format_map({"f": handler})')),
    dict(id="format-computed-template", ref="template built at run time", expect="static",
         source=_h('template = "{0." + "__class__}"\ntemplate.format(1)')),
    dict(id="format-unbound", ref="str.format(template, obj)", expect="static",
         source=_h('str.format("{0.__class__}", 1)')),
    dict(id="format-nested-spec", ref="field inside a format spec", expect="static",
         source=_h('"{0:{1.__class__}}".format(1, 2)')),
    # --- computed attribute access -----------------------------------------------------------
    dict(id="getattr-computed", reason="'__class__'", ref="computed getattr name", expect="static", stage="guarded builtins",
         source=_h('getattr(1, "__cla" + "ss__")')),
    dict(id="getattr-literal-dunder", ref="getattr with a dunder literal", expect="static",
         stage="guarded builtins", source=_h('getattr(handler, "__globals__")')),
    dict(id="getattr-as-value", ref="getattr passed around", expect="static",
         stage="guarded builtins", source=_h('g = getattr\ng(1, "__class__")')),
    dict(id="reduce-getattr", ref="functools.reduce(getattr, ...)", expect="static",
         stage="guarded builtins",
         source=_h('functools.reduce(getattr, ["__class__", "__base__"], 1)', "import functools")),
    dict(id="attrgetter", reason="'gi_frame'", ref="operator.attrgetter via typing.operator", expect="static",
         stage="audit hook",
         source=_h('typing.operator.attrgetter("gi_frame")((x for x in [1]))', "import typing")),
    # --- decorators, metaclasses, annotations ---------------------------------------------------
    dict(id="decorator-eval", ref="decorator chain calling eval without parentheses", expect="static",
         stage="restricted builtins",
         source=_h("pass", '@eval\n@str.lower\n@lambda _: "1+1"\nclass X:\n    pass')),
    dict(id="decorator-import", ref="decorator chain importing a module", expect="static",
         stage="import guard",
         source=_h('X.system("true")', '@__import__\n@lambda _: "os"\nclass X:\n    pass')),
    dict(id="metaclass-import", ref="metaclass callable", expect="static", stage="import guard",
         source=_h("pass", 'class X(metaclass=lambda *a: __import__("os")):\n    pass')),
    dict(id="metaclass-subclasses", ref="metaclass __getattr__ walking the hierarchy", expect="static",
         source=_h("X.anything()", "class Meta(type):\n    def __getattr__(cls, name):\n"
                                   "        return cls.__subclasses__\n\n\nclass X(metaclass=Meta):\n    pass")),
    dict(id="string-annotation", ref="typing.get_type_hints evaluates annotation strings",
         expect="static",
         source=_h("typing.get_type_hints(f)",
                   "import typing\n\n\ndef f(x: \"__import__('os').system('true')\"):\n    pass")),
    dict(id="forward-ref", ref="typing.ForwardRef", expect="static",
         source=_h('typing.ForwardRef("1")', "import typing")),
    # Stopped when typing compiles the text (the audit hook judges it), before evaluating it.
    dict(id="singledispatch-forward-ref", reason="dynamic code", ref="dynamic ForwardRef evaluated by functools.singledispatch",
         expect="runtime", stage="audit hook",
         source=_h('''
             code = "().__cl" + "ass__.__base__.__subclasses__()"

             @functools.singledispatch
             def dispatch(x):
                 return 0

             def target(x: typing.List[code]):
                 return 1

             try:
                 dispatch.register(target)
             except TypeError as exc:
                 if "sandbox" in str(exc):
                     raise''', "import functools\nimport typing")),
    dict(id="posonly-shadowing", ref="RestrictedPython GHSA-ffg3-p8fm-mjx2 (positional-only names)",
         expect="static", source=_h("pass", "def f(__builtins__, /):\n    return __builtins__")),
    dict(id="global-builtins", ref="rebinding __builtins__", expect="static",
         source=_h('global __builtins__\n__builtins__ = {"x": 1}')),
    # --- leaked real builtins ------------------------------------------------------------------
    dict(id="enum-bltns-eval", reason="dynamic code", ref="re.enum.bltns is the real builtins module", expect="static",
         stage="audit hook", source=_h('re.enum.bltns.eval("1 + 1")', "import re")),
    dict(id="enum-bltns-open", reason="reading files outside", ref="re.enum.bltns.open", expect="static", stage="audit hook",
         source=_h('re.enum.bltns.open("/etc/passwd").read()', "import re")),
    dict(id="codecs-builtins-exec", reason="dynamic code", ref="json.codecs.builtins.exec", expect="static",
         stage="audit hook", source=_h('json.codecs.builtins.exec("x = 1")', "import json")),
    # --- gadgets found by the security review ----------------------------------------------
    # string.Formatter().get_field walks attribute names given as a string, from library code:
    # the "_" rule of the checker never sees them and the audit hook trusted the frame reads.
    dict(id="formatter-get-field", reason="format field attribute '__globals__'",
         ref="review: Formatter().get_field by a computed field name", expect="static",
         stage="library patch",
         source=_h('''
             fmt = typing.sys.modules["string"].Formatter()
             g = fmt.get_field("0.__globals__", [json.dumps], {})[0]
             g["__builtins__"]["__import__"]("os").system("true")''', "import json\nimport typing")),
    dict(id="formatter-traceback-busy-flag", reason="format field attribute",
         ref="review: botocore...lexer.string.Formatter -> traceback frame -> audit hook state",
         expect="static", stage="library patch", needs="boto3",
         source=_h('''
             fmt = botocore.waiter.jmespath.lexer.string.Formatter()
             ppid = fmt.get_field("0.os.getppid", [uuid], {})[0]()
             try:
                 json.codecs.open("/etc/passwd")
             except PermissionError as exc:
                 hook = fmt.get_field("0.__traceback__.tb_next.tb_next.tb_frame.f_locals[self]", [exc], {})[0]
                 fmt.get_field("0._local", [hook], {})[0].busy = True
             json.codecs.open(f"/proc/{ppid}/environ").read()''',
                   "import json\nimport uuid\nimport botocore.waiter")),
    dict(id="update-wrapper-globals", reason="copying attribute '__globals__'",
         ref="functools.update_wrapper(assigned=...) is getattr by name from library code",
         expect="static", stage="library patch",
         source=_h('''
             seen = {}

             class Catcher:
                 def __setattr__(self, name, value):
                     seen[name] = value

             functools.update_wrapper(Catcher(), json.dumps, assigned=("__globals__",), updated=())
             seen["__globals__"]["__builtins__"]["__import__"]("os").system("true")''',
                   "import functools\nimport json")),
    dict(id="getattr-format", ref="getattr(template, 'format') skips the literal-template rule",
         expect="static", source=_h('getattr("{0.__class__.__base__}", "format")(1)')),
    dict(id="traceback-walk-tb", reason="access to 'tb_frame'",
         ref="traceback.walk_tb hands frames to its caller (read in library code)",
         expect="static", stage="audit hook",
         source=_h('''
             try:
                 1 / 0
             except ZeroDivisionError:
                 tb = typing.sys.exc_info()[2]
             for frame, _line in typing.sys.modules["traceback"].walk_tb(tb):
                 frame.f_globals''', "import typing")),
    # Objects that answer the hook's questions differently from what the C function used.
    dict(id="str-subclass-path", reason="reading files outside the runtime",
         ref="str subclass lying to os.path.realpath in the audit hook", expect="runtime",
         stage="audit hook",
         source=_h('''
             class Liar(str):
                 def startswith(self, *args):
                     return True

                 def __getitem__(self, key):
                     return event["runtimeFile"][1:]

             data = json.codecs.open(Liar("/etc/passwd")).read()
             if "root" not in data:
                 return {"statusCode": 200, "body": "read nothing"}''', "import json")),
    dict(id="fileio-pathlike-toctou", reason="reading files outside the runtime",
         ref="__fspath__ answering the audit hook differently from FileIO", expect="runtime",
         stage="audit hook", needs="boto3",
         source=_h('''
             class Sneaky:
                 def __init__(self):
                     self.calls = 0

                 def __fspath__(self):
                     self.calls += 1
                     return "/etc/passwd" if self.calls == 1 else "/dev/null"

             data = boto3.logging.io.FileIO(Sneaky()).read()
             if b"root" not in data:
                 return {"statusCode": 200, "body": "read nothing"}''', "import boto3")),
    dict(id="fileio-pathlike-toctou-sys", reason="reading files outside the runtime",
         ref="the same through sys.modules (no boto3 needed)", expect="static", stage="audit hook",
         source=_h('''
             class Sneaky:
                 def __init__(self):
                     self.calls = 0

                 def __fspath__(self):
                     self.calls += 1
                     return "/etc/passwd" if self.calls == 1 else "/dev/null"

             data = typing.sys.modules["io"].FileIO(Sneaky()).read()
             if b"root" not in data:
                 return {"statusCode": 200, "body": "read nothing"}''', "import typing")),
    dict(id="tuple-subclass-connect", reason="not in allowHosts",
         ref="tuple subclass showing the hook a listed host", expect="static", stage="audit hook",
         options={"allowHosts": ["example.com"]},
         source=_h('''
             class Address(tuple):
                 def __getitem__(self, index):
                     return ("example.com", 443)[index]

             sock = typing.sys.modules["socket"].socket()
             sock.settimeout(2)
             sock.connect(Address(("127.0.0.1", 9)))''', "import typing")),
    dict(id="getattr-str-subclass", reason="'__globals__'",
         ref="str subclass answering startswith() to the guarded getattr", expect="static",
         stage="guarded builtins",
         source=_h('''
             class Name(str):
                 def startswith(self, prefix):
                     return False

             getattr(handler, Name("__globals__"))["__builtins__"]''')),
    # What the review's escape did once out: other processes and the platform's secrets.
    dict(id="pidfd-signal-parent", ref="review: pidfd_open + pidfd_send_signal (no audit event)",
         expect="static", stage="seccomp", needs="seccomp",
         source=_h('''
             os = typing.sys.modules["os"]
             fd = os.pidfd_open(os.getppid())
             typing.sys.modules["signal"].pidfd_send_signal(fd, 0)''', "import typing")),
    dict(id="proc-parent-environ", reason="reading files outside the runtime",
         ref="review: /proc/<ppid>/environ", expect="static", stage="audit hook",
         source=_h('''
             ppid = typing.sys.modules["os"].getppid()
             json.codecs.open(f"/proc/{ppid}/environ").read()''', "import json\nimport typing")),
    dict(id="platform-token-closure", ref="review: a token read from the http.client patch's closure",
         expect="static",
         source=_h('typing.sys.modules["http.client"].HTTPConnection.endheaders.__closure__',
                   "import typing")),
    # --- code that libraries compile or evaluate (issue 30) ----------------------------------
    # Each of these passed the checker and escaped before the audit hook judged the text the
    # compiler actually reads and the library patches below existed.
    dict(id="singledispatch-lying-annotation", reason="dynamic code",
         ref="issue 30: singledispatch.register -> get_type_hints of a __getattr__ object whose "
             "annotation is a str subclass answering strip() with 'int'",
         expect="runtime", stage="audit hook",
         source=_h('''
             class Lie(str):
                 def strip(self, *args):
                     return "int"

             class Obj:
                 def __getattr__(self, name):
                     if name == "__annotations__":
                         return {"x": Lie('__import__("os").__class__')}
                     raise AttributeError(name)

             dispatch = functools.singledispatch(len)
             dispatch.register(Obj())
             if not isinstance(dispatch.dispatch(type(json)), Obj):
                 return {"statusCode": 200, "body": "not registered"}''', "import functools\nimport json")),
    dict(id="type-hints-globals-builtins",
         ref="eval() puts the caller's (real) builtins into a globals dict without them: "
             "get_type_hints takes that dict from a __getattr__ '__globals__'",
         expect="runtime", stage="contained ('no builtins')",
         source=_h('''
             g = {}

             class Obj:
                 def __getattr__(self, name):
                     if name == "__annotations__":
                         return {"x": "int"}
                     if name == "__globals__":
                         return g
                     raise AttributeError(name)

             functools.singledispatch(len).register(Obj())
             if "__builtins__" not in g:
                 return {"statusCode": 200, "body": "no builtins"}
             g["__builtins__"]["__import__"]("os").getpid()''', "import functools")),
    dict(id="dataclass-field-name-repr",
         ref="make_dataclass: a str subclass field name passing isidentifier() whose repr() is code "
             "pasted into the frozen __setattr__ source",
         expect="runtime", stage="contained ('nothing leaked')",
         source=_h('''
             class Name(str):
                 def isidentifier(self):
                     return True

                 def __repr__(self):
                     return "'a' if self.leak(__import__('os')) else 'b'"

             X = dataclasses.make_dataclass("X", [Name("a")], frozen=True)
             got = []

             class Y(X):
                 def leak(self, module):
                     got.append(module)
                     return False

             y = Y(1)
             try:
                 y.other = 1
             except dataclasses.FrozenInstanceError:
                 pass
             if not got:
                 return {"statusCode": 200, "body": "nothing leaked"}
             got[0].getpid()''', "import dataclasses")),
    dict(id="logging-brace-style-fields", reason="format field attribute",
         ref="logging's '{' style formats user templates with str.format from library code: "
             "basicConfig(style='{') reads attributes named in the template",
         expect="runtime", stage="library patch", needs="boto3",
         source=_h('''
             seen = []

             class Sink:
                 def write(self, text):
                     seen.append(text)

                 def flush(self):
                     pass

             boto3.logging.basicConfig(format="{msg.__globals__[__name__]}", style="{",
                                       stream=Sink(), force=True)
             boto3.logging.getLogger("probe").warning(json.dumps)
             if "json" not in "".join(seen):
                 return {"statusCode": 200, "body": "nothing read: " + "".join(seen)[:100]}''',
                   "import boto3\nimport json")),
    dict(id="enum-global-enum-policy", reason="global_enum",
         ref="enum.global_enum(cls) writes the members into sys.modules[cls.__module__], a module "
             "the functional API lets the caller name: replace the sandbox policy's checks",
         expect="static", stage="library patch",
         source=_h('''
             class Yes:
                 def __call__(self, *args):
                     return True

             Rules = re.enum.Enum("Rules", {"attribute_allowed": 1},
                                  module="platform_runtime.policy", type=Yes)
             re.enum.global_enum(Rules)
             seen = {}

             class Catcher:
                 def __setattr__(self, name, value):
                     seen[name] = value

             copy = functools.partial(functools.update_wrapper, assigned=("__globals__",), updated=())
             copy(Catcher(), json.dumps)
             seen["__globals__"]["__builtins__"]["__import__"]("os").getpid()''',
                   "import functools\nimport json\nimport re")),
    dict(id="logging-dictconfig-ext", reason="logging configuration",
         ref="logging.config.dictConfig resolves 'ext://os' and '()' factories by name from "
             "library code (loaded by Strands' dependencies)",
         expect="runtime", stage="library patch", needs="boto3",
         source=_h('''
             boto3.logging.config.dictConfig({
                 "version": 1,
                 "disable_existing_loggers": False,
                 "filters": {"f": {"()": "types.SimpleNamespace", "m": "ext://os"}},
                 "loggers": {"corpus.probe": {"filters": ["f"]}},
             })
             boto3.logging.getLogger("corpus.probe").filters[0].m.getpid()''', "import boto3")),
    dict(id="six-exec-through-singledispatch", reason="'exec_'",
         ref="botocore.vendored.six.exec_ is the real exec; called through singledispatch's "
             "wrapper its caller is library code, and exec puts that frame's (real) builtins "
             "into the globals dict it is given",
         expect="static", stage="guarded builtins", needs="boto3",
         source=_h('''
             g = {}
             run = functools.singledispatch(getattr(botocore.vendored.six, "exec_"))
             run("x = 1", g)
             g["__builtins__"]["__import__"]("os").getpid()''',
                   "import functools\nimport botocore.vendored.six")),
    # --- processes ---------------------------------------------------------------------------
    dict(id="os-fork", reason="forking", ref="os.fork via sys.modules", expect="static", stage="audit hook",
         source=_h('typing.sys.modules["os"].fork()', "import typing")),
    dict(id="kill-parent", reason="signalling other processes", ref="signal the fork server", expect="static", stage="audit hook",
         source=_h('os = typing.sys.modules["os"]\nos.kill(os.getppid(), 9)', "import typing")),
    dict(id="subprocess-run", reason="starting subprocesses", ref="subprocess via sys.modules", expect="static", stage="audit hook",
         source=_h('typing.sys.modules["subprocess"].run(["true"])', "import typing")),
    dict(id="posixsubprocess-fork-exec", ref="_posixsubprocess.fork_exec raises no audit event",
         expect="static", stage="seccomp", needs="seccomp", source=_h(FORK_EXEC, "import typing")),
    # --- files -------------------------------------------------------------------------------
    dict(id="codecs-read-passwd", reason="reading files outside", ref="codecs.open reachable as json.codecs", expect="runtime",
         stage="audit hook", source=_h('json.codecs.open("/etc/passwd").read()', "import json")),
    dict(id="codecs-read-parent-environ", reason="reading files outside", ref="environment of other processes", expect="runtime",
         stage="audit hook", source=_h('json.codecs.open("/proc/1/environ").read()', "import json")),
    dict(id="codecs-write-scratch", reason="opening files for writing", ref="write a file", expect="runtime", stage="audit hook",
         source=_h('json.codecs.open(event["scratch"], "w").write("x")', "import json")),
    dict(id="codecs-append-runtime-dir", reason="opening files for writing", ref="write next to the runtime code", expect="runtime",
         stage="audit hook",
         source=_h('json.codecs.open(event["runtimeFile"], "a").write("x")', "import json")),
    dict(id="os-open-write", reason="opening files for writing", ref="os.open with O_CREAT", expect="static", stage="audit hook",
         source=_h('os = typing.sys.modules["os"]\nos.open(event["scratch"], os.O_WRONLY | os.O_CREAT)',
                   "import typing")),
    dict(id="code-object", reason="constructing code objects", ref="types.CodeType via typing.types", expect="runtime", stage="audit hook",
         source=_h('typing.types.CodeType(0, 0, 0, 0, 0, 0, b"", (), (), (), "", "", "", 0, b"", b"")',
                   "import typing")),
    # --- resources ---------------------------------------------------------------------------
    dict(id="cpu-loop", ref="busy loop", expect="runtime", stage="timeout", options={"timeoutMs": 800},
         source=_h("while True:\n    pass")),
    dict(id="sleep-forever", ref="sleep past the timeout", expect="runtime", stage="timeout",
         options={"timeoutMs": 800}, source=_h("time.sleep(3600)", "import time")),
    dict(id="redos", ref="catastrophic regex backtracking", expect="runtime", stage="timeout",
         options={"timeoutMs": 800}, source=_h('re.match("(a+)+$", "a" * 64 + "b")', "import re")),
    dict(id="memory-bytearray", ref="one huge allocation", expect="runtime", stage="memory limit",
         options={"memoryMb": 64}, source=_h("data = bytearray(1 << 31)")),
    dict(id="memory-list", ref="huge list", expect="runtime", stage="memory limit",
         options={"memoryMb": 64}, source=_h("data = [0] * (1 << 29)")),
    # --- network -----------------------------------------------------------------------------
    dict(id="socket-unlisted-host", reason="not in allowHosts", ref="raw socket to a host not on allowHosts", expect="static",
         stage="audit hook",
         source=_h('typing.sys.modules["socket"].create_connection(("127.0.0.1", 9), timeout=2)',
                   "import typing")),
    dict(id="boto3-unlisted-endpoint", reason="not in allowHosts", ref="AWS SDK pointed at an unlisted endpoint", expect="runtime",
         stage="audit hook", needs="boto3",
         source=_h('''
             client = boto3.client("s3", endpoint_url="http://127.0.0.1:9", region_name="us-east-1",
                                   aws_access_key_id="a", aws_secret_access_key="b",
                                   config=botocore.config.Config(retries={"max_attempts": 1}))
             client.list_buckets()''', "import boto3\nimport botocore.config")),
]
