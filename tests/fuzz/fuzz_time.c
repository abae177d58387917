/* fuzz_time.c — durations ("1h30m") and RFC 3339 times (src/time.c). Properties: a
 * parsed duration formats to a text that parses to the same value; a parsed time after
 * 1970 formats (ms precision) to a text that parses back within 1 ms. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1), buf[128], tb[WQ_TIME_BUFSZ];
	int64_t us, again;
	wq_error e;

	memcpy(text, data, size);
	text[size] = '\0';
	if (wq_duration_parse(text, &us, &e) == WQ_OK) {
		wq_duration_format(us, buf, sizeof(buf));
		if (wq_duration_parse(buf, &again, &e) != WQ_OK || again != us)
			abort();
	}
	if (wq_time_parse(text, &us, &e) == WQ_OK && us >= 0) {
		wq_time_format(us, tb);
		if (wq_time_parse(tb, &again, &e) != WQ_OK || us - again < 0 ||
		    us - again >= WQ__US_PER_MS)
			abort();
	}
	free(text);
	return 0;
}
