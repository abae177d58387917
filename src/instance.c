/*
 * instance.c — registration, heartbeat and recovery of worker instances (SPEC §3).
 *
 * Recovery never moves a task back to pending: the store's reap turns the running tasks
 * of a gone instance into `interrupted` (worker-lost). The reap is conditional on the
 * heartbeat value we saw, so the liveness judgement made here can be stale without harm:
 * an instance that heartbeats between our list and our reap keeps its tasks.
 */
#include "instance.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define WQ__BUSY_TRIES 5

int wq__busy_pause(int attempt)
{
	struct timespec ts;
	long ms;

	if (attempt >= WQ__BUSY_TRIES)
		return 0;
	ms = 20L << attempt; /* 20, 40, 80, 160, 320 ms */
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return 1;
}

int wq__instance_parse_stat(const char *text, struct wq__pid_probe *p)
{
	const char *q;
	char *end;
	int field;

	memset(p, 0, sizeof(*p));
	/* Field 2 (comm) is in parentheses and may itself contain spaces and ')'. */
	q = text ? strrchr(text, ')') : NULL;
	if (!q || q[1] != ' ' || !q[2])
		return -1;
	p->state = q[2];
	q += 2; /* field 3 */
	for (field = 3; field < 22; field++) {
		q = strchr(q, ' ');
		if (!q)
			return -1;
		q++;
	}
	p->start = strtoll(q, &end, 10);
	if (end == q)
		return -1;
	p->exists = 1;
	return 0;
}

/* Reads /proc/PID/stat. 0 with *p filled, or -1 (p->exists = 0) when unreadable. */
static int probe_pid(int64_t pid, struct wq__pid_probe *p)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return wq__instance_parse_stat(buf, p);
}

int64_t wq__instance_proc_start(int64_t pid)
{
	struct wq__pid_probe p;

	return probe_pid(pid, &p) == 0 ? p.start : 0;
}

void wq__instance_host_id(char *buf, size_t bufsz)
{
	char boot[64], self[32];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	buf[0] = '\0';
	/* /proc must be our PID namespace's, or the pids we look up there are not ours. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	if (strtoll(self, NULL, 10) != (long long)getpid())
		return;
	if (stat("/proc/self/ns/pid", &st) != 0)
		return;
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, boot, sizeof(boot) - 1);
	close(fd);
	if (n <= 0)
		return;
	boot[n] = '\0';
	len = strcspn(boot, "\n");
	if (len == 0)
		return;
	snprintf(buf, bufsz, "%.*s/%ju", (int)len, boot, (uintmax_t)st.st_ino);
}

int wq__instance_same_host(const struct wq__instance *a, const struct wq__instance *b)
{
	return a->host_id[0] != '\0' && strcmp(a->host_id, b->host_id) == 0 &&
	       strcmp(a->host, b->host) == 0;
}

wq_rc wq__instance_new_id(struct wq__self *self, wq_error *err)
{
	char hex[17];

	wq__random_hex(hex, 8);
	/* Keep room for ":<pid>:<16 hex>" however long the host name is. */
	snprintf(self->id, sizeof(self->id), "%.*s:%" PRId64 ":%s", WQ_NAME_MAX - 40,
		 self->host, self->pid, hex);
	return WQ_OK;
}

