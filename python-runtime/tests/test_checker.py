"""The static checker: allowed sources pass, each kind of violation is reported with its line,
every violation of a source is listed, and the command-line form works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from textwrap import dedent

from platform_runtime import policy
from platform_runtime.checker import check_expression, check_source

from .support import FIXTURES_DIR, RUNTIME_DIR

STRANDS_AGENT = dedent('''
    """A typical Strands agent: model, tools, MCP client, prompt template."""
    from __future__ import annotations

    import json
    import re
    from dataclasses import dataclass, field
    from typing import Literal, Optional
    from urllib.parse import quote

    import boto3
    from mcp.client.streamable_http import streamablehttp_client
    from strands import Agent, tool
    from strands.models import BedrockModel
    from strands.tools.mcp import MCPClient

    SYSTEM_PROMPT = "You are {name}, a helpful assistant for {team}."
    KEYS = json.loads(SVC_KEYS_JSON)


    @dataclass
    class Settings:
        region: str = "us-east-1"
        tags: list[str] = field(default_factory=list)


    class Memory(dict):
        def __init__(self, owner: "Settings"):
            super().__init__()
            self.owner = owner

        def __repr__(self) -> str:
            return f"Memory({len(self)})"


    @tool
    def weather(city: str, unit: Literal["open", "celsius"] = "celsius") -> str:
        """Weather for a city."""
        counter = 0

        def bump() -> int:
            nonlocal counter
            counter += 1
            return counter

        match city.split():
            case [single]:
                name = single
            case _:
                name = "-".join(city.split())
        try:
            value = getattr(Settings(), "region")
        except* ValueError as group:
            value = str(group)
        del counter
        return f"{name}: 21 {unit} in {value} ({quote(city)}) {bump}"


    def create_agent():
        model = BedrockModel(model_id="anthropic.claude-3-haiku", region_name=Settings().region)
        mcp = MCPClient(lambda: streamablehttp_client("https://example.com/mcp"))
        prompt = SYSTEM_PROMPT.format(name="Ada", team="support")
        if isinstance(model, type) or type(model) is None:
            raise RuntimeError("impossible")
        session = boto3.session.Session()
        return Agent(model=model, tools=[weather], system_prompt=prompt), [mcp]


    if __name__ == "__main__":
        print(create_agent())
''')


def lines_of(source: str) -> list[int]:
    return [v.line for v in check_source(source)]


class AllowedSourcesTest(unittest.TestCase):
    def test_the_fixture_agents_pass(self) -> None:
        for name in sorted(os.listdir(FIXTURES_DIR)):
            if name.endswith(".py"):
                with self.subTest(name), open(os.path.join(FIXTURES_DIR, name), encoding="utf-8") as fh:
                    self.assertEqual(check_source(fh.read()), [])

    def test_a_realistic_strands_agent_passes(self) -> None:
        self.assertEqual(check_source(STRANDS_AGENT), [])

    def test_allowed_imports(self) -> None:
        source = "\n".join([
            "import json", "import datetime", "import time", "import uuid", "import typing",
            "import dataclasses", "import collections", "import collections.abc",
            "import itertools", "import functools", "import re", "import math", "import random",
            "import base64", "import hashlib", "import urllib.parse", "from urllib import parse",
            "import boto3", "import botocore.config", "import strands", "import strands_tools",
            "from strands.models.bedrock import BedrockModel", "from strands_tools import calculator",
        ])
        self.assertEqual(check_source(source), [])

    def test_plain_wraps_and_setattr_format_pass(self) -> None:
        source = dedent("""
            import functools


            def logged(fn):
                @functools.wraps(fn)
                def inner(*args):
                    return fn(*args)
                return functools.update_wrapper(inner, fn)


            class Box:
                pass


            setattr(Box(), "format", "csv")
            value = getattr(Box, "name", None)
            """)
        self.assertEqual(check_source(source), [])

    def test_voice_agents_may_wait_on_a_queue_and_no_more_of_asyncio(self) -> None:
        self.assertEqual(check_source("from asyncio import Queue, Event, sleep\n"), [])
        self.assertTrue(check_source("import asyncio\n"))
        self.assertTrue(check_source("from asyncio import create_subprocess_exec\n"))
        self.assertTrue(check_source("from asyncio import get_running_loop\n"))

    def test_module_policy(self) -> None:
        self.assertTrue(policy.module_allowed("strands.models.openai"))
        self.assertTrue(policy.module_allowed("urllib.parse"))
        self.assertFalse(policy.module_allowed("urllib"))
        self.assertFalse(policy.module_allowed("urllib.request"))
        self.assertFalse(policy.module_allowed("re._parser"))
        self.assertFalse(policy.module_allowed("jsonx"))  # prefix of an allowed name only
        self.assertFalse(policy.module_allowed("mcp.client.stdio"))


class ViolationsTest(unittest.TestCase):
    # (what, source, line of the violation, fragment of the message)
    CASES = [
        ("disallowed import", "import json\nimport os\n", 2, "import of 'os'"),
        ("disallowed from-import", "x = 1\nfrom subprocess import run\n", 2, "import of 'subprocess'"),
        ("submodule outside the allowed one", "import json\nfrom urllib import request\n", 2,
         "urllib.request"),
        ("relative import", "\n\nfrom . import sibling\n", 3, "relative imports"),
        ("star import", "from json import *\n", 1, "import *"),
        ("private name imported", "from json import _default_encoder\n", 1, "'_default_encoder'"),
        ("eval", "x = 1\ny = eval('x')\n", 2, "'eval'"),
        ("exec", "exec('x = 1')\n", 1, "'exec'"),
        ("compile", "\ncode = compile('1', 'f', 'eval')\n", 2, "'compile'"),
        ("open", "def f():\n    return open('/etc/passwd')\n", 2, "'open'"),
        ("__import__", "m = __import__('os')\n", 1, "'__import__'"),
        ("breakpoint", "breakpoint()\n", 1, "'breakpoint'"),
        ("input", "answer = input()\n", 1, "'input'"),
        ("help", "help(str)\n", 1, "'help'"),
        ("memoryview", "m = memoryview(b'x')\n", 1, "'memoryview'"),
        ("globals", "g = globals()\n", 1, "'globals'"),
        ("locals", "def f():\n    return locals()\n", 2, "'locals'"),
        ("vars", "v = vars()\n", 1, "'vars'"),
        ("dir", "d = dir(1)\n", 1, "'dir'"),
        ("dunder attribute", "x = 1\nc = x.__class__\n", 2, "'__class__'"),
        ("private attribute", "import random\nrandom._os\n", 2, "'_os'"),
        ("private attribute store", "class A:\n    pass\nA()._hidden = 1\n", 3, "'_hidden'"),
        ("generator frame", "g = (i for i in [1])\nf = g.gi_frame\n", 2, "'gi_frame'"),
        ("coroutine frame", "async def c():\n    pass\nc().cr_frame\n", 3, "'cr_frame'"),
        ("frame globals", "def f(fr):\n    return fr.f_globals\n", 2, "'f_globals'"),
        ("frame back", "def f(fr):\n    return fr.f_back\n", 2, "'f_back'"),
        ("traceback frame", "def f(tb):\n    return tb.tb_frame\n", 2, "'tb_frame'"),
        ("mro", "x = int.mro()\n", 1, "'mro'"),
        ("module handle attribute", "import typing\ntyping.sys\n", 2, "'sys'"),
        ("sys.modules-like attribute", "def f(s):\n    return s.modules\n", 2, "'modules'"),
        ("attrgetter", "import typing\ntyping.operator.attrgetter('x')\n", 2, "'attrgetter'"),
        ("get_type_hints", "import typing\ntyping.get_type_hints(int)\n", 2, "'get_type_hints'"),
        ("string.Formatter", "import json\nf = json.codecs.string.Formatter()\n", 2, "'Formatter'"),
        ("get_field", "def f(fmt):\n    return fmt.get_field('0.x', [1], {})\n", 2, "'get_field'"),
        ("vformat", "def f(fmt):\n    return fmt.vformat('{0}', [1], {})\n", 2, "'vformat'"),
        ("traceback.walk_tb", "def f(tb, m):\n    return m.walk_tb(tb)\n", 2, "'walk_tb'"),
        ("pidfd_open", "def f(m):\n    return m.pidfd_open(1)\n", 2, "'pidfd_open'"),
        ("getattr of format", "s = getattr('{0.real}', 'format')(1)\n", 1, "getattr(..., 'format')"),
        ("getattr of format_map", "def f(t):\n    return getattr(t, 'format_map')({})\n", 2,
         "getattr(..., 'format_map')"),
        ("wraps choosing attributes", "import functools\n\n@functools.wraps(len, assigned=('__globals__',))\n"
         "def f():\n    pass\n", 3, "may not choose the attributes"),
        ("update_wrapper positional names", "import functools\nfunctools.update_wrapper(f, g, ('x',))\n",
         2, "may not choose the attributes"),
        ("update_wrapper updated=", "from functools import update_wrapper\nupdate_wrapper(f, g, updated=())\n",
         2, "may not choose the attributes"),
        ("computed getattr", "name = 'x'\ngetattr(1, name)\n", 2, "literal attribute name"),
        ("getattr with dunder literal", "getattr(1, '__class__')\n", 1, "'__class__'"),
        ("setattr computed", "setattr(1, 'a' + 'b', 2)\n", 1, "literal attribute name"),
        ("delattr with private literal", "delattr(1, '_x')\n", 1, "'_x'"),
        ("getattr as a value", "f = getattr\n", 1, "'getattr'"),
        ("getattr starred", "args = (1, 'real')\ngetattr(*args)\n", 2, "plain arguments"),
        ("type with three arguments", "X = type('X', (), {})\n", 1, "type() is only allowed"),
        ("format on a literal with attribute field", "s = '{0.__class__}'.format(1)\n", 1,
         "reads an attribute"),
        ("format on a literal with item field", "s = '{0[key]}'.format({})\n", 1, "reads an attribute"),
        ("format on a non-literal template", "def f(t):\n    return t.format(1)\n", 2,
         "only allowed on a literal template"),
        ("format_map", "t = 'x'\nt = t + '{a.b}'\nt.format_map({})\n", 3,
         "only allowed on a literal template"),
        ("str.format unbound", "str.format('{}', 1)\n", 1, "only allowed on a literal template"),
        ("nested format spec field", "'{0:{1.real}}'.format(1, 2)\n", 1, "reads an attribute"),
        ("dunder name", "x = __builtins__\n", 1, "'__builtins__'"),
        ("dunder parameter (positional-only)", "def f(__builtins__, /):\n    pass\n", 1,
         "'__builtins__'"),
        ("dunder keyword argument", "dict(__class__=1)\n", 1, "'__class__'"),
        ("global dunder", "def f():\n    global __builtins__\n", 2, "'__builtins__'"),
        ("dunder function at module level", "def __getattr__(name):\n    pass\n", 1, "'__getattr__'"),
        ("match class keyword attribute", "match 1:\n    case int(__class__=c):\n        pass\n", 2,
         "'__class__'"),
        ("except* body", "try:\n    pass\nexcept* ValueError as eg:\n    eg.__traceback__\n", 4,
         "'__traceback__'"),
        ("decorator", "@eval\ndef f():\n    pass\n", 1, "'eval'"),
        ("metaclass keyword", "class A(metaclass=__import__('abc').ABCMeta):\n    pass\n", 1,
         "'__import__'"),
        ("string annotation", "\ndef f(x: \"__import__('os')\"):\n    pass\n", 2,
         "in string annotation"),
        ("nested string annotation", "import typing\nx: typing.List['().__class__'] = []\n", 2,
         "in string annotation"),
        ("fullwidth identifier", "ｅｖａｌ('1')\n", 1, "'eval'"),
        ("syntax error", "def f(:\n", 1, "syntax error"),
    ]

    def test_each_violation_kind_is_reported_with_its_line(self) -> None:
        for what, source, line, fragment in self.CASES:
            with self.subTest(what):
                violations = check_source(source)
                self.assertTrue(violations, f"no violation for {what}")
                self.assertIn(line, [v.line for v in violations])
                self.assertTrue(any(fragment in v.message for v in violations),
                                f"{fragment!r} not in {[v.message for v in violations]}")
                self.assertTrue(all(v.col >= 1 for v in violations))

    def test_several_violations_are_all_listed(self) -> None:
        source = dedent("""\
            import json
            import os
            import subprocess

            def handler(event, context):
                data = eval(event["x"])
                fh = open("/tmp/f", "w")
                cls = data.__class__
                return getattr(data, event["name"])
            """)
        violations = check_source(source)
        self.assertEqual([v.line for v in violations], [2, 3, 6, 7, 8, 9])
        self.assertEqual(violations, sorted(violations))

    def test_the_same_line_can_hold_several_violations(self) -> None:
        violations = check_source("x = eval('1') + open('f').read()\n")
        self.assertEqual(len(violations), 2)
        self.assertEqual({v.line for v in violations}, {1})
        self.assertEqual(sorted(v.col for v in violations), [5, 17])

    def test_literal_template_constants(self) -> None:
        ok = 'PROMPT = "Hi {name}"\nPROMPT.format(name="a")\n'
        self.assertEqual(check_source(ok), [])
        rebound = 'PROMPT = "Hi {name}"\nPROMPT = input_text = "x"\nPROMPT.format(name="a")\n'
        self.assertEqual(lines_of(rebound), [3])
        unsafe = 'PROMPT = "Hi {name.__class__}"\nPROMPT.format(name=1)\n'
        self.assertEqual(lines_of(unsafe), [2])

    def test_check_expression(self) -> None:
        self.assertEqual(check_expression("typing.List[int]"), [])
        self.assertTrue(check_expression("().__class__.__base__"))


class CommandLineTest(unittest.TestCase):
    def run_checker(self, *args: str, stdin: str = ""):
        env = dict(os.environ, PYTHONPATH=RUNTIME_DIR)
        return subprocess.run([sys.executable, "-m", "platform_runtime.checker", *args],
                              input=stdin, capture_output=True, text=True, env=env, timeout=30)

    def test_file_with_violations(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write("import json\nimport os\nx = eval('1')\n")
        try:
            proc = self.run_checker(fh.name)
        finally:
            os.unlink(fh.name)
        self.assertEqual(proc.returncode, 1)
        out = json.loads(proc.stdout)
        self.assertFalse(out["ok"])
        self.assertEqual([v["line"] for v in out["violations"]], [2, 3])
        self.assertEqual(set(out["violations"][0]), {"line", "col", "message"})

    def test_clean_source_on_stdin(self) -> None:
        proc = self.run_checker(stdin="import json\nprint(json.dumps({}))\n")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout), {"ok": True, "violations": []})
        proc = self.run_checker("-", stdin="import os\n")
        self.assertEqual(proc.returncode, 1)

    def test_unreadable_file(self) -> None:
        proc = self.run_checker("/nonexistent/agent.py")
        self.assertEqual(proc.returncode, 2)


if __name__ == "__main__":
    unittest.main()
