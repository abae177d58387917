/*
 * instance.h — this worker process as a registered instance, and recovery of the
 * instances that are gone (SPEC §3).
 */
#ifndef WQ_INSTANCE_H
#define WQ_INSTANCE_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* This process as seen by the store. */
struct wq__self {
	char id[WQ_NAME_MAX + 1]; /* "<host>:<pid>:<16 hex>", unique per registration */
	char host[WQ_NAME_MAX + 1];
	/* "<boot id>/<pid namespace inode>": which kernel and PID namespace `pid` is a
	 * number of; "" when unknown (see wq__instance_host_id). */
	char host_id[WQ_NAME_MAX + 1];
	int64_t pid;
	int64_t proc_start;       /* /proc/self/stat field 22; 0 when unknown */
	int64_t started_at;
};

/* Fills self for this process: host is `host` if non-NULL and non-empty, else
 * $WAKEQ_HOST, else gethostname(); host_id from wq__instance_host_id; a fresh random id.
 * Nothing is written to the store. */
wq_rc wq__instance_init(struct wq__self *self, const char *host, wq_error *err);

/* Gives self a fresh id (after the old one was declared lost). */
wq_rc wq__instance_new_id(struct wq__self *self, wq_error *err);

/* Store calls with WQ_EBUSY retried a few times (short backoff). */
wq_rc wq__instance_register(wq_db *db, struct wq__self *self, int64_t now, wq_error *err);
/* WQ_ENOTFOUND: our row is gone, we were declared lost (see wq__instance_new_id). */
wq_rc wq__instance_heartbeat(wq_db *db, const struct wq__self *self, int64_t now,
			     wq_error *err);
wq_rc wq__instance_unregister(wq_db *db, const struct wq__self *self, wq_error *err);

typedef void (*wq__instance_log_fn)(void *ud, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Recovery. An instance other than `self` is gone when it runs on our host (same host
 * name and host_id) and its pid is dead, a zombie or belongs to another process now
 * (start time differs), or when its heartbeat is older than `lease` (INT64_MAX: heartbeat
 * ages are not judged, only proven deaths). Each gone instance is reaped conditionally on
 * the heartbeat we saw
 * (a live one that heartbeats meanwhile is left alone): its running tasks become
 * interrupted with reason "worker-lost". Then running tasks that name no registered
 * instance are interrupted the same way. *interrupted (optional) receives the number of
 * tasks interrupted. `log` (optional) receives one line per reaped instance.
 */
wq_rc wq__instance_recover(wq_db *db, const struct wq__self *self, int64_t lease,
			   int64_t now, int *interrupted, wq__instance_log_fn log, void *log_ud,
			   wq_error *err);

/* Start time token of `pid` (/proc/PID/stat field 22), or 0 when unknown. */
int64_t wq__instance_proc_start(int64_t pid);

/*
 * This process's host identity, "<boot id>/<inode of /proc/self/ns/pid>": the boot id
 * names the running kernel, the inode the PID namespace whose numbers our pid and /proc
 * use. Writes "" when either is unknown, or when /proc is not our PID namespace's (its
 * "self" is not getpid()), since pids could then not be looked up there.
 */
void wq__instance_host_id(char *buf, size_t bufsz);

/*
 * Whether the pid of instance b can be judged from a's point of view (looked up in
 * a's /proc): the same host name and the same non-empty host_id. A host name alone is
 * never enough: containers in other PID namespaces may share it, and their pids mean
 * other processes here. Pure.
 */
int wq__instance_same_host(const struct wq__instance *a, const struct wq__instance *b);

/* What /proc says about a pid of our own PID namespace. */
struct wq__pid_probe {
	int exists;     /* /proc/PID/stat could be read */
	char state;     /* field 3: 'R', 'S', ..., 'Z' (zombie), 'X' (dead) */
	int64_t start;  /* field 22; 0 when unknown */
};

/* Parses the text of /proc/PID/stat into p. 0, or -1 when it is malformed. Pure. */
int wq__instance_parse_stat(const char *text, struct wq__pid_probe *p);

/*
 * Why instance `in` is gone, seen from `self`, or NULL when it may be alive. `probe` is
 * what /proc says about in->pid, or NULL when it was not looked at; it is used only when
 * wq__instance_same_host(self, in). There a pid that does not exist, or is a zombie (it
 * has exited; its parent has not reaped it), is dead, and one with another start time
 * was reused. Otherwise only the lease decides: a heartbeat older than `lease`. The reason
 * is written into buf. Pure.
 */
const char *wq__instance_gone_reason(const struct wq__instance *self,
				     const struct wq__instance *in,
				     const struct wq__pid_probe *probe, int64_t lease,
				     int64_t now, char *buf, size_t bufsz);

/* Sleeps before retry number `attempt` (0-based) of a store call that returned
 * WQ_EBUSY; returns 0 once the retries are used up. Usage:
 *   for (int t = 0;; t++) { rc = WQ__STORE(...); if (rc != WQ_EBUSY || !wq__busy_pause(t)) break; }
 */
int wq__busy_pause(int attempt);

/* rc = WQ__STORE(db, method, ...), retried while it returns WQ_EBUSY. */
#define WQ__STORE_RETRY(rc, db, method, ...)                                           \
	do {                                                                           \
		for (int wq__try_ = 0;; wq__try_++) {                                  \
			(rc) = WQ__STORE(db, method, __VA_ARGS__);                     \
			if ((rc) != WQ_EBUSY || !wq__busy_pause(wq__try_))             \
				break;                                                 \
		}                                                                      \
	} while (0)

#endif /* WQ_INSTANCE_H */