wq_rc wq__instance_init(struct wq__self *self, const char *host, wq_error *err)
{
	struct wq__self s;
	wq_rc rc;

	memset(&s, 0, sizeof(s));
	if (!host || !*host)
		host = getenv("WAKEQ_HOST");
	if (host && *host) {
		wq__strlcpy(s.host, host, sizeof(s.host));
	} else {
		char hn[256];

		if (gethostname(hn, sizeof(hn)) != 0)
			return wq__err(err, WQ_EIO, "gethostname: %s", strerror(errno));
		hn[sizeof(hn) - 1] = '\0';
		wq__strlcpy(s.host, hn, sizeof(s.host));
	}
	for (char *c = s.host; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	s.pid = (int64_t)getpid();
	s.proc_start = wq__instance_proc_start(s.pid);
	wq__instance_host_id(s.host_id, sizeof(s.host_id));
	rc = wq__instance_new_id(&s, err);
	if (rc != WQ_OK)
		return rc;
	*self = s;
	return WQ_OK;
}

wq_rc wq__instance_register(wq_db *db, struct wq__self *self, int64_t now, wq_error *err)
{
	struct wq__instance in;
	wq_rc rc;

	memset(&in, 0, sizeof(in));
	wq__strlcpy(in.id, self->id, sizeof(in.id));
	wq__strlcpy(in.host, self->host, sizeof(in.host));
	wq__strlcpy(in.host_id, self->host_id, sizeof(in.host_id));
	in.pid = self->pid;
	in.proc_start = self->proc_start;
	in.started_at = now;
	in.heartbeat_at = now;
	WQ__STORE_RETRY(rc, db, instance_register, &in, err);
	if (rc == WQ_OK)
		self->started_at = now;
	return rc;
}

wq_rc wq__instance_heartbeat(wq_db *db, const struct wq__self *self, int64_t now,
			     wq_error *err)
{
	wq_rc rc;

	WQ__STORE_RETRY(rc, db, instance_heartbeat, self->id, now, err);
	return rc;
}

wq_rc wq__instance_unregister(wq_db *db, const struct wq__self *self, wq_error *err)
{
	wq_rc rc;

	WQ__STORE_RETRY(rc, db, instance_unregister, self->id, err);
	return rc;
}

const char *wq__instance_gone_reason(const struct wq__instance *self,
				     const struct wq__instance *in,
				     const struct wq__pid_probe *probe, int64_t lease,
				     int64_t now, char *buf, size_t bufsz)
{
	if (probe && in->pid > 0 && wq__instance_same_host(self, in)) {
		if (!probe->exists) {
			snprintf(buf, bufsz, "pid %" PRId64 " is dead", in->pid);
			return buf;
		}
		if (probe->state == 'Z' || probe->state == 'X') {
			snprintf(buf, bufsz, "pid %" PRId64 " is dead (a zombie, not yet reaped)",
				 in->pid);
			return buf;
		}
		if (in->proc_start != 0 && probe->start != 0 && probe->start != in->proc_start) {
			snprintf(buf, bufsz, "pid %" PRId64 " now belongs to another process",
				 in->pid);
			return buf;
		}
	}
	if (now - in->heartbeat_at > lease) {
		snprintf(buf, bufsz, "no heartbeat for %" PRId64 " ms (lease %" PRId64 " ms)",
			 (now - in->heartbeat_at) / WQ__US_PER_MS, lease / WQ__US_PER_MS);
		return buf;
	}
	return NULL;
}

/* Why `in` is gone, seen from this process, or NULL when it may be alive. Its pid is
 * looked up in our /proc only when it is a pid of our own PID namespace. */
static const char *gone_reason(const struct wq__self *self, const struct wq__instance *in,
			       int64_t lease, int64_t now, char *buf, size_t bufsz)
{
	struct wq__instance me;
	struct wq__pid_probe probe, *pp = NULL;

	memset(&me, 0, sizeof(me));
	wq__strlcpy(me.id, self->id, sizeof(me.id));
	wq__strlcpy(me.host, self->host, sizeof(me.host));
	wq__strlcpy(me.host_id, self->host_id, sizeof(me.host_id));
	me.pid = self->pid;
	if (in->pid > 0 && wq__instance_same_host(&me, in)) {
		probe_pid(in->pid, &probe);
		/* Unreadable but present (EACCES, say): not proof of death. */
		if (!probe.exists && !(kill((pid_t)in->pid, 0) != 0 && errno == ESRCH))
			probe.exists = 1, probe.state = '?';
		pp = &probe;
	}
	return wq__instance_gone_reason(&me, in, pp, lease, now, buf, bufsz);
}

wq_rc wq__instance_recover(wq_db *db, const struct wq__self *self, int64_t lease,
			   int64_t now, int *interrupted, wq__instance_log_fn log, void *log_ud,
			   wq_error *err)
{
	struct wq__instance *list = NULL;
	size_t n = 0;
	int total = 0, count;
	wq_rc rc, first = WQ_OK;
	wq_error e1;

	WQ__STORE_RETRY(rc, db, instance_list, &list, &n, err);
	if (rc != WQ_OK)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct wq__instance *in = &list[i];
		char why[128];
		const char *reason;

		if (strcmp(in->id, self->id) == 0)
			continue;
		/* the lease's age as the store's clock measured it: two hosts' clocks are
		 * never compared (issue 15); "now" is heartbeat_at + that age */
		reason = gone_reason(self, in, lease, in->heartbeat_at + in->lease_age, why,
				     sizeof(why));
		if (!reason)
			continue;
		count = 0;
		WQ__STORE_RETRY(rc, db, instance_reap, in->id, in->heartbeat_at, "worker-lost",
				now, &count, &e1);
		if (rc != WQ_OK) {
			if (log)
				log(log_ud, "error", "reaping instance %s failed: %s", in->id,
				    e1.message);
			if (first == WQ_OK) {
				first = rc;
				if (err)
					*err = e1;
			}
			continue;
		}
		total += count;
		if (log && count > 0)
			log(log_ud, "warning",
			    "instance %s is gone (%s): %d running task(s) now interrupted "
			    "(worker-lost)",
			    in->id, reason, count);
	}
	free(list);

	count = 0;
	WQ__STORE_RETRY(rc, db, reap_orphans, "worker-lost", now, &count, &e1);
	if (rc != WQ_OK) {
		if (first == WQ_OK) {
			first = rc;
			if (err)
				*err = e1;
		}
	} else {
		total += count;
		if (log && count > 0)
			log(log_ud, "warning",
			    "%d running task(s) owned by no registered instance now interrupted "
			    "(worker-lost)",
			    count);
	}
	if (first == WQ_OK && interrupted)
		*interrupted = total;
	return first;
}
