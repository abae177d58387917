/* random.c — randomness for operation ids, instance ids and retry jitter. Never rand():
 * ids made by two processes started in the same second must still differ. */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

/* The bytes obtained: len unless the kernel has no entropy source at all. */
static size_t from_kernel(unsigned char *p, size_t len)
{
	size_t want = len;

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
	return want - len;
}

/*
 * A pool of random bytes per thread, drawn from the kernel POOL_BYTES at a time: one
 * getrandom(2) per enqueue (its operation id) was ~4 % of a batch enqueue's CPU (W1b,
 * perf: the system call and the kernel's per-call ChaCha set-up).
 *
 * Invariant: no byte is ever handed out twice, also across fork(). Each pool lives in a
 * page of its own marked MADV_WIPEONFORK, so a forked child finds it zeroed (avail 0)
 * and draws fresh bytes; children that share our memory (the spawn's vfork) only exec.
 * Where that page cannot be had (madvise refused: a kernel before 4.14, a seccomp
 * filter), every call goes to the kernel as before.
 */
#define POOL_BYTES 512
#define POOL_TAKE_MAX 64 /* larger requests go to the kernel */

struct pool {
	size_t avail; /* unused bytes at the end of b; 0 in a fresh or wiped page */
	unsigned char b[POOL_BYTES];
};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_key_t pool_key;
static size_t pool_page;
static int pool_off; /* 1: no pools (set once, read with __atomic) */

static void pool_free(void *p)
{
	munmap(p, pool_page);
}

static void pool_init(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	pool_page = pg > 0 ? (size_t)pg : 4096;
	if (pool_page < sizeof(struct pool) || pthread_key_create(&pool_key, pool_free) != 0)
		__atomic_store_n(&pool_off, 1, __ATOMIC_RELAXED);
}

/* This thread's pool, made on first use; NULL: ask the kernel. */
static struct pool *thread_pool(void)
{
	struct pool *p;

	if (pthread_once(&pool_once, pool_init) != 0 || __atomic_load_n(&pool_off, __ATOMIC_RELAXED))
		return NULL;
	if ((p = pthread_getspecific(pool_key)))
		return p;
	p = mmap(NULL, pool_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, pool_page, MADV_WIPEONFORK) != 0) {
		munmap(p, pool_page);
		__atomic_store_n(&pool_off, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (pthread_setspecific(pool_key, p) != 0) {
		munmap(p, pool_page);
		return NULL;
	}
	return p;
}

void wq__random_bytes(void *buf, size_t len)
{
	struct pool *p = len <= POOL_TAKE_MAX ? thread_pool() : NULL;

	if (p && p->avail < len) {
		p->avail = 0;
		if (from_kernel(p->b, POOL_BYTES) != POOL_BYTES)
			p = NULL; /* leave what the kernel gives, as without a pool */
		else
			p->avail = POOL_BYTES;
	}
	if (!p) {
		from_kernel(buf, len);
		return;
	}
	memcpy(buf, p->b + POOL_BYTES - p->avail, len);
	p->avail -= len;
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
