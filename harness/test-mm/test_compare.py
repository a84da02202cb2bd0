#!/usr/bin/env python3
"""Unit tests of compare.py's rules: synthetic passes in, verdicts out.

Run by harness/test-mm.sh before it builds anything:
    python3 -m unittest discover -s harness/test-mm -p test_compare.py
"""
import contextlib
import io
import os
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402

COLLAPSE = "Collapse PTE table full of different compound pages"
KH = "collapse_compound_extreme (madvise:anon)"


def block(p, tid, out, rc=0, stat=None, numa=None, mig=()):
    """The guest.sh markers of one test in one pass."""
    st = {"kmmscand_promote_success": 40 if p == "on" else 0,
          "thp_split_kmmscand": 0, "thp_split_demotion": 0, "thp_split_other": 0,
          "thp_kmmscand": 0, "overrun": 0}
    st.update(stat or {})
    nm = {"n0": 10, "n1": 90, "samples": 4, "promoted": 0}
    if p == "on":
        nm.update(n0=60, n1=40, promoted=30)
    nm.update(numa or {})
    s = [f"@@MM-BEGIN {p} {tid}@@"] + list(out) + [
        "", f"@@MM-END {p} {tid} rc={rc} secs=3 timeout=0@@",
        f"@@MM-STAT {p} {tid} " + " ".join(f"{k}={v}" for k, v in st.items()) + "@@"]
    for line, reason, ok, fl, sp, *base in mig:
        s.append(f"@@MM-MIG {p} {tid} line={line} reason={reason} thp_succeeded={ok} "
                 f"thp_failed={fl} thp_split={sp}" +
                 (f" succeeded={base[0]} failed={base[1]}" if base else "") + "@@")
    s.append(f"@@MM-NUMA {p} {tid} " + " ".join(f"{k}={v}" for k, v in nm.items()) + "@@")
    return s


def tap(*results):
    """TAP lines: ("pass"|"fail"|"skip", description)."""
    out = ["TAP version 13", f"1..{len(results)}"]
    for n, (st, d) in enumerate(results, 1):
        out.append({"pass": f"ok {n} {d}", "fail": f"not ok {n} {d}",
                    "skip": f"ok {n} {d} # SKIP no reason"}[st])
    return out


def kh_out(result):
    """khugepaged's output around the collapse test (lines 1..4)."""
    return ["", f"Run test: {KH}",
            f"\rConstruct PTE page table full of different PTE-mapped compound pages 512/512..."
            f"{COLLAPSE}.... {result}",
            "Run test: next (madvise:anon)"]


class Verdicts:
    """compare.py's verdict lines, looked up by check name."""

    def __init__(self):
        self.lines = []

    def _find(self, name):
        for tag, rest in self.lines:
            if rest == name:
                return tag, ""
            if rest.startswith(name + ": "):
                return tag, rest[len(name) + 2:]
        return None

    def __contains__(self, name):
        return self._find(name) is not None

    def __getitem__(self, name):
        return self._find(name)

    def items(self):
        return [(rest.split(": ")[0], (tag, rest)) for tag, rest in self.lines]


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        os.mkdir(os.path.join(self.d, "repro"))
        open(os.path.join(self.d, "repro", "r.c"), "w").close()
        self.expected = textwrap.dedent(f"""\
            khugepaged "*{COLLAPSE}" fail no-kmmscand-split,migration-around repro/r.c a migration held a page
            khugepaged (exit) fail listed-subtest-failed repro/r.c the exit status of the above
            """)
        self.known = "migration self-placed - moves its own pages\n"
        self.repro_rc = {"r": 0}

    def tearDown(self):
        self.tmp.cleanup()

    def judge(self, tests, blocks, mm_set="full"):
        """Run compare.main on the passes; return (status, {name: (TAG, why)}, table)."""
        w = lambda n, s: open(os.path.join(self.d, n), "w").write(s)  # noqa: E731
        w("tests.list", "".join(f"{t} 60 {t}\n" for t in tests))
        w("expected-diffs", self.expected)
        w("known-limits", self.known)
        text = []
        for p in ("off", "on"):
            text.append(f"@@MM-PASS-BEGIN {p}@@")
            text += [line for b in blocks if b[0] == p for line in b[1]]
            text.append(f"@@MM-PASS-END {p} secs=9 kmmscand_promote_success={40 if p == 'on' else 0}@@")
        text += [f"@@MM-REPRO-END {n} rc={rc}@@" for n, rc in self.repro_rc.items()]
        w("stdout.log", "\n".join(text) + "\n")
        w("console.log", "")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = compare.main([
                "--stdout", os.path.join(self.d, "stdout.log"),
                "--console", os.path.join(self.d, "console.log"),
                "--tests", os.path.join(self.d, "tests.list"),
                "--expected", os.path.join(self.d, "expected-diffs"),
                "--known", os.path.join(self.d, "known-limits"),
                "--table", os.path.join(self.d, "table.txt"),
                "--set", mm_set, "--repros", "r"])
        # Subtest names may hold ": ": split the "why" off after the name.
        res = Verdicts()
        for line in out.getvalue().splitlines():
            tag, _, rest = line.partition(" ")
            if tag in ("PASS", "FAIL", "SKIP"):
                res.lines.append((tag, rest))
        self.out = out.getvalue()
        with open(os.path.join(self.d, "table.txt")) as f:
            table = f.read()
        return rc, res, table

    def assertVerdict(self, res, name, tag, why=""):
        self.assertIn(name, res, self.out)
        self.assertEqual(tag, res[name][0], f"{name}: {res[name]}\n{self.out}")
        self.assertIn(why, res[name][1], self.out)

    def no_fail(self, res):
        return [n for n, (t, _) in res.items() if t == "FAIL"]


