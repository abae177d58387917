/*
 * followup.h — follow-ups (issue 10), the worker's side (followup.c): the per-attempt
 * $WAKEQ_FOLLOWUPS file of a command handler and wq_job_followup of an in-process one,
 * carried to finish() with the success (the store decides: op_followup.c). Loop thread.
 */
#ifndef WQ_FOLLOWUP_H
#define WQ_FOLLOWUP_H

#include "internal.h"

struct wq_worker;
struct wq__job;
struct wq_job;

/* Creates j's empty follow-ups file and writes "WAKEQ_FOLLOWUPS=PATH" into env. -1 when
 * it cannot: the attempt was then recorded as a spawn failure (pending after backoff). */
int wq__followup_prepare(struct wq__job *j, char *env, size_t envsz);
/* After a command handler ended: a success gets the file's follow-ups (o->followups or
 * o->followups_error, and the tenant's limits); the file is removed in any case. The
 * text is owned by j until wq__followup_release. */
void wq__followup_collect(struct wq_worker *w, struct wq__job *j, struct wq__outcome *o);
/* The same for an in-process handler's wq_job_followup calls. */
void wq__followup_collect_inproc(struct wq_worker *w, struct wq__job *j, struct wq_job *job,
				 struct wq__outcome *o);
/* When j ends: removes its file (if still there) and frees what it kept. */
void wq__followup_release(struct wq__job *j);

#endif /* WQ_FOLLOWUP_H */
