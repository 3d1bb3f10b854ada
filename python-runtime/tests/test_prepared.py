"""The sandbox prepared once by the fork server (`sandbox.prepare`), each scenario in a fresh
interpreter (the sandbox cannot be removed): a run consumes what was prepared, ends up with the
same layers as a run that prepared nothing, and a module imported between the preparation and
the sandbox is handled as if nothing had been prepared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from textwrap import dedent

from .support import RUNTIME_DIR

HEAD = dedent('''
    import json, string, sys, types
    from platform_runtime import sandbox, seccomp, zygote

    zygote.preload([])
    READ_ROOTS = sandbox.default_read_roots()
''')

INSTALL = dedent('''
    module = types.ModuleType("action_source")
    report = sandbox.install(memory_mb=256, timeout_ms=5000, read_roots=READ_ROOTS,
                             allow_hosts=[], user_globals=module.__dict__)
    results = {"auditHook": report["auditHook"], "importHook": report["importHook"]}


    def refused(action):
        try:
            action()
        except Exception as exc:
            return "[sandbox:" in str(exc)
        return False


    def layers():
        first, second = sandbox.user_builtins(), sandbox.user_builtins()
        return {
            "ctypesModules": [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.")],
            "formatFieldRefused": refused(
                lambda: string.Formatter().get_field("0.__class__", [1], {})),
            "userBuiltins": [sorted(set(b) & {"eval", "open", "exec"}) for b in (first, second)],
            "userBuiltinsDistinct": first is not second,
        }
''')


def run_scenario(*parts: str) -> dict:
    """Runs HEAD, then `parts` (each dedented on its own), then prints `results`."""
    script = HEAD + "".join(dedent(part) for part in parts) + "\nprint(json.dumps(results))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=RUNTIME_DIR, env=dict(os.environ, PYTHONPATH=RUNTIME_DIR))
    if proc.returncode != 0:
        raise AssertionError(f"scenario failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


class PreparedSandboxTest(unittest.TestCase):
    def test_a_run_consumes_what_was_prepared_and_gets_every_layer(self) -> None:
        # Prepare: what the fork server does before its first fork
        # Act: the run's install
        results = run_scenario('''
            sandbox.prepare(READ_ROOTS)
            prepared = sandbox._prepared is not None and sandbox._prepared_builtins is not None
            ''', INSTALL, '''
            results.update(layers(), prepared=prepared,
                           dropped=sandbox._prepared is None and seccomp._prepared is None)
            ''')

        # Assess: nothing prepared is left to user code, and the layers are those of an
        # unprepared install (next test)
        self.assertIs(results["prepared"], True)
        self.assertIs(results["dropped"], True)
        self.assertEqual(results["ctypesModules"], [])
        self.assertIs(results["formatFieldRefused"], True)
        self.assertEqual(results["userBuiltins"], [[], []])
        self.assertIs(results["userBuiltinsDistinct"], True)
        self.assertIs(results["auditHook"], True)

    def test_an_unprepared_install_gets_the_same_layers(self) -> None:
        # Act
        results = run_scenario(INSTALL, '''
            results.update(layers())
            ''')

        # Assess
        self.assertEqual(results["ctypesModules"], [])
        self.assertIs(results["formatFieldRefused"], True)
        self.assertEqual(results["userBuiltins"], [[], []])

    def test_a_module_imported_after_the_preparation_is_still_covered(self) -> None:
        # Prepare: a ctypes submodule and a patched library loaded between the fork server's
        # preparation and the run's sandbox
        results = run_scenario('''
            sandbox.prepare(READ_ROOTS)
            import ctypes.util
            import logging.config
            ''', INSTALL, '''
            results.update(layers(), configRefused=refused(
                lambda: logging.config.BaseConfigurator({}).resolve("os")))
            ''')

        # Assess: removed and patched as if nothing had been prepared
        self.assertEqual(results["ctypesModules"], [])
        self.assertIs(results["configRefused"], True)
        self.assertIs(results["formatFieldRefused"], True)


if __name__ == "__main__":
    unittest.main()
