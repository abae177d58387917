/* fuzz_zone.c — TZif files (src/zone.c). Property: any bytes are either refused with a
 * reason and no zone, or give a zone whose offset at any instant is a 32-bit value other
 * than INT32_MIN (a listed type's, checked on reading; or the footer's, at most
 * 24:59:59 either way). */
#include "zone.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const int64_t at[] = {-(INT64_C(1) << 40), -2208988800, 0, 1700000000,
				     2145916800, 4102444800, INT64_C(1) << 40};
	struct wq__zone *z = NULL;
	const char *why = NULL;

	if (wq__zone_parse(data, size, &z, &why) != WQ_OK) {
		if (z || !why || !*why)
			abort();
		return 0;
	}
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		int64_t o = wq__zone_offset(z, at[i]);
		if (o <= INT32_MIN || o > INT32_MAX)
			abort();
	}
	wq__zone_free(z);
	return 0;
}
