/* lazy.h — loading a library with dlopen on first use (lazy_load.c), for the tables of
 * lazy_curl.h and src/store/lazy_pq.h. */
#ifndef WQ_LAZY_H
#define WQ_LAZY_H

#include <pthread.h>
#include <stddef.h>

/* One library: its soname, its table as an array of pointers, and the outcome. */
struct wq__lazy {
	pthread_once_t once;
	const char *soname;
	void *table; /* a struct of n function pointers */
	const char *const *names;
	size_t n;
	int rc;
	char msg[256];
};

/* Called once per library (pthread_once): dlopen(soname, RTLD_NOW | RTLD_LOCAL) and
 * every name resolved into the table; l->rc 0, or -1 with the reason in l->msg. */
void wq__lazy_open(struct wq__lazy *l);

#define WQ__LAZY_NAME(f) #f,

#endif /* WQ_LAZY_H */
