/* operation_id.c — the generated operation id of an unkeyed task (wave 5, issue 11).
 *
 * "op_" + 32 hex digits: 13 of the wall clock in microseconds (52 bits: until the year
 * 2112), then 19 random ones (76 bits). The id is unique on tasks through the index
 * tasks_operation, and its inserts land where the clock puts them: at the right edge,
 * next to the previous one, so an enqueue dirties the index's last leaf (in the page
 * cache already) instead of a random one of a big index (read from disk, written back
 * by the checkpoint, split half empty). Ids of two processes or hosts still differ:
 * they would need the same microsecond and the same 76 random bits; clocks that
 * disagree or step back only put an insert elsewhere in the index (as every insert
 * was before). 76 random bits keep the id unguessable from its neighbours. */
#include "enqueue.h"

#include <stdint.h>
#include <time.h>

void wq__operation_id_at(char out[WQ__OPERATION_ID_BUFSZ], uint64_t us,
			 const unsigned char rnd[10])
{
	static const char digits[] = "0123456789abcdef";

	/* "op_%013" PRIx64 of the clock's low 52 bits, by hand: snprintf cost ~900
	 * instructions a task in a batch of enqueues (tests/unit/test_operation_id.c checks
	 * the two agree) */
	us &= UINT64_C(0xfffffffffffff);
	out[0] = 'o', out[1] = 'p', out[2] = '_';
	for (size_t i = 0; i < 13; i++)
		out[3 + i] = digits[(us >> (4 * (12 - i))) & 15];
	for (size_t i = 0; i < 19; i++) { /* 9.5 bytes: the low nibble of the last one */
		unsigned b = rnd[i / 2];

		out[3 + 13 + i] = digits[i % 2 ? b & 15 : b >> 4];
	}
	out[3 + 32] = '\0';
}

void wq__operation_id(char out[WQ__OPERATION_ID_BUFSZ])
{
	unsigned char rnd[10] = {0}; /* stays defined if the kernel gives no randomness */
	struct timespec ts;
	uint64_t us = 0;

	if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec > 0)
		us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	wq__random_bytes(rnd, sizeof rnd);
	wq__operation_id_at(out, us, rnd);
}
