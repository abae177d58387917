/* backoff.c — retry delays: exponential with jitter, so retries of many tasks that failed
 * together spread out instead of arriving as one wave. */
#include "internal.h"

int64_t wq__backoff(int64_t base, int64_t max, int attempt, double rnd)
{
	int64_t d = base > 0 ? base : 0;

	if (attempt < 1)
		attempt = 1;
	for (int i = 1; i < attempt && (max <= 0 || d < max); i++) {
		if (d > INT64_MAX / 2)
			break;
		d *= 2;
	}
	if (max > 0 && d > max)
		d = max;
	/* ±25 % jitter; rnd is in [0,1). */
	return d + (int64_t)((double)d * 0.5 * (rnd - 0.5));
}
