/* url.c — URLs as they may be shown: in messages, logs, events and `doctor`, a URL is
 * its scheme, host, port and path only. User, password, query (tokens) and fragment are
 * credentials or may be, and never leave the configuration.
 *
 * libcurl's URL parser (CURLU) splits the URL, so what is shown is what curl would
 * connect to, not a guess of ours. */
#include "internal.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

/* A part of u, or NULL (freed with curl_free). */
static char *part(CURLU *u, CURLUPart what)
{
	char *v = NULL;

	if (curl_url_get(u, what, &v, 0) != CURLUE_OK)
		return NULL;
	return v;
}

const char *wq__url_safe(const char *url, char *buf, size_t bufsz)
{
	CURLU *u = url ? curl_url() : NULL;
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;

	if (!bufsz)
		return "";
	/* any scheme (postgresql:// too), and a URL without a host (postgresql:///db) */
	if (!u || curl_url_set(u, CURLUPART_URL, url,
			       CURLU_NON_SUPPORT_SCHEME | CURLU_NO_AUTHORITY) != CURLUE_OK ||
	    !(scheme = part(u, CURLUPART_SCHEME))) {
		/* nothing of an unparseable URL is shown: it may be all credentials */
		snprintf(buf, bufsz, "(unparseable URL)");
		goto out;
	}
	host = part(u, CURLUPART_HOST);
	port = part(u, CURLUPART_PORT); /* only when the URL names one */
	path = part(u, CURLUPART_PATH);
	snprintf(buf, bufsz, "%s://%s%s%s%s", scheme, host ? host : "", port ? ":" : "",
		 port ? port : "", path ? path : "");
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(u);
	return buf;
}

/* Overwrites every occurrence of needle (non-empty) in text with '*'. */
static void blank(char *text, const char *needle)
{
	size_t n = needle ? strlen(needle) : 0;

	if (n == 0)
		return;
	for (char *at = strstr(text, needle); at; at = strstr(at + n, needle))
		memset(at, '*', n);
}

void wq__url_scrub(char *text, const char *url)
{
	static const CURLUPart secret[] = {CURLUPART_USER, CURLUPART_PASSWORD,
					   CURLUPART_OPTIONS, CURLUPART_QUERY,
					   CURLUPART_FRAGMENT};
	CURLU *u;

	if (!text || !url)
		return;
	/* each secret part, as written and decoded; scheme, host, port and path may stay */
	u = curl_url();
	if (!u)
		return;
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME | CURLU_NO_AUTHORITY) ==
	    CURLUE_OK) {
		for (size_t i = 0; i < WQ__ARRAY_LEN(secret); i++) {
			char *v = NULL;
			if (curl_url_get(u, secret[i], &v, 0) == CURLUE_OK)
				blank(text, v);
			curl_free(v);
			v = NULL;
			if (curl_url_get(u, secret[i], &v, CURLU_URLDECODE) == CURLUE_OK)
				blank(text, v);
			curl_free(v);
		}
	}
	curl_url_cleanup(u);
}
