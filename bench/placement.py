"""bench/placement.py - the placement metrics of bench/report.py, as pure
functions (unit-tested by bench/test_placement.py).

Both are computed from the workload's per-sample placement (T lines), with
every stretch of time weighted by its length, never by the accesses the
workload completed in it: under TCG those count the CPU the workload got,
not the speed of its memory, and a promoter that slows the workload while
its pages are still slow would otherwise be credited for it.
"""


def time_avg(samples):
    """Time-weighted mean of a placement share over the sampled span.

    samples: [(t, share)] in time order.  Between two samples the share is
    taken to move linearly (trapezoid), i.e. each interval counts the mean
    of its start and end placement, and a page promoted inside an interval
    is credited for about the part of it after the promotion, not for the
    whole interval.  Returns None without samples, the one value with a
    single sample or a zero span.
    """
    if not samples:
        return None
    span = samples[-1][0] - samples[0][0]
    if span <= 0:
        return samples[-1][1]
    area = 0.0
    for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
        area += (t1 - t0) * (v0 + v1) / 2
    return area / span


def modelled_speedup(f, f_none, ratio):
    """Modelled speedup of a policy over 'none' for a memory-bound workload.

    f, f_none: time-weighted shares of the accesses served by the fast node
    under the policy and under 'none'; ratio: slow-node latency over
    fast-node latency (L1/L0).  Time per access f*L0 + (1-f)*L1, in units of
    L0: f + (1-f)*ratio; the speedup is none's time over the policy's.
    """
    if f is None or f_none is None or ratio <= 0:
        return None
    return (f_none + (1 - f_none) * ratio) / (f + (1 - f) * ratio)
