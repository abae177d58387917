/* lazy_load.c — dlopen on first use: the loader (lazy.h) and libcurl (lazy_curl.h); libpq's
 * table is the store's (src/store/lazy_pq.c).
 *
 * Each library is loaded at most once per process (pthread_once), by its soname
 * (WQ_LIBPQ_SONAME, WQ_LIBCURL_SONAME from the build), RTLD_LOCAL so that its symbols
 * never interpose on a program's own copy; every function the callers use is resolved
 * then, so a missing one fails the load, never a later call. */
#define WQ_LAZY_NO_MACROS 1
#include "internal.h"
#include "lazy.h"
#include "lazy_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Resolves every name of a table; 0, or -1 with the reason in msg. */
static int resolve(void *lib, void *table, const char *const *names, size_t n, char *msg,
		   size_t msgsz)
{
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(lib, names[i]);

		if (!f) {
			snprintf(msg, msgsz, "%s", dlerror());
			return -1;
		}
		/* slot i of a struct of n function pointers (POSIX: they have void *'s size) */
		memcpy((char *)table + i * sizeof f, &f, sizeof f);
	}
	return 0;
}

void wq__lazy_open(struct wq__lazy *l)
{
	void *lib = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(l->msg, sizeof l->msg, "%s", dlerror());
		l->rc = -1;
		return;
	}
	l->rc = resolve(lib, l->table, l->names, l->n, l->msg, sizeof l->msg);
	if (l->rc)
		dlclose(lib); /* the table is not used when rc != 0 */
}


/* ---- libcurl ---- */

struct wq__curl_api wq__curl_api;
static const char *const curl_names[] = {WQ__CURL_FUNCS(WQ__LAZY_NAME)};
static struct wq__lazy curl_lib = {PTHREAD_ONCE_INIT, WQ_LIBCURL_SONAME, &wq__curl_api,
			       curl_names, WQ__ARRAY_LEN(curl_names), 0, ""};
_Static_assert(sizeof(struct wq__curl_api) == sizeof(curl_names) / sizeof(char *) * sizeof(void *),
	       "one slot per name");

static void curl_open(void)
{
	wq__lazy_open(&curl_lib);
}

int wq__lazy_curl_load(void)
{
	pthread_once(&curl_lib.once, curl_open);
	return curl_lib.rc;
}

CURLcode wq__lazy_curl_global_init(long flags)
{
	return wq__lazy_curl_load() ? CURLE_FAILED_INIT : wq__curl_api.curl_global_init(flags);
}

CURL *wq__lazy_curl_easy_init(void)
{
	return wq__lazy_curl_load() ? NULL : wq__curl_api.curl_easy_init();
}

CURLM *wq__lazy_curl_multi_init(void)
{
	return wq__lazy_curl_load() ? NULL : wq__curl_api.curl_multi_init();
}

CURLU *wq__lazy_curl_url(void)
{
	return wq__lazy_curl_load() ? NULL : wq__curl_api.curl_url();
}

const char *wq__lazy_curl_easy_strerror(CURLcode c)
{
	return wq__lazy_curl_load() ? "libcurl could not be loaded"
				    : wq__curl_api.curl_easy_strerror(c);
}

const char *wq__lazy_curl_multi_strerror(CURLMcode c)
{
	return wq__lazy_curl_load() ? "libcurl could not be loaded"
				    : wq__curl_api.curl_multi_strerror(c);
}