class ExpectedDiffEvidence(Case):
    """An expected difference needs this run's evidence (D4)."""

    def collapse(self, stat=None, mig=((1, "demotion", 0, 0, 3),)):
        return self.judge(["khugepaged"], [
            ("off", block("off", "khugepaged", kh_out("OK"))),
            ("on", block("on", "khugepaged", kh_out("Fail"), rc=1, stat=stat, mig=mig))])

    def test_accepted_with_evidence(self):
        rc, res, _ = self.collapse()
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "PASS", "off=pass on=fail, expected")
        self.assertVerdict(res, "mm:khugepaged:(exit)", "PASS", "expected")
        self.assertEqual([], self.no_fail(res))
        self.assertEqual(0, rc)

    def test_kmmscand_split_refuses(self):
        rc, res, _ = self.collapse(stat={"thp_split_kmmscand": 1})
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "FAIL", "without evidence")
        self.assertEqual(1, rc)

    def test_incomplete_trace_refuses(self):
        _, res, _ = self.collapse(stat={"overrun": 5})
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "FAIL", "incomplete")

    def test_no_migration_refuses(self):
        _, res, _ = self.collapse(mig=())
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "FAIL", "migration-around")

    def test_other_migration_outside_window_refuses(self):
        # After the next subtest's result: not around the collapse.
        out_on = kh_out("Fail") + ["Other check.... OK", "Last line"]
        rc, res, _ = self.judge(["khugepaged"], [
            ("off", block("off", "khugepaged", kh_out("OK") + ["Other check.... OK", "Last line"])),
            ("on", block("on", "khugepaged", out_on, rc=1, mig=((5, "demotion", 1, 0, 0),)))])
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "FAIL", "migration-around")

    def test_kmmscand_base_page_migration_counts(self):
        # The pieces of the split THPs are order-0 folios that kmmscand
        # promotes: its migration holds them as move_pages(2) would.
        rc, res, _ = self.collapse(mig=((1, "kmmscand", 0, 0, 0, 7, 0),))
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "PASS", "expected")
        self.assertEqual(0, rc)

    def test_other_thp_migration_still_judged(self):
        # The evidence kind stays available to entries that ask for it.
        run = compare.Run()
        run.line = {"k": 5}
        run.mig = [(5, "kmmscand", 1, 0, 0, 0, 0)]
        self.assertFalse(compare.evidence_holds("other-thp-migration", run, "k", [])[0])
        run.mig.append((5, "demotion", 0, 0, 1, 0, 0))
        self.assertTrue(compare.evidence_holds("other-thp-migration", run, "k", [])[0])

    def test_old_mig_lines_without_base_pages(self):
        rc, _, _ = self.collapse(mig=((1, "demotion", 0, 0, 3),))
        self.assertEqual(0, rc)

    def test_exit_alone_refused(self):
        # The exit status differs but no listed subtest failed.
        _, res, _ = self.judge(["khugepaged"], [
            ("off", block("off", "khugepaged", kh_out("OK"))),
            ("on", block("on", "khugepaged", kh_out("OK"), rc=1))])
        self.assertVerdict(res, "mm:khugepaged:(exit)", "FAIL", "listed-subtest-failed")

    def test_exit_with_refused_subtest_refused(self):
        _, res, _ = self.collapse(stat={"thp_split_kmmscand": 1})
        self.assertVerdict(res, "mm:khugepaged:(exit)", "FAIL", "no accepted failing subtest")

    def test_repro_cannot_run_fails_entry(self):
        self.repro_rc = {"r": 4}
        rc, res, _ = self.collapse()
        self.assertVerdict(res, "mm:repro:r", "FAIL", "cannot run here")
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "FAIL", "did not reproduce")
        self.assertEqual(1, rc)

    def test_repro_not_reproducing_fails_entry(self):
        self.repro_rc = {"r": 1}
        _, res, _ = self.collapse()
        self.assertVerdict(res, f"mm:khugepaged:{KH}: {COLLAPSE}", "FAIL", "did not reproduce")

    def test_repro_named_by_no_entry_fails_nothing(self):
        self.expected = ""
        self.repro_rc = {"r": 4}
        rc, res, _ = self.judge(["cow"], [
            ("off", block("off", "cow", tap(("pass", "a")))),
            ("on", block("on", "cow", tap(("pass", "a"))))])
        self.assertVerdict(res, "mm:repro:r", "SKIP", "no expected difference rests on it")
        self.assertEqual(0, rc)

    def test_unlisted_difference_fails(self):
        _, res, _ = self.judge(["cow"], [
            ("off", block("off", "cow", tap(("pass", "a"), ("pass", "b")))),
            ("on", block("on", "cow", tap(("pass", "a"), ("fail", "b")), rc=1))])
        self.assertVerdict(res, "mm:cow:b", "FAIL", "off=pass on=fail")

    def test_real_files_parse(self):
        exp = compare.load_expected(os.path.join(HERE, "expected-diffs"), HERE)
        self.assertTrue(exp)
        for e in exp:
            self.assertTrue(e["evidence"], e)
        self.assertTrue(compare.load_known(os.path.join(HERE, "known-limits")))


