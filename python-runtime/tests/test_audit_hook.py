"""The audit hook on its own, in a fresh interpreter (a hook cannot be removed): its state is out
of reach of whoever catches its denials, rebinding what it uses changes nothing, it fails closed,
and it never runs methods of the objects it inspects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from textwrap import dedent

from .support import RUNTIME_DIR

HEAD = dedent('''
    import builtins, json, os, pathlib, sys, sysconfig, types
    from platform_runtime import sandbox

    READ_ROOTS = [sysconfig.get_paths()["stdlib"]]
''')

PRELUDE = dedent('''
    USER_NS = {"__name__": "user"}
    hook, _getaddrinfo = sandbox._build_audit_hook(
        read_roots=READ_ROOTS, allow_hosts=[], user_ns=USER_NS,
        proxied=False, source_loaders=(globals(),))
    sys.addaudithook(hook)
    results = {}


    def denied(action):
        try:
            action()
        except PermissionError as exc:
            return "[sandbox:audit]" in str(exc)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return False


    def read_secret():
        with open("/etc/passwd") as fh:
            return fh.read()


    def user(source):
        """Runs `source` as user code: frames whose globals are the user namespace."""
        exec(compile(source, "<user-source>", "exec"), USER_NS)
''')


def run_scenario(body: str, before: str = "") -> dict:
    """Runs `body` with the hook installed; `before` runs first, without it."""
    script = HEAD + dedent(before) + PRELUDE + dedent(body) + "\nprint(json.dumps(results))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=RUNTIME_DIR, env=dict(os.environ, PYTHONPATH=RUNTIME_DIR))
    if proc.returncode != 0:
        raise AssertionError(f"scenario failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


class AuditHookStateTest(unittest.TestCase):
    def test_nothing_reachable_from_a_denial_turns_the_hook_off(self) -> None:
        # An attacker holding frames (here: trusted code, which the hook lets read them) walks
        # the denial's traceback and clears or flips everything mutable it reaches.
        results = run_scenario('''
            try:
                read_secret()
            except PermissionError as exc:
                denial = exc
            frames, tb = [], denial.__traceback__
            while tb is not None:
                frames.append(tb.tb_frame)
                tb = tb.tb_next
            hook_frames = frames[1:]  # frames[0] is this script
            results["hookFrameLocals"] = sorted({name for f in hook_frames for name in f.f_locals})
            protected = {id(m.__dict__) for m in list(sys.modules.values())} | {id(sys.modules)}
            seen = set()

            def ruin(obj, depth=0):
                if id(obj) in seen or id(obj) in protected or depth > 6:
                    return
                seen.add(id(obj))
                if isinstance(obj, (types.ModuleType, type)):
                    return
                children = []
                if isinstance(obj, dict):
                    children = list(obj.values())
                elif isinstance(obj, (list, tuple, set, frozenset)):
                    children = list(obj)
                elif isinstance(obj, types.FunctionType):
                    cells = [c.cell_contents for c in obj.__closure__ or () if c.cell_contents is not c]
                    children = [obj.__defaults__, obj.__kwdefaults__, obj.__globals__] + cells
                elif isinstance(obj, types.MethodType):
                    children = [obj.__self__, obj.__func__]
                elif hasattr(obj, "__dict__"):
                    for name, value in list(vars(obj).items()):
                        if isinstance(value, bool):
                            setattr(obj, name, True)  # busy, disabled, ...
                    children = list(vars(obj).values())
                for child in children:
                    ruin(child, depth + 1)
                if isinstance(obj, (dict, list, set)):
                    obj.clear()

            for frame in hook_frames:
                for space in (frame.f_locals, frame.f_globals, frame.f_builtins):
                    ruin(space)
            results["stillDenied"] = denied(read_secret)
            ''')
        self.assertEqual(results["hookFrameLocals"], ["denial"])
        self.assertIs(results["stillDenied"], True)

    def test_rebinding_builtins_and_os_path_changes_nothing(self) -> None:
        results = run_scenario('''
            saved = (builtins.isinstance, builtins.issubclass, builtins.any, os.path.realpath)
            builtins.isinstance = builtins.issubclass = lambda *args: True
            builtins.any = lambda iterable: False
            os.path.realpath = lambda path, **kwargs: sys.prefix
            try:
                results["readDenied"] = denied(read_secret)
                results["writeDenied"] = denied(lambda: open(sys.prefix + "/probe", "w"))
            finally:
                builtins.isinstance, builtins.issubclass, builtins.any, os.path.realpath = saved
            ''')
        self.assertEqual((results["readDenied"], results["writeDenied"]), (True, True))

    def test_it_fails_closed(self) -> None:
        results = run_scenario('''
            broken = pathlib.PosixPath(sys.prefix)
            object.__setattr__(broken, "_str", 5)  # str(broken) raises inside the hook
            results["brokenPath"] = denied(lambda: sys.audit("open", broken, "r", 0))
            results["unknownObject"] = denied(lambda: sys.audit("open", object(), "r", 0))
            results["noArguments"] = denied(lambda: sys.audit("socket.connect"))
            results["unixAddress"] = denied(lambda: sys.audit("socket.connect", None, "/run/x.sock"))
            stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
            results["trustedPathStillWorks"] = denied(lambda: os.listdir(stdlib))
            ''')
        for key in ("brokenPath", "unknownObject", "noArguments", "unixAddress"):
            self.assertIs(results[key], True, key)
        self.assertIs(results["trustedPathStillWorks"], False)

    def test_the_hook_runs_no_method_of_what_it_inspects(self) -> None:
        results = run_scenario('''
            user("""
            calls = []

            class Probe(str):
                def startswith(self, *args):
                    calls.append("startswith")
                    return True

                def __getitem__(self, key):
                    calls.append("getitem")
                    return "usr"

                def split(self, *args):
                    calls.append("split")
                    return ["usr"]

            try:
                open(Probe("/etc/passwd"))
            except PermissionError:
                pass
            """)
            results["calls"] = USER_NS["calls"]
            ''')
        self.assertEqual(results["calls"], [])

    def test_frames_near_user_code_stay_closed_and_libraries_keep_theirs(self) -> None:
        results = run_scenario('''
            import traceback
            USER_NS["traceback"] = traceback
            user("""
            outcomes = {}
            try:
                (x for x in [1]).gi_frame
            except AttributeError as exc:
                outcomes["generatorFrame"] = "sandbox" in str(exc)
            try:
                1 / 0
            except ZeroDivisionError as exc:
                failure = exc
            try:
                next(traceback.walk_tb(failure.__traceback__))
            except AttributeError as exc:
                outcomes["walkTb"] = "sandbox" in str(exc)
            """)
            results.update(USER_NS["outcomes"])
            # Far from user code (a library formatting its own error) frames are readable.
            results["libraryFormat"] = "ZeroDivisionError" in "".join(
                traceback.format_exception(USER_NS["failure"]))
            ''')
        self.assertEqual(results, {"generatorFrame": True, "walkTb": True, "libraryFormat": True})

    def test_code_compiled_at_run_time_is_judged_by_its_text(self) -> None:
        results = run_scenario('''
            import ast
            import dataclasses
            import marshal
            import typing
            from collections import namedtuple

            class Lie(str):
                def strip(self, *args):
                    return "int"

            # Library code compiling text it was handed: the characters the compiler reads
            # are judged, whatever the object says about itself.
            results["lyingForwardRef"] = denied(lambda: typing.ForwardRef(Lie("__import__('os')")))
            results["plainForwardRef"] = denied(lambda: typing.ForwardRef("typing.List[int]"))
            results["nameOfALibraryGlobal"] = denied(lambda: typing.ForwardRef("sys"))
            results["importInText"] = denied(lambda: exec("import threading", {}))
            results["syntaxTree"] = denied(lambda: compile(ast.parse("1"), "x", "eval"))
            results["unparsable"] = denied(lambda: typing.ForwardRef("1 +"))
            results["marshal"] = denied(lambda: marshal.loads(marshal.dumps(1)))
            # What libraries legitimately generate keeps compiling.
            Point = namedtuple("Point", "x y")
            Made = dataclasses.make_dataclass("Made", [("a", int)], frozen=True)
            results["templates"] = Point(1, 2).y + Made(3).a
            results["parse"] = type(ast.parse("__import__('os')")).__name__
            ''')
        self.assertEqual(results["lyingForwardRef"], True)
        self.assertEqual(results["nameOfALibraryGlobal"], True)
        self.assertEqual(results["importInText"], True)
        self.assertEqual(results["syntaxTree"], True)
        self.assertEqual(results["marshal"], True)
        self.assertIn("SyntaxError", results["unparsable"])
        self.assertIs(results["plainForwardRef"], False)
        self.assertEqual(results["templates"], 5)
        self.assertEqual(results["parse"], "Module")

    def test_lazily_imported_library_source_still_compiles(self) -> None:
        # No cached bytecode (a fresh directory on the read roots): the import system compiles
        # the file's text, which is allowed because it is exactly the file's bytes.
        results = run_scenario('''
            results["imported"] = __import__("corpus_lazy_module").VALUE
            ''', before='''
            import os, sys, tempfile
            lazy = tempfile.mkdtemp(prefix="lazy-")
            with open(os.path.join(lazy, "corpus_lazy_module.py"), "w") as fh:
                # An import and a private name: text the rules of user code would refuse.
                fh.write("import os as _os\\nVALUE = len(_os.sep) + 5\\n")
            sys.path.insert(0, lazy)
            sys.dont_write_bytecode = True
            READ_ROOTS.append(lazy)
            ''')
        self.assertEqual(results["imported"], 6)


if __name__ == "__main__":
    unittest.main()
