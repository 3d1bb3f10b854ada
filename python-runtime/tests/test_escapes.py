"""The escape corpus (escape_corpus.py): every attempt is refused by the static checker or
stopped by the sandboxed child, and the report says which layer stopped it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

from platform_runtime.checker import check_source

from .escape_corpus import CORPUS
from .support import RUNTIME_DIR, RuntimeServer, message_of, stage_of


class EscapeCorpusTest(unittest.TestCase):
    server: RuntimeServer
    outcomes: dict[str, str]
    skipped: dict[str, str]

    @classmethod
    def setUpClass(cls) -> None:
        # Static check off: runtime entries pass the checker anyway (asserted below), and the
        # static entries with a `stage` are run to show the sandbox stops them on its own.
        # logging.config is preloaded as Strands' dependencies load it in a real runtime, so
        # that the entries using it find it here too.
        cls.server = RuntimeServer("--no-static-check", "--preload", "logging.config")
        cls.scratch_dir = tempfile.mkdtemp(prefix="corpus-")
        cls.runtime_probe = os.path.join(RUNTIME_DIR, "platform_runtime", "corpus_probe_must_not_exist.py")
        _status, health, _ = cls.server.request_json("GET", "/health")
        available = {"seccomp": bool(health.get("seccompSupported")),
                     "boto3": "boto3" in health.get("preloaded", [])}
        cls.outcomes, cls.skipped = {}, {}
        to_run = []
        for entry in CORPUS:
            if "stage" not in entry:
                continue
            need = entry.get("needs")
            if need and not available.get(need):
                cls.skipped[entry["id"]] = f"needs {need}"
                continue
            to_run.append(entry)

        def run(entry):
            body = {"kind": "action", "source": entry["source"], "timeoutMs": 10_000,
                    "event": {"scratch": os.path.join(cls.scratch_dir, entry["id"]),
                              "runtimeFile": cls.runtime_probe}}
            body.update(entry.get("options", {}))
            events = cls.server.invoke(body)
            return entry["id"], stage_of(events), message_of(events)

        cls.messages = {}
        with ThreadPoolExecutor(max_workers=8) as pool:
            for entry_id, stage, message in pool.map(run, to_run):
                cls.outcomes[entry_id] = stage
                cls.messages[entry_id] = message

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        shutil.rmtree(cls.scratch_dir, ignore_errors=True)
        static = [e for e in CORPUS if e["expect"] == "static"]
        runtime = [e for e in CORPUS if e["expect"] == "runtime"]
        lines = [f"\nescape corpus: {len(CORPUS)} attempts, {len(static)} refused statically, "
                 f"{len(runtime)} stopped at run time; "
                 f"{sum(1 for e in static if e['id'] in cls.outcomes)} static ones also run unchecked"]
        for e in CORPUS:
            where = "checker" if e["expect"] == "static" else "runtime"
            extra = cls.outcomes.get(e["id"]) or cls.skipped.get(e["id"]) or "-"
            lines.append(f"  {e['id']:<32} {where:<8} runtime stage: {extra}")
        sys.stderr.write("\n".join(lines) + "\n")

    def test_corpus_is_large_enough(self) -> None:
        self.assertGreaterEqual(len(CORPUS), 40)
        ids = [e["id"] for e in CORPUS]
        self.assertEqual(len(ids), len(set(ids)), "duplicate corpus ids")
        self.assertTrue(all(e["expect"] in ("static", "runtime") for e in CORPUS))
        self.assertTrue(all("stage" in e for e in CORPUS if e["expect"] == "runtime"))

    def test_static_entries_are_refused_by_the_checker(self) -> None:
        for entry in CORPUS:
            if entry["expect"] != "static":
                continue
            with self.subTest(entry["id"]):
                self.assertNotEqual(check_source(entry["source"]), [],
                                    f"{entry['id']} passed the static checker")

    def test_runtime_entries_pass_the_checker(self) -> None:
        # Otherwise they would not test the sandbox at all.
        for entry in CORPUS:
            if entry["expect"] != "runtime":
                continue
            with self.subTest(entry["id"]):
                self.assertEqual(check_source(entry["source"]), [])

    def test_attempts_are_stopped_at_run_time_by_the_expected_layer(self) -> None:
        for entry in CORPUS:
            if entry["id"] not in self.outcomes:
                continue
            with self.subTest(entry["id"]):
                self.assertNotEqual(self.outcomes[entry["id"]], "ESCAPED")
                self.assertEqual(self.outcomes[entry["id"]], entry["stage"],
                                 self.messages[entry["id"]])
                if "reason" in entry:
                    self.assertIn(entry["reason"], self.messages[entry["id"]])

    def test_no_file_was_written(self) -> None:
        self.assertEqual(os.listdir(self.scratch_dir), [])
        self.assertFalse(os.path.exists(self.runtime_probe))


if __name__ == "__main__":
    unittest.main()
