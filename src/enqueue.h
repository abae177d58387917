/*
 * enqueue.h — the checks and derived values of an enqueue (task.c), shared by
 * wq_enqueue and the batch enqueue (enqueue_many.c, issue 11).
 */
#ifndef WQ_ENQUEUE_H
#define WQ_ENQUEUE_H

#include "internal.h"

/* "op_" + 32 hex digits, time-ordered then random (operation_id.c), NUL-terminated. */
#define WQ__OPERATION_ID_BUFSZ (3 + 32 + 1)
void wq__operation_id(char out[WQ__OPERATION_ID_BUFSZ]);
/* The same from a clock reading (µs) and 10 random bytes (tests). */
void wq__operation_id_at(char out[WQ__OPERATION_ID_BUFSZ], uint64_t us,
			 const unsigned char rnd[10]);

/* One validated enqueue: t points into the buffers here and into the caller's options
 * (kind, payload, key, …), which must outlive it. notify is owned (free it). */
struct wq__enqueue_prep {
	struct wq__new_task t;
	char sha[WQ_SHA256_HEX], fp[WQ_SHA256_HEX], fp_legacy[WQ_SHA256_HEX];
	char op[WQ__OPERATION_ID_BUFSZ]; /* the generated operation id */
	char *notify;        /* JSON array text, or NULL */
	char limit_section[WQ_NAME_MAX + 8];
};

/* Validates o (everything wq_enqueue documents) and fills *p; nothing is written. On
 * failure p->notify may still need freeing (it is NULL or owned either way). */
wq_rc wq__enqueue_prepare(const wq_enqueue_opts *o, struct wq__enqueue_prep *p,
			  wq_error *err);
/* The public answer from the store's row. */
void wq__enqueued_fill(wq_enqueued *out, const struct wq__new_task *t,
		       const struct wq__enqueued_row *row);

#endif /* WQ_ENQUEUE_H */
