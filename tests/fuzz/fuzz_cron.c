/* fuzz_cron.c — cron expressions (src/cron.c). Property: an accepted expression's next
 * slot after a time is later than it, is a whole minute, and the slot after that is
 * later still. */
#include "cron.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1);
	struct wq__cron c;
	int64_t after = INT64_C(1764547200000000), next = 0, next2 = 0; /* 2025-12-01 */
	wq_error e;

	memcpy(text, data, size);
	text[size] = '\0';
	if (wq__cron_parse(text, &c, &e) == WQ_OK &&
	    wq__cron_next(&c, "UTC", after, &next, &e) == WQ_OK) {
		if (next <= after || next % (60 * WQ__US_PER_S) != 0)
			abort();
		if (wq__cron_next(&c, "UTC", next, &next2, &e) == WQ_OK && next2 <= next)
			abort();
	}
	free(text);
	return 0;
}
