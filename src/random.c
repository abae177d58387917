/* random.c — randomness for operation ids, instance ids and retry jitter. Never rand():
 * ids made by two processes started in the same second must still differ. */
#include "internal.h"

#include <errno.h>
#include <sys/random.h>

void wq__random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break; /* the kernel has no entropy source at all: leave what we have */
		}
		p += n;
		len -= (size_t)n;
	}
}

void wq__random_hex(char *out, size_t nbytes)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char buf[64];

	if (nbytes > sizeof buf)
		nbytes = sizeof buf;
	wq__random_bytes(buf, nbytes);
	for (size_t i = 0; i < nbytes; i++) {
		out[2 * i] = digits[buf[i] >> 4];
		out[2 * i + 1] = digits[buf[i] & 15];
	}
	out[2 * nbytes] = '\0';
}

double wq__random_unit(void)
{
	uint64_t v;

	wq__random_bytes(&v, sizeof v);
	return (double)(v >> 11) / (double)(UINT64_C(1) << 53);
}
