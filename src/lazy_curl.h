/*
 * lazy_curl.h — libcurl, loaded on first use (issue 11: a lean CLI).
 *
 * The build force-includes this header into the webhook sender (deliver.c), the IMAP
 * source (intake_imap.c) and url.c, so that their curl_* calls go through a table filled
 * by dlopen/dlsym of libcurl the first time one is needed (a worker starting its delivery
 * side or an IMAP source, a webhook URL shown). Client
 * commands (`wakeq enqueue`, `--version`, …) never load it (nor the TLS, HTTP/2, IDN,
 * LDAP … libraries it pulls in).
 *
 * The entry points — curl_global_init, curl_easy_init, curl_multi_init, curl_url and the
 * two strerror functions — are wrappers that answer a failure (CURLE_FAILED_INIT / NULL /
 * a message) when libcurl cannot be loaded, which the callers already handle; every
 * other function is reached only through a handle one of them returned.
 */
#ifndef WQ_LAZY_CURL_H
#define WQ_LAZY_CURL_H

#define CURL_DISABLE_TYPECHECK 1 /* the typecheck macros would wrap our own below */
#include <curl/curl.h>
#include <stddef.h>

#define WQ__CURL_FUNCS(X)                                                                  \
	X(curl_easy_cleanup) X(curl_easy_getinfo) X(curl_easy_init) X(curl_easy_perform)     \
	X(curl_easy_reset) X(curl_easy_setopt) X(curl_easy_strerror) X(curl_free)           \
	X(curl_global_init)                                                                 \
	X(curl_multi_add_handle) X(curl_multi_cleanup) X(curl_multi_info_read)               \
	X(curl_multi_init) X(curl_multi_perform) X(curl_multi_poll)                          \
	X(curl_multi_remove_handle) X(curl_multi_strerror) X(curl_multi_wait)               \
	X(curl_slist_append) X(curl_slist_free_all) X(curl_url) X(curl_url_cleanup)          \
	X(curl_url_get) X(curl_url_set)

#define WQ__LAZY_CMEMBER(f) __typeof__(f) *f;
struct wq__curl_api {
	WQ__CURL_FUNCS(WQ__LAZY_CMEMBER)
};
extern struct wq__curl_api wq__curl_api;

/* Loads libcurl once (thread-safe): 0, or -1 when it cannot be loaded. */
int wq__lazy_curl_load(void);
CURLcode wq__lazy_curl_global_init(long flags);
CURL *wq__lazy_curl_easy_init(void);
CURLM *wq__lazy_curl_multi_init(void);
CURLU *wq__lazy_curl_url(void);
const char *wq__lazy_curl_easy_strerror(CURLcode c);
const char *wq__lazy_curl_multi_strerror(CURLMcode c);

#ifndef WQ_LAZY_NO_MACROS
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init wq__lazy_curl_global_init
#define curl_easy_init wq__lazy_curl_easy_init
#define curl_multi_init wq__lazy_curl_multi_init
#define curl_url wq__lazy_curl_url
#define curl_easy_strerror wq__lazy_curl_easy_strerror
#define curl_multi_strerror wq__lazy_curl_multi_strerror
#define curl_easy_cleanup (wq__curl_api.curl_easy_cleanup)
#define curl_easy_getinfo (wq__curl_api.curl_easy_getinfo)
#define curl_easy_perform (wq__curl_api.curl_easy_perform)
#define curl_easy_reset (wq__curl_api.curl_easy_reset)
#define curl_easy_setopt (wq__curl_api.curl_easy_setopt)
#define curl_free (wq__curl_api.curl_free)
#define curl_multi_add_handle (wq__curl_api.curl_multi_add_handle)
#define curl_multi_cleanup (wq__curl_api.curl_multi_cleanup)
#define curl_multi_info_read (wq__curl_api.curl_multi_info_read)
#define curl_multi_perform (wq__curl_api.curl_multi_perform)
#define curl_multi_poll (wq__curl_api.curl_multi_poll)
#define curl_multi_remove_handle (wq__curl_api.curl_multi_remove_handle)
#define curl_multi_wait (wq__curl_api.curl_multi_wait)
#define curl_slist_append (wq__curl_api.curl_slist_append)
#define curl_slist_free_all (wq__curl_api.curl_slist_free_all)
#define curl_url_cleanup (wq__curl_api.curl_url_cleanup)
#define curl_url_get (wq__curl_api.curl_url_get)
#define curl_url_set (wq__curl_api.curl_url_set)
#endif

#endif /* WQ_LAZY_CURL_H */
