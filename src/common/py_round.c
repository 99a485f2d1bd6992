/*
 * py_round.c — aip__py_round() (py_round.h).  Away from a tie the scaled
 * product settles it: the exact x * 10^n lies within half an ulp of the
 * computed one, so both have the same nearest integer k, and k / 10^n (two
 * exact doubles) is the correctly rounded value of the decimal, which is
 * what Python returns.  Near a tie, printf (glibc converts the exact binary
 * value, ties to even) and strtod decide, as they do for big values, as Python's own dtoa does.
 */
#include "py_round.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const double pow10_table[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

double aip__py_round(double x, int ndigits)
{
    if (!isfinite(x) || ndigits < 0 || ndigits > 15)
        return x;
    double p = pow10_table[ndigits];
    double y = x * p;
    if (fabs(y) < 0x1p52) {
        double frac = fabs(y - trunc(y));
        if (fabs(frac - 0.5) > fabs(y) * 0x1p-50 + 0x1p-60)
            return round(y) / p;
    }
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", ndigits, x);
    return strtod(buf, NULL);
}
