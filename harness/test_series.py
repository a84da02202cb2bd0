#!/usr/bin/env python3
"""Unit tests of series.py's spreading of the build lines over the series
(mm/Makefile, the selftests' build files, MAINTAINERS), run by `make test`,
or alone:
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
        self.assertEqual(series.makefile_sources(
            "obj-$(CONFIG_KMMSCAND_KUNIT_TEST) += tests/kmmscand_policy_kunit.o"),
            ["mm/tests/kmmscand_policy_kunit.c"])


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

    def test_pattern_lines_with_the_first_test(self):
        # "kmmscand_*_test" names no test: it comes with the first one
        self.assertEqual(series.selftest_sources("kmmscand_*_test"), [])
        self.assertEqual(series.selftest_sources(
            "TEST_GEN_FILES += $(patsubst %.c,%,$(wildcard kmmscand_*_test.c))"), [])
        self.assertEqual(self.write([f"{ST}/kmmscand_c_test.c"])["config"],
                         ["CONFIG_GUP_TEST=y", "CONFIG_KMMSCAND=y"])

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


class Maintainers(unittest.TestCase):
    """MAINTAINERS' F: patterns and the section each commit carries."""

    def test_patterns(self):
        m = series.f_pattern_matches
        self.assertTrue(m("mm/kmmscand*", "mm/kmmscand_walk.c"))
        self.assertFalse(m("mm/kmmscand*", "mm/tests/kmmscand_policy_kunit.c"))
        self.assertTrue(m("mm/tests/", "mm/tests/kmmscand_policy_kunit.c"))
        self.assertTrue(m("include/linux/kmmscand.h", "include/linux/kmmscand.h"))
        self.assertFalse(m("include/linux/kmmscand.h", "include/linux/kmmscand.hh"))
        self.assertFalse(m("mm/kmmscand?.c", "mm/kmmscand.c"))

    def test_section_grows_with_the_files(self):
        final = (["X", ""], ["KMMSCAND", "S:\tMaintained", "F:\tmm/kmmscand*",
                             f"F:\t{ST}/kmmscand*"], ["Y"])
        with tempfile.TemporaryDirectory() as repo:
            def carried(added):
                series.write_maintainers(repo, final, set(added))
                with open(os.path.join(repo, "MAINTAINERS")) as f:
                    return f.read().split("\n")
            self.assertEqual(carried(["Documentation/x.rst"]), ["X", "", "Y"])
            self.assertEqual(carried(["mm/kmmscand.c"]),
                             ["X", "", "KMMSCAND", "S:\tMaintained", "F:\tmm/kmmscand*", "", "Y"])
            self.assertEqual(len(carried(["mm/kmmscand.c", f"{ST}/kmmscand_a_test.c"])), 8)

    def test_maintained_command(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("A\n\nKMMSCAND\nF:\tmm/kmmscand*\n\nB\n")
        try:
            sys.argv = ["series.py", "maintained", f.name, "mm/kmmscand_new.c"]
            self.assertEqual(series.main(), 0)
            sys.argv = ["series.py", "maintained", f.name, "mm/kmmscand_new.c", "mm/other.c"]
            self.assertEqual(series.main(), 1)
        finally:
            os.unlink(f.name)

    def test_every_overlay_file_maintained(self):
        pats = series.section_patterns(series.distributed_final(series.MAINTAINERS_PATCH))
        self.assertTrue(pats)
        for f in series.overlay_files():
            self.assertTrue(any(series.f_pattern_matches(p, f) for p in pats), f)


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
