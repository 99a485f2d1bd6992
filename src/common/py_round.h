/*
 * py_round.h — Python's round(x, ndigits) in C, for the values msprof-
 * analyze computes with it (ratios and bandwidths of the cluster outputs
 * are round(..., 4) there).
 *
 * Python rounds the double's exact value to ndigits decimals, an exact tie
 * to even: round(0.78125, 4) is 0.7812.  C's round(x * 1e4) / 1e4 rounds
 * ties away from zero (0.7813) and rounds the product first; the outputs
 * then differed from msprof-analyze's in the last digit now and then.
 */
#ifndef AIP_PY_ROUND_H
#define AIP_PY_ROUND_H

/* aip__py_round() : Python's round(x, ndigits) for 0 <= ndigits <= 15. */
double aip__py_round(double x, int ndigits);

#endif