class NoSignal(Case):
    """Identical failures and all-skip tests are no pass (D6), no-baseline (W3)."""

    def test_identical_failure_fails(self):
        rc, res, _ = self.judge(["cow"], [
            (p, block(p, "cow", tap(("pass", "a"), ("fail", "b")), rc=1)) for p in ("off", "on")])
        self.assertVerdict(res, "mm:cow:no-signal", "FAIL", "fails identically in both passes: (exit), b")
        self.assertEqual(1, rc)

    def test_identical_exit_failure_fails(self):
        _, res, _ = self.judge(["x"], [(p, block(p, "x", ["no tap"], rc=1)) for p in ("off", "on")])
        self.assertVerdict(res, "mm:x:no-signal", "FAIL", "(exit)")
        self.assertNotIn("mm:x", res)

    def test_identical_failure_known_broken_skips(self):
        self.known += "cow broken b needs a feature the VM lacks\n"
        rc, res, _ = self.judge(["cow"], [
            (p, block(p, "cow", tap(("pass", "a"), ("fail", "b")), rc=1)) for p in ("off", "on")])
        self.assertVerdict(res, "mm:cow:no-signal", "SKIP", "needs a feature the VM lacks")
        self.assertVerdict(res, "mm:cow", "PASS", "identical")
        self.assertEqual(0, rc)

    def test_all_skipped_is_no_signal(self):
        _, res, _ = self.judge(["split"], [
            (p, block(p, "split", tap(("skip", "a"), ("skip", "b")))) for p in ("off", "on")])
        self.assertVerdict(res, "mm:split", "SKIP", "no signal")

    def test_identical_pass_passes(self):
        rc, res, _ = self.judge(["cow"], [
            (p, block(p, "cow", tap(("pass", "a"), ("skip", "b")))) for p in ("off", "on")])
        self.assertVerdict(res, "mm:cow", "PASS", "identical in both passes")
        self.assertEqual(0, rc)

    def nobase(self, mm_set, on_status="pass", n=1):
        names = [f"sub {chr(ord('a') + i)}" for i in range(n)]
        subs_off = [("fail", k) for k in names]
        subs_on = [(on_status, k) for k in names]
        return self.judge(["t"], [
            ("off", block("off", "t", tap(("pass", "a"), *subs_off), rc=1)),
            ("on", block("on", "t", tap(("pass", "a"), *subs_on)))], mm_set)

    def test_no_baseline_skips_in_full(self):
        rc, res, _ = self.nobase("full")
        self.assertVerdict(res, "mm:t:no-baseline", "SKIP", "1 subtest(s)")
        self.assertEqual(0, rc)

    def test_no_baseline_fails_in_ci(self):
        rc, res, _ = self.nobase("ci")
        self.assertVerdict(res, "mm:t:no-baseline", "FAIL", "MM_SET=ci")
        self.assertEqual(1, rc)

    def test_no_baseline_not_granted_to_skip(self):
        _, res, _ = self.nobase("full", on_status="skip")
        self.assertNotIn("mm:t:no-baseline", res)
        self.assertVerdict(res, "mm:t:sub a", "FAIL", "off=fail on=skip")

    def test_too_many_no_baseline_fail(self):
        rc, res, _ = self.nobase("full", n=compare.MAX_NO_BASELINE + 1)
        self.assertVerdict(res, "mm:no-baseline", "FAIL", "no baseline")
        self.assertEqual(1, rc)

    def test_few_no_baseline_pass(self):
        _, res, _ = self.nobase("full", n=compare.MAX_NO_BASELINE)
        self.assertNotIn("mm:no-baseline", res)


