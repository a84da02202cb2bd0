#!/usr/bin/env python3
"""Unit tests of series.py's spreading of the build lines over the series
(mm/Makefile and the selftests' build files), run by `make test`, or alone:
    python3 harness/test_series.py
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import series  # noqa: E402

ST = series.SELFTESTS_DIR


class Sources(unittest.TestCase):
    def test_selftest_lines_name_their_tests(self):
        self.assertEqual(series.selftest_sources("TEST_GEN_FILES += kmmscand_idle_test"),
                         [f"{ST}/kmmscand_idle_test.c"])
        self.assertEqual(series.selftest_sources('CATEGORY="kmmscand" run_test ./kmmscand_thp_test'),
                         [f"{ST}/kmmscand_thp_test.c"])

    def test_lines_naming_no_test(self):
        for ln in ("- kmmscand", "CONFIG_KMMSCAND=y", "", "\tkmmscand tests, for ..."):
            self.assertEqual(series.selftest_sources(ln), [], ln)

    def test_makefile_objects(self):
        self.assertEqual(series.makefile_sources("obj-$(CONFIG_KMMSCAND) += kmmscand.o kmmscand_mm.o"),
                         ["mm/kmmscand.c", "mm/kmmscand_mm.c"])


class WriteSelftests(unittest.TestCase):
    """A commit's build files: pristine lines always, a line naming tests
    once all of them are added, a line naming none once any test is."""

    def write(self, added):
        final = {f"{ST}/Makefile": [
            ("TEST_GEN_FILES += khugepaged", None),
            ("TEST_GEN_FILES += kmmscand_a_test", [f"{ST}/kmmscand_a_test.c"]),
            ("TEST_GEN_FILES += kmmscand_b_test", [f"{ST}/kmmscand_b_test.c"]),
            ("TEST_GEN_FILES += madv_populate", None)],
            f"{ST}/config": [("CONFIG_GUP_TEST=y", None), ("CONFIG_KMMSCAND=y", [])]}
        with tempfile.TemporaryDirectory() as repo:
            os.makedirs(os.path.join(repo, ST))
            series.write_selftests(repo, final, set(added))
            out = {}
            for path in final:
                with open(os.path.join(repo, path)) as f:
                    out[os.path.basename(path)] = f.read().split("\n")
            return out

    def test_before_any_test(self):
        out = self.write(["mm/kmmscand.c", f"{ST}/kmmscand_util.h"])
        self.assertEqual(out["Makefile"], ["TEST_GEN_FILES += khugepaged",
                                           "TEST_GEN_FILES += madv_populate"])
        self.assertEqual(out["config"], ["CONFIG_GUP_TEST=y"])

    def test_first_test(self):
        out = self.write([f"{ST}/kmmscand_a_test.c"])
        self.assertEqual(out["Makefile"], ["TEST_GEN_FILES += khugepaged",
                                           "TEST_GEN_FILES += kmmscand_a_test",
                                           "TEST_GEN_FILES += madv_populate"])
        self.assertEqual(out["config"], ["CONFIG_GUP_TEST=y", "CONFIG_KMMSCAND=y"])

    def test_all_tests(self):
        out = self.write([f"{ST}/kmmscand_a_test.c", f"{ST}/kmmscand_b_test.c"])
        self.assertEqual(len(out["Makefile"]), 4)


class RepoPatch(unittest.TestCase):
    """The patch of the repo: every line it adds that names a test names
    one that exists, and it adds lines only (series.py relies on both)."""

    def test_named_tests_exist(self):
        self.assertIn(series.SELFTESTS_PATCH, series.quilt_series())
        for ln in series.added_lines(series.SELFTESTS_PATCH):
            for src in series.selftest_sources(ln):
                self.assertTrue(os.path.exists(os.path.join(series.TOP, src)), f"{ln}: {src}")

    def test_adds_only(self):
        with open(os.path.join(series.TOP, "patches", series.SELFTESTS_PATCH)) as f:
            removed = [ln for ln in f if ln.startswith("-") and not ln.startswith("---")]
        self.assertEqual(removed, [])


if __name__ == "__main__":
    unittest.main()
