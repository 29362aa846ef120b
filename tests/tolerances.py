"""Float tolerances of the tests, each derived from what may differ (issue 31).

A comparison allows for what can legitimately differ between the two sides, and no more:

* **rounding only** (the same formula computed another way: a loop against its vectorised form, a
  sum in another order, a quotient for a product, a closed form against an exact enumeration):
  a multiple of :data:`EPS`, the number of roundings that can add up, from the constants here;
* **a solver's stopping rule** (an EM, a bisection, scipy's ``brentq``/``minimize``, the IDUE
  interior-point method): derived at the test from that rule and the problem's conditioning,
  with a comment saying why, and measured (a run to a 100x tighter rule lies well inside it);
* **the 2^-32 grid** of the direct mechanisms: :func:`tests.conftest.grid_rtol`.

Another machine's numpy or scipy (another release, another CPU's SIMD paths) rounds differently
and may end an iterative solver a few steps earlier or later: a tolerance on a solver's output
taken from rounding alone is wrong, and one taken from the solver's rule is not.
"""

from __future__ import annotations

import numpy as np

#: Machine epsilon of a double, 2.2e-16: the unit of every rounding tolerance.
EPS = float(np.finfo(float).eps)
#: The same short formula computed another way: a few dozen roundings (64 eps = 1.4e-14).
FLOAT_RTOL = 64 * EPS
#: The same long computation done another way (sums over thousands of terms, a few iterations of
#: a fixed map, an enumeration in log space): up to 4096 roundings (9.1e-13).
SUM_RTOL = 2**12 * EPS