class PerTestEvidence(Case):
    """Per test: node 1 in the off pass, promotion in the on pass, no split (W2)."""

    def one(self, mm_set="ci", numa_off=None, numa_on=None, stat_on=None, tid="cow"):
        """The test judged, beside a well-placed one ("big", ten times its
        pages) that keeps the placement over the whole pass right."""
        big = {"n0": 100, "n1": 900}
        return self.judge([tid, "big"], [
            ("off", block("off", tid, tap(("pass", "a")), numa=numa_off)),
            ("off", block("off", "big", tap(("pass", "a")), numa=big)),
            ("on", block("on", tid, tap(("pass", "a")), numa=numa_on, stat=stat_on)),
            ("on", block("on", "big", tap(("pass", "a"))))], mm_set)

    def test_exercised_passes(self):
        rc, res, table = self.one()
        self.assertVerdict(res, "mm:cow:exercised", "PASS", "90% of its sampled pages on node 1")
        self.assertEqual(0, rc)
        row = [r for r in table.splitlines() if r.startswith("cow ")][0].split()
        self.assertIn("90%/40%", row)
        self.assertIn("30", row)

    def test_node0_off_pass_not_exercised_ci(self):
        rc, res, _ = self.one(numa_off={"n0": 90, "n1": 10})
        self.assertVerdict(res, "mm:cow:exercised", "FAIL", "only 10%")
        self.assertEqual(1, rc)

    def test_no_samples_not_exercised_ci(self):
        _, res, _ = self.one(numa_off={"samples": 0})
        self.assertVerdict(res, "mm:cow:exercised", "FAIL", "no numa_maps sample")

    def test_not_promoted_not_exercised_ci(self):
        _, res, _ = self.one(numa_on={"promoted": 0})
        self.assertVerdict(res, "mm:cow:exercised", "FAIL", "no page seen promoted")

    def test_not_exercised_skips_in_full(self):
        rc, res, _ = self.one(mm_set="full", numa_off={"n0": 90, "n1": 10})
        self.assertVerdict(res, "mm:cow:exercised", "SKIP", "not exercised")
        self.assertEqual(0, rc)

    def test_not_exercised_listed_skips_in_ci(self):
        self.known += "cow not-exercised - its pages are pinned on node 0\n"
        rc, res, _ = self.one(numa_off={"n0": 90, "n1": 10})
        self.assertVerdict(res, "mm:cow:exercised", "SKIP", "pinned on node 0")
        self.assertEqual(0, rc)

    def test_self_placed_not_judged(self):
        rc, res, _ = self.one(tid="migration", numa_off={"n0": 50, "n1": 50}, numa_on={"promoted": 0})
        self.assertVerdict(res, "mm:migration:exercised", "SKIP", "places its pages itself")
        self.assertEqual(0, rc)

    def test_kmmscand_split_fails(self):
        rc, res, _ = self.one(stat_on={"thp_split_kmmscand": 2})
        self.assertVerdict(res, "mm:cow:thp-split", "FAIL", "split 2 THP")
        self.assertEqual(1, rc)

    def test_kmmscand_split_allowed(self):
        self.known += "cow thp-split - it asks for it\n"
        rc, res, _ = self.one(stat_on={"thp_split_kmmscand": 2})
        self.assertVerdict(res, "mm:cow:thp-split", "PASS", "allowed")
        self.assertEqual(0, rc)


if __name__ == "__main__":
    unittest.main()
