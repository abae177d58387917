/*
 * evidence.h — event details as safe evidence, shared by every backend: JSON objects of
 * sizes, hashes, reasons and ids, with text made valid UTF-8 and cut to fit, so that a
 * detail always survives intact in wq_event.detail. Never payloads or result bodies: the
 * callers pass none.
 */
#ifndef WQ_EVIDENCE_H
#define WQ_EVIDENCE_H

#include "internal.h"

#include <jansson.h>

/* A detail is at most this long (wq_event.detail holds it with its terminator). */
#define WQ__DETAIL_MAX (sizeof(((wq_event *)0)->detail) - 1)

/* Length of the valid UTF-8 sequence at p (at most `avail` bytes), or 0 if invalid. */
size_t wq__utf8_seq(const unsigned char *p, size_t avail);
/* WQ_EINVAL naming `field` unless text (NULL: fine) is valid UTF-8. Identity fields
 * (keys, tenants, scopes, kinds, channels, effect names) are refused, never rewritten. */
wq_rc wq__check_utf8(const char *field, const char *text, wq_error *err);
/* A copy of text with invalid UTF-8 bytes replaced by '?', cut to at most `max` bytes on
 * a character boundary; malloc'd, NULL only when out of memory. */
char *wq__utf8_clean(const char *text, size_t max);

/* Set key in obj; 0, or -1 when out of memory. Strings are cleaned and cut to max. */
int wq__jset_str(json_t *obj, const char *key, const char *text, size_t max);
int wq__jset_int(json_t *obj, const char *key, json_int_t v);
int wq__jset_time(json_t *obj, const char *key, int64_t us);          /* RFC 3339 */
int wq__jset_attempt(json_t *obj, int64_t task_id, int attempt);      /* "attempt_id" */

/* The compact, key-sorted text of obj, at most WQ__DETAIL_MAX bytes (free-text fields are
 * cut first); malloc'd, NULL when out of memory. */
char *wq__detail_text(json_t *obj);

/* A new JSON object, or NULL with err set (out of memory). */
json_t *wq__jobj(wq_error *err);
/* Drops o and reports out of memory. */
wq_rc wq__jfail(json_t *o, wq_error *err);

#endif /* WQ_EVIDENCE_H */
