#!/usr/bin/env python3
"""The oracle for tests/oracle.rs: fits each data set of block maxima with
scipy (scipy.stats.genextreme.fit; its shape c is -xi) and pyextremes (block
maxima, MLE, return values with 95 % bootstrap intervals).

Input: one data set a line, "name value value ...".
Output: one line a data set, "name xi location scale" then, for each return
period asked (in blocks), "value lower upper".

scipy's default starting point for genextreme (a shape from the skewness,
location and scale from the moments) leaves its simplex stuck far from the
maximum on maxima of this size (seen: c = -6.6 on 200 maxima near 50 000);
both fits here start from the Gumbel distribution with the data's mean and
deviation instead, the start rtlat's own fit uses.

Exit status 3, with the module's name, when scipy or pyextremes is missing.
"""
import multiprocessing
import os
import sys

try:
    import numpy as np
    import pandas as pd
    from scipy.stats._continuous_distns import genextreme_gen
    from pyextremes import EVA
except ImportError as error:
    print(f"missing Python module: {error.name}", file=sys.stderr)
    sys.exit(3)

RETURN_PERIODS = [10, 100]
# Enough for a rough interval (its ends are about the extremes of 20
# refits; the points must agree exactly anyway);
# each sample is a scipy fit, the test's main cost.
BOOTSTRAP_SAMPLES = 20


class GumbelStart(genextreme_gen):
    """scipy's GEV, its fit started from the Gumbel moments."""

    def _fitstart(self, data, args=None):
        mean, deviation = np.mean(data), np.std(data)
        return (0.0, mean - 0.45 * deviation, 0.78 * deviation)


def answer(line):
    """The oracle's line for one data set."""
    gev = GumbelStart(name="genextreme")
    np.random.seed(26)
    name, *values = line.split()
    data = np.array([float(v) for v in values])
    c, loc, scale = gev.fit(data)
    # One block a day: pyextremes' block maxima are then the data.
    days = pd.date_range("2000-01-01", periods=len(data), freq="D")
    eva = EVA(pd.Series(data, index=days))
    eva.get_extremes(method="BM", block_size="1D")
    eva.fit_model(model="MLE", distribution=gev)
    value, lower, upper = eva.get_return_value(
        return_period=RETURN_PERIODS,
        return_period_size="1D",
        alpha=0.95,
        n_samples=BOOTSTRAP_SAMPLES,
    )
    fields = [name, -c, loc, scale]
    for i in range(len(RETURN_PERIODS)):
        fields += [value[i], lower[i], upper[i]]
    return " ".join(str(f) for f in fields)


def main():
    source, target = sys.argv[1], sys.argv[2]
    # The data sets in parallel: the bootstrap's refits are the cost.
    with multiprocessing.Pool(min(3, os.cpu_count() or 1)) as pool:
        lines = pool.map(answer, open(source).read().splitlines())
    with open(target, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
