"""Hand-computed cases for bench/placement.py (run by bench/test-report.sh,
i.e. by `make test`)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placement import modelled_speedup, time_avg  # noqa: E402


class TimeAvg(unittest.TestCase):
    def test_linear_ramp(self):
        # 0 -> 1 over one interval: the mean of start and end, 0.5
        self.assertAlmostEqual(time_avg([(0, 0.0), (1, 1.0)]), 0.5)

    def test_trapezoid_unequal_intervals(self):
        # 0 for 1 s, ramp 0->1 over 1 s, 1 for 2 s: (0 + 0.5 + 2) / 4
        self.assertAlmostEqual(time_avg([(0, 0), (1, 0), (2, 1), (4, 1)]), 0.625)

    def test_weights_by_time_not_by_sample(self):
        # dense samples while slow, one long fast stretch: the mean of the
        # samples would be 1/3, the time-weighted one (0.2 * 0.5 + 3.5) / 4
        s = [(0, 0), (0.1, 0), (0.2, 0), (0.3, 0), (0.5, 1), (4.0, 1)]
        self.assertAlmostEqual(time_avg(s), (0.5 * 0.2 * 1 + 3.5 * 1) / 4.0)

    def test_promotion_credited_from_when_it_happened(self):
        # a promotion between 0.9 s and 1.0 s of a 10 s run at 100 ms
        # sampling: (0.1 * 0.5 + 9.0) / 10 = 0.905, not 1.0
        s = [(0.1 * i, 0.0 if i <= 9 else 1.0) for i in range(101)]
        self.assertAlmostEqual(time_avg(s), 0.905)

    def test_span_from_first_sample(self):
        # span 2..4 s, constant 0.3
        self.assertAlmostEqual(time_avg([(2, 0.3), (3, 0.3), (4, 0.3)]), 0.3)

    def test_degenerate(self):
        self.assertIsNone(time_avg([]))
        self.assertEqual(time_avg([(1.0, 0.4)]), 0.4)
        self.assertEqual(time_avg([(1.0, 0.2), (1.0, 0.4)]), 0.4)


class ModelledSpeedup(unittest.TestCase):
    def test_none_is_one(self):
        self.assertAlmostEqual(modelled_speedup(0.0, 0.0, 3), 1.0)

    def test_half_on_fast_node(self):
        # none: 2 L0 per access; policy: 0.5 + 0.5 * 2 = 1.5 -> 4/3
        self.assertAlmostEqual(modelled_speedup(0.5, 0.0, 2), 4 / 3)
        # 3x: 3 / (0.5 + 1.5) = 1.5; 10x: 10 / 5.5
        self.assertAlmostEqual(modelled_speedup(0.5, 0.0, 3), 1.5)
        self.assertAlmostEqual(modelled_speedup(0.5, 0.0, 10), 10 / 5.5)

    def test_all_fast_is_the_ratio(self):
        self.assertAlmostEqual(modelled_speedup(1.0, 0.0, 3), 3.0)

    def test_none_reference_not_zero(self):
        # none already 0.2 on the fast node, policy 0.6, ratio 3:
        # (0.2 + 0.8 * 3) / (0.6 + 0.4 * 3) = 2.6 / 1.8
        self.assertAlmostEqual(modelled_speedup(0.6, 0.2, 3), 2.6 / 1.8)

    def test_missing(self):
        self.assertIsNone(modelled_speedup(None, 0.0, 3))
        self.assertIsNone(modelled_speedup(0.5, None, 3))


if __name__ == "__main__":
    unittest.main()
