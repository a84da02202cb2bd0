#!/usr/bin/env python3
"""Unit tests of results.py and klog.py, the judges of `make test`.

Run by `make test` before the build (a host check), or alone:
    python3 harness/test_results.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import klog  # noqa: E402
import results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

KUNIT_OK = """\
[    1.000000] KTAP version 1
[    1.000001] 1..1
[    1.000002]     KTAP version 1
[    1.000003]     # Subtest: kmmscand
[    1.000004]     1..2
[    1.000005]     ok 1 kmmscand_test_a
[    1.000006]     ok 2 kmmscand_test_b # SKIP no slow tier
[    1.000007] ok 1 kmmscand
"""


def selftest(name, body, rc=0):
    return "@@KMM-BEGIN %s@@\n%s@@KMM-END %s %d@@\n" % (name, body, name, rc)


class KunitTest(unittest.TestCase):
    def run_kunit(self, text, expected=()):
        t = results.Tally()
        results.parse_kunit(text, list(expected), t)
        return t

    def test_cases_count(self):
        t = self.run_kunit(KUNIT_OK, ["kmmscand"])
        self.assertEqual((t.passed, t.failed, t.skipped), (1, 0, 1))
        self.assertIn("PASS kunit:kmmscand.kmmscand_test_a", t.lines)

    def test_failed_case(self):
        t = self.run_kunit(KUNIT_OK.replace("    ok 1 kmmscand_test_a",
                                            "    not ok 1 kmmscand_test_a"))
        self.assertEqual(t.failed, 1)
        self.assertIn("FAIL kunit:kmmscand.kmmscand_test_a: see console log", t.lines)

    def test_suite_that_never_ran(self):
        t = self.run_kunit(KUNIT_OK, ["kmmscand", "kmmscand-sources"])
        self.assertEqual(t.failed, 1)
        self.assertTrue(t.lines[-1].startswith("FAIL kunit:kmmscand-sources: expected suite"))

    def test_suite_failed_without_a_failed_case(self):
        t = self.run_kunit(KUNIT_OK.replace("] ok 1 kmmscand", "] not ok 1 kmmscand"))
        self.assertEqual(t.failed, 1)
        self.assertIn("FAIL kunit:kmmscand: suite failed", t.lines)


class SelftestTest(unittest.TestCase):
    def run_st(self, text, expected=()):
        t = results.Tally()
        results.parse_selftests(text, list(expected), t)
        return t

    def test_pass_skip(self):
        t = self.run_st(selftest("a", "1..2\nok 1 x\nok 2 y # SKIP no node 2\n"), ["a"])
        self.assertEqual((t.passed, t.failed, t.skipped), (1, 0, 1))

    def test_exit_status_without_failed_line(self):
        t = self.run_st(selftest("a", "1..1\nok 1 x\n", rc=1))
        self.assertEqual(t.failed, 1)
        self.assertIn("FAIL selftest:a: exit status 1", t.lines)

    def test_exit_4_is_kselftest_skip(self):
        t = self.run_st(selftest("a", "1..1\nok 1 x # SKIP why\n", rc=4))
        self.assertEqual((t.failed, t.skipped), (0, 1))

    def test_no_tap(self):
        t = self.run_st(selftest("a", "garbage\n"))
        self.assertIn("FAIL selftest:a: exit status 0, no TAP results", t.lines)

    def test_plan_mismatch(self):
        t = self.run_st(selftest("a", "1..3\nok 1 x\nok 2 y\n"))
        self.assertIn("FAIL selftest:a: TAP plan 1..3, 2 result(s)", t.lines)

    def test_never_ran_and_unfinished(self):
        t = self.run_st("@@KMM-BEGIN a@@\n1..1\n", ["a", "b"])
        self.assertIn("FAIL selftest:a: did not finish (VM died or timed out)", t.lines)
        self.assertIn("FAIL selftest:b: never ran", t.lines)

    def test_failed_case_keeps_its_last_lines(self):
        body = "1..2\n# RUN a.x ...\n# fine\nok 1 a.x\n# RUN a.y ...\n" + \
            "".join(f"# line {i}\n" for i in range(20)) + "not ok 2 a.y\n"
        t = self.run_st(selftest("a", body))
        self.assertEqual(len(t.details), 1)
        name, lines = t.details[0]
        self.assertEqual(name, "selftest:a:a.y")
        self.assertEqual(len(lines), results.DETAIL_LINES)
        self.assertEqual(lines[-1], "not ok 2 a.y")
        self.assertIn("# line 19", lines)

    def test_indented_results_are_not_counted(self):
        # a nested TAP line (a subtest's own plan) is not a result of the binary
        t = self.run_st(selftest("a", "1..1\n    ok 1 inner\nok 1 x\n"))
        self.assertEqual((t.passed, t.failed), (1, 0))


class ExpectedSkipsTest(unittest.TestCase):
    def test_unlisted_skip_fails(self):
        t = results.Tally(["selftest:a:listed*"])
        t.add("skip", "selftest:a:listed_one", "why")
        t.add("skip", "selftest:a:other", "why")
        self.assertEqual((t.skipped, t.failed), (1, 1))
        self.assertTrue(t.lines[1].startswith("FAIL selftest:a:other: unexpected skip"))

    def test_reason_required(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\nselftest:a:x | a reason\nselftest:a:y\n")
        try:
            with self.assertRaises(SystemExit):
                results.read_expected_skips(f.name)
        finally:
            os.unlink(f.name)


class KlogTest(unittest.TestCase):
    def test_reports(self):
        text = ("[    2.0] WARNING: CPU: 1 PID: 7 at mm/kmmscand.c:10 f+0x1/0x2\n"
                "[    2.1] BUG: sleeping function called from invalid context\n"
                "[    2.2] kmmscand: started\n")
        kinds = [k for k, _ in klog.bad_lines(text)]
        self.assertEqual(kinds, ["warning", "bug"])
        self.assertEqual(klog.bad_lines(text, allow=["warning", "bug"]), [])

    def test_clean(self):
        self.assertEqual(klog.bad_lines("[ 1.0] Demotion targets for Node 0: preferred: 1\n"), [])


class MainTest(unittest.TestCase):
    """The whole command: last line and exit status."""

    def run_main(self, host, *args):
        with tempfile.TemporaryDirectory() as d:
            hp = os.path.join(d, "host.txt")
            with open(hp, "w") as f:
                f.write(host)
            p = subprocess.run([sys.executable, os.path.join(HERE, "results.py"),
                                "--host", hp] + list(args),
                               capture_output=True, text=True)
            return p.returncode, p.stdout.splitlines()

    def test_last_line_and_status(self):
        rc, out = self.run_main("ok build:kernel\nskip x: why\n")
        self.assertEqual((rc, out[-1]), (0, "1 passed, 0 failed, 1 skipped"))
        rc, out = self.run_main("ok build:kernel\nnot ok checkpatch:f: 2 issue(s)\n")
        self.assertEqual((rc, out[-1]), (1, "1 passed, 1 failed"))

    def test_vm_status(self):
        with tempfile.TemporaryDirectory() as d:
            c = os.path.join(d, "console.log")
            with open(c, "w") as f:
                f.write("[ 1.0] booted\n")
            rc, out = self.run_main("", "--console", c, "--vm-rc", "124")
            self.assertEqual(rc, 1)
            self.assertIn("FAIL vm: timed out (wall-clock budget exceeded)", out)


if __name__ == "__main__":
    unittest.main()
