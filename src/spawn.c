/*
 * spawn.c — one command handler as a child process (see spawn.h).
 *
 * Four or five libuv handles belong to a spawn: a poll on the child's pidfd, the stdout
 * and stderr pipes, one timer, and a stdin pipe only for an input larger than PIPE_BUF
 * (a smaller one is written whole into the empty pipe before the child exists, and the
 * write end closed: no handle, no event-loop registration; see write_small_input). The
 * timer is reused for each wait in turn (runtime limit → kill grace; after exit: EOF
 * grace). The spawn is finished only when the child has exited and was reaped, both
 * output pipes reached EOF (or were cut) and stdin is closed; then every handle is
 * closed and on_done runs from the last close callback, so no libuv callback can reach
 * freed memory.
 *
 * The child is created with clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD): no copy of the
 * worker's address space, one exec (the handler's own), and a pidfd from the same system
 * call, so there is no moment in which the child exists without a descriptor that names
 * it. Why libuv cannot take our children from us: libuv reaps only the pids of its own
 * uv_process_t handles (waitpid(pid, WNOHANG) per handle in its SIGCHLD callback, libuv
 * 1.x on Linux), and installs that callback only for uv_spawn, which wakeq no longer
 * calls. The one thing that would reap them behind our back is a process-wide SIGCHLD
 * disposition of SIG_IGN (or SA_NOCLDWAIT) set by an application embedding libwakeq; then
 * waitid answers ECHILD and the exit reads as killed (outcome unknown), never as success.
 */
#include "spawn.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define WQ__SPAWN_CHUNK 65536

struct wq__spawn {
	struct wq__spawn_opts o; /* argv and env are not retained past start */
	uv_poll_t proc;  /* readable when the child has exited (its pidfd) */
	int pidfd;       /* owned; closed after every handle is closed; -1 when none */
	uv_pipe_t in, out, err;
	int in_handle;   /* `in` was initialised (an input larger than PIPE_BUF) */
	uv_timer_t timer;
	uv_write_t wreq;
	int open_handles;
	int started;   /* the child was started: on_done is owed */
	int exited, in_closed, out_closed, err_closed;
	int terminating;
	int finishing; /* the timer (last handle) is being closed */
	int pid;       /* the handler's pid while it runs; 0 once it has exited */
	/* The handler's process group (and session) id: the pid it had, kept after the
	 * handler exited. Never 0 once started; see on_eof_grace for when it may be used. */
	int pgid;
	size_t out_cap;
	struct wq__spawn_result res;
};

/* The read buffer of every spawn on this thread's loop: libuv calls a stream's read_cb
 * right after its alloc_cb, on the loop's thread, and read_cb copies what it keeps
 * (keep_out, keep_err) before any other read can start, so one buffer per thread
 * serves all pipes (no 64 KiB allocated and zeroed per spawn). Allocated on the first
 * read of a thread and freed when it exits (rbuf_key): only a pointer is thread-local,
 * so the threads of a program linking libwakeq that never spawn pay nothing. */
static _Thread_local char *rbuf;
static pthread_key_t rbuf_key;
static pthread_once_t rbuf_once = PTHREAD_ONCE_INIT;

static void rbuf_key_make(void)
{
	(void)pthread_key_create(&rbuf_key, free); /* failed: a buffer per thread not freed */
}

/* This thread's read buffer (WQ__SPAWN_CHUNK bytes), or NULL without memory. */
static char *rbuf_get(void)
{
	if (!rbuf && (rbuf = malloc(WQ__SPAWN_CHUNK))) {
		pthread_once(&rbuf_once, rbuf_key_make);
		(void)pthread_setspecific(rbuf_key, rbuf);
	}
	return rbuf;
}

/*
 * The one place this file sends a signal. `id` is a pid (group = 0) or a process-group id
 * (group = 1). Anything <= 1 is refused: kill(0, sig) would hit the worker's own process
 * group, kill(-1, sig) every process we may signal, kill(1, sig) init; a caller that
 * gets here with such an id has lost track of what it owns. Returns kill()'s result, or
 * -1 with errno EINVAL when refused.
 */
static int signal_owned(int id, int group, int sig)
{
	if (id <= 1) {
		errno = EINVAL;
		return -1;
	}
	return kill(group ? -(pid_t)id : (pid_t)id, sig);
}

static uint64_t us_to_ms(int64_t us)
{
	if (us <= 0)
		return 0;
	return (uint64_t)((us + 999) / 1000);
}

static void spawn_free(struct wq__spawn *sp)
{
	if (sp->pidfd >= 0)
		close(sp->pidfd);
	free(sp->res.out);
	free(sp->res.err);
	free(sp);
}

static void deliver(struct wq__spawn *sp)
{
	sp->o.on_done(sp, &sp->res, sp->o.ud);
	spawn_free(sp);
}

static void check_done(struct wq__spawn *sp);

static void on_close(uv_handle_t *h)
{
	struct wq__spawn *sp = h->data;

	sp->open_handles--;
	check_done(sp);
}

static void close_handle(struct wq__spawn *sp, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_close);
}

static void check_done(struct wq__spawn *sp)
{
	if (!sp->finishing && (!sp->started ||
			       (sp->exited && sp->in_closed && sp->out_closed && sp->err_closed))) {
		sp->finishing = 1;
		uv_timer_stop(&sp->timer);
		close_handle(sp, (uv_handle_t *)&sp->timer);
		return;
	}
	if (sp->finishing && sp->open_handles == 0) {
		if (sp->started)
			deliver(sp);
		else
			spawn_free(sp);
	}
}

static void close_in(struct wq__spawn *sp)
{
	if (sp->in_closed)
		return;
	sp->in_closed = 1;
	if (sp->in_handle)
		close_handle(sp, (uv_handle_t *)&sp->in);
}

static void close_out(struct wq__spawn *sp, uv_pipe_t *p)
{
	int *flag = p == &sp->out ? &sp->out_closed : &sp->err_closed;

	if (*flag)
		return;
	*flag = 1;
	uv_read_stop((uv_stream_t *)p);
	close_handle(sp, (uv_handle_t *)p);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	/* allocated by wq__spawn_start on this (the loop's) thread */
	*buf = uv_buf_init(rbuf, WQ__SPAWN_CHUNK);
}

static void keep_out(struct wq__spawn *sp, const char *data, size_t n)
{
	struct wq__spawn_result *r = &sp->res;
	size_t room = sp->o.result_max > r->out_len ? sp->o.result_max - r->out_len : 0;
	size_t take = n < room ? n : room;

	r->out_total += n;
	if (r->out_total > sp->o.result_max)
		r->out_too_large = 1;
	if (take == 0)
		return;
	if (r->out_len + take + 1 > sp->out_cap) {
		size_t cap = sp->out_cap ? sp->out_cap : 4096;
		char *p;

		while (cap < r->out_len + take + 1)
			cap *= 2;
		if (cap > sp->o.result_max + 1)
			cap = sp->o.result_max + 1;
		p = realloc(r->out, cap);
		if (!p) {
			/* Treat as too large rather than lose track of the size. */
			r->out_too_large = 1;
			return;
		}
		r->out = p;
		sp->out_cap = cap;
	}
	memcpy(r->out + r->out_len, data, take);
	r->out_len += take;
	r->out[r->out_len] = '\0';
}

static void keep_err(struct wq__spawn *sp, const char *data, size_t n)
{
	struct wq__spawn_result *r = &sp->res;
	size_t max = sp->o.stderr_max;

	r->err_total += n;
	if (max == 0)
		return;
	if (!r->err) {
		r->err = malloc(max + 1);
		if (!r->err)
			return;
		r->err[0] = '\0';
	}
	if (n >= max) {
		memcpy(r->err, data + (n - max), max);
		r->err_len = max;
	} else {
		if (r->err_len + n > max) {
			size_t drop = r->err_len + n - max;

			memmove(r->err, r->err + drop, r->err_len - drop);
			r->err_len -= drop;
		}
		memcpy(r->err + r->err_len, data, n);
		r->err_len += n;
	}
	r->err[r->err_len] = '\0';
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct wq__spawn *sp = s->data;

	if (nread > 0) {
		if (s == (uv_stream_t *)&sp->out)
			keep_out(sp, buf->base, (size_t)nread);
		else
			keep_err(sp, buf->base, (size_t)nread);
		return;
	}
	if (nread < 0) { /* UV_EOF or a read error: either way this pipe is done */
		close_out(sp, (uv_pipe_t *)s);
		check_done(sp);
	}
}

static void on_write(uv_write_t *req, int status)
{
	struct wq__spawn *sp = req->data;

	/* A handler that exits without reading all of stdin gives EPIPE: not an error of
	 * the run; its exit status tells what happened. */
	close_in(sp);
	check_done(sp);
}

/*
 * The handler has exited but something still holds its stdout or stderr after the EOF
 * grace: a process it started (`sleep 30 &`). Such a holder is stopped by SIGKILL to the
 * handler's process group, then the pipes are closed either way.
 *
 * Why signalling the recorded group id is safe although its leader (our child) is
 * reaped: Linux keeps a pid number reserved while any process still uses it as its
 * process-group or session id, so while a member of the handler's group lives, no other
 * process can be given that number, and no one else can have created a group with it.
 * The number becomes free only once the group is empty; a new process may then get it
 * and lead a group of the same id. That process would be alive with pid == pgid: if any
 * process has that pid (our leader is reaped, so it is not ours), the group is not
 * signalled. Otherwise a live group of that id can only be ours (a group is created with
 * the id of its creating process, which would have to exist). What is left is the race
 * between that check and kill() with a pid wrap-around inside it; pid numbers are
 * handed out cyclically from pid_max (4194304 on 64-bit), so it is not a practical one.
 * A holder that left the group (setsid) is not ours to find: its pipes are just closed.
 */
static void on_eof_grace(uv_timer_t *t)
{
	struct wq__spawn *sp = t->data;

	if (!sp->out_closed || !sp->err_closed) {
		sp->res.output_cut = 1;
		if (signal_owned(sp->pgid, 0, 0) != 0 && errno == ESRCH)
			signal_owned(sp->pgid, 1, SIGKILL);
	}
	close_out(sp, &sp->out);
	close_out(sp, &sp->err);
	check_done(sp);
}

/*
 * The pidfd is readable: the child has exited. Reaped here, by its pidfd, so the number
 * we reap is the child's even if something else were reaping too. Until this call the
 * child is at least a zombie, so its pid (and group id) cannot be reused.
 */
static void on_exit_cb(uv_poll_t *p, int status, int events)
{
	struct wq__spawn *sp = p->data;
	siginfo_t si;
	int r;

	memset(&si, 0, sizeof(si));
	do
		r = waitid((idtype_t)P_PIDFD, (id_t)sp->pidfd, &si, WEXITED | WNOHANG);
	while (r != 0 && errno == EINTR);
	if (r == 0 && si.si_pid == 0)
		return; /* not yet (a spurious wake-up) */
	sp->exited = 1;
	sp->pid = 0;
	if (r != 0) {
		/* ECHILD: reaped behind our back (SIGCHLD ignored process-wide). The exit
		 * status is lost: the outcome is unknown, as after a kill. */
		sp->res.term_signal = SIGKILL;
		sp->res.exit_status = -1;
	} else if (si.si_code == CLD_EXITED) {
		sp->res.exit_status = si.si_status;
	} else {
		sp->res.term_signal = si.si_status;
		sp->res.exit_status = -1;
	}
	/* uv_close stops the poll itself (one epoll_ctl; a uv_poll_stop first would make
	 * two, the second failing) and no callback of a closing handle runs. */
	close_handle(sp, (uv_handle_t *)&sp->proc);
	/* The handler is gone; nothing will read what is left of its stdin (a pending
	 * write completes with UV_ECANCELED when the pipe closes). */
	close_in(sp);
	uv_timer_stop(&sp->timer);
	if (!sp->out_closed || !sp->err_closed) {
		int64_t g = sp->o.eof_grace > 0 ? sp->o.eof_grace : sp->o.kill_grace;

		uv_timer_start(&sp->timer, on_eof_grace, us_to_ms(g), 0);
	}
	check_done(sp);
}

/* Signals the handler's whole process group (it leads its own session, see
 * child_main), so processes it started itself stop with it; falls back to the handler
 * alone, through its pidfd, if the group is already gone. Only while the handler has not
 * been reaped (it is our child: its pid and group id are still ours). */
static void signal_handler(struct wq__spawn *sp, int sig)
{
	if (sp->exited)
		return;
	if (signal_owned(sp->pgid, 1, sig) != 0)
		pidfd_send_signal(sp->pidfd, sig, NULL, 0);
}

static void on_kill_grace(uv_timer_t *t)
{
	struct wq__spawn *sp = t->data;

	if (!sp->exited)
		signal_handler(sp, SIGKILL);
}

static void on_deadline(uv_timer_t *t)
{
	struct wq__spawn *sp = t->data;

	if (sp->exited || sp->terminating)
		return;
	sp->terminating = 1;
	sp->res.timed_out = 1;
	signal_handler(sp, SIGTERM);
	uv_timer_start(&sp->timer, on_kill_grace, us_to_ms(sp->o.kill_grace), 0);
	if (sp->o.on_timeout)
		sp->o.on_timeout(sp, sp->o.ud);
}

int wq__spawn_pid(const struct wq__spawn *sp)
{
	return sp->exited ? 0 : sp->pid;
}

int wq__spawn_terminate(struct wq__spawn *sp, int64_t grace)
{
	if (sp->exited)
		return 0;
	if (sp->terminating) {
		if (uv_timer_get_due_in(&sp->timer) > us_to_ms(grace))
			uv_timer_start(&sp->timer, on_kill_grace, us_to_ms(grace), 0);
		return 0;
	}
	sp->terminating = 1;
	sp->res.stop_requested = 1;
	signal_handler(sp, SIGTERM);
	uv_timer_start(&sp->timer, on_kill_grace, us_to_ms(grace), 0);
	return 1;
}

void wq__spawn_kill(struct wq__spawn *sp)
{
	if (sp->exited)
		return;
	sp->terminating = 1;
	sp->res.stop_requested = 1;
	uv_timer_stop(&sp->timer);
	signal_handler(sp, SIGKILL);
}

wq_rc wq__spawn_which(const char *prog, char *buf, size_t bufsz, wq_error *err)
{
	const char *path, *p;
	struct stat st;

	if (!prog || !*prog)
		return wq__err(err, WQ_ENOTFOUND, "empty program name");
	if (strchr(prog, '/')) {
		if (stat(prog, &st) != 0)
			return wq__err(err, WQ_ENOTFOUND, "%s: %s", prog, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return wq__err(err, WQ_ENOTFOUND, "%s: not a regular file", prog);
		if (access(prog, X_OK) != 0)
			return wq__err(err, WQ_ENOTFOUND, "%s: %s", prog, strerror(errno));
		if (wq__strlcpy(buf, prog, bufsz))
			return wq__err(err, WQ_ENOTFOUND, "%s: path too long", prog);
		return WQ_OK;
	}
	path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		char cand[4096];
		int n;

		if (dlen == 0)
			n = snprintf(cand, sizeof(cand), "%s", prog);
		else
			n = snprintf(cand, sizeof(cand), "%.*s/%s", (int)dlen, p, prog);
		if (n > 0 && (size_t)n < sizeof(cand) && stat(cand, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			if (wq__strlcpy(buf, cand, bufsz))
				return wq__err(err, WQ_ENOTFOUND, "%s: path too long", prog);
			return WQ_OK;
		}
		if (!end)
			break;
		p = end;
	}
	return wq__err(err, WQ_ENOTFOUND, "%s: not found in PATH", prog);
}

/* ------------------------------------------------------------- close-on-exec ---- */

/* Held by wq__spawn_start around the fork, and by sections that may open descriptors
 * without O_CLOEXEC (see spawn.h). */
static pthread_mutex_t cloexec_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Calls fn(fd, arg) for every open descriptor lacking FD_CLOEXEC. /proc/self/fd is read
 * with opendir, whose own descriptor is close-on-exec (glibc) and so never reported;
 * without /proc the first 4096 numbers are probed. */
static void each_inheritable_fd(void (*fn)(int fd, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d) {
		for (int fd = 0; fd < 4096; fd++) {
			int fl = fcntl(fd, F_GETFD);

			if (fl >= 0 && !(fl & FD_CLOEXEC))
				fn(fd, arg);
		}
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		int fl;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || fd == dirfd(d))
			continue;
		fl = fcntl((int)fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC))
			fn((int)fd, arg);
	}
	closedir(d);
}

static void note_fd(int fd, void *arg)
{
	struct wq__fdset *s = arg;

	if (s->n < WQ__FDSET_MAX)
		s->fd[s->n++] = fd;
	else
		s->overflow = 1;
}

static void mark_new_fd(int fd, void *arg)
{
	const struct wq__fdset *s = arg;
	int fl;

	for (int i = 0; i < s->n; i++)
		if (s->fd[i] == fd)
			return; /* was there before: not ours to change */
	fl = fcntl(fd, F_GETFD);
	if (fl >= 0)
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

void wq__spawn_cloexec_begin(struct wq__fdset *before)
{
	pthread_mutex_lock(&cloexec_mutex);
	before->n = 0;
	before->overflow = 0;
	each_inheritable_fd(note_fd, before);
}

void wq__spawn_cloexec_end(const struct wq__fdset *before)
{
	each_inheritable_fd(mark_new_fd, (void *)before);
	pthread_mutex_unlock(&cloexec_mutex);
}

/*
 * The handler's environment: the parent's without the variables `changes` names, then
 * the changes that set one. Filtering the parent's entries costs a comparison per entry
 * and change (~17,000 instructions a spawn with 40 variables and the worker's 10), yet
 * its result changes only when the environment does: it is kept here, with the
 * environment it was made from (environ's pointers: setenv, unsetenv and putenv replace,
 * add or remove pointers; glibc never rewrites a string it handed out) and the names it
 * filtered, and rebuilt when either differs. Only the changes' pointers are written per
 * spawn. Guarded by cloexec_mutex, held from here until the child has exec'd: the block
 * is read by the kernel in the child's execve, and no other spawn may rewrite it before.
 */
struct env_cache {
	char **seen;   /* environ's pointers when built (nseen of them) */
	size_t nseen;
	char *names;   /* the changes' names, each followed by '=' */
	size_t nlen;
	char **block;  /* nbase kept entries, then room for the changes and NULL */
	size_t nbase;
};
static struct env_cache envc;

static size_t name_len(const char *e)
{
	return strcspn(e, "=");
}

/* Whether the cache was built from this environment and these change names. */
static int env_cache_fits(const char *const *changes, size_t n, size_t m)
{
	const char *p = envc.names;

	if (!envc.block || n != envc.nseen ||
	    (n && memcmp(envc.seen, environ, n * sizeof(*environ)) != 0))
		return 0;
	for (size_t j = 0; j < m; j++) {
		size_t len = name_len(changes[j]);

		if ((size_t)(envc.names + envc.nlen - p) < len + 1 ||
		    memcmp(p, changes[j], len) != 0 || p[len] != '=')
			return 0;
		p += len + 1;
	}
	return p == envc.names + envc.nlen;
}

/* Rebuilds the cache (0, or -1 without memory: the cache is then empty). */
static int env_cache_build(const char *const *changes, size_t n, size_t m)
{
	size_t nlen = 0, k = 0;
	char *q;

	for (size_t j = 0; j < m; j++)
		nlen += name_len(changes[j]) + 1;
	free(envc.seen);
	free(envc.names);
	free(envc.block);
	memset(&envc, 0, sizeof(envc));
	envc.seen = malloc((n ? n : 1) * sizeof(*envc.seen));
	envc.names = malloc(nlen ? nlen : 1);
	envc.block = malloc((n + m + 1) * sizeof(*envc.block));
	if (!envc.seen || !envc.names || !envc.block) {
		free(envc.seen);
		free(envc.names);
		free(envc.block);
		memset(&envc, 0, sizeof(envc));
		return -1;
	}
	if (n)
		memcpy(envc.seen, environ, n * sizeof(*environ));
	envc.nseen = n;
	for (size_t j = 0, len; j < m; j++) {
		len = name_len(changes[j]);
		memcpy(envc.names + envc.nlen, changes[j], len);
		envc.nlen += len;
		envc.names[envc.nlen++] = '=';
	}
	for (size_t i = 0; i < n; i++) {
		const char *e = environ[i];
		size_t len = name_len(e);
		int replaced = 0;

		for (q = envc.names; q < envc.names + envc.nlen && !replaced; q += name_len(q) + 1)
			replaced = name_len(q) == len && memcmp(q, e, len) == 0;
		if (!replaced)
			envc.block[k++] = (char *)e;
	}
	envc.nbase = k;
	return 0;
}

/* The block for `changes` (strings borrowed until the child exec'd), NULL without
 * memory. The caller holds cloexec_mutex. */
static char **env_block(const char *const *changes)
{
	size_t n = 0, m = 0, k;

	while (environ && environ[n])
		n++;
	while (changes && changes[m])
		m++;
	if (!env_cache_fits(changes, n, m) && env_cache_build(changes, n, m) != 0)
		return NULL;
	k = envc.nbase;
	for (size_t j = 0; j < m; j++)
		if (strchr(changes[j], '='))
			envc.block[k++] = (char *)changes[j];
	envc.block[k] = NULL;
	return envc.block;
}

/* ------------------------------------------------------------------ the child ---- */

/* What the child reads, prepared by the parent (the child must not allocate): it lives
 * in wq__spawn_start's frame, which the child shares (CLONE_VM) while the parent waits
 * (CLONE_VFORK). */
struct child_args {
	const char *path;   /* the handler, resolved like execvp */
	char **argv, **envp;
	const char *const *changes; /* the environment's (env_block makes envp of them) */
	int fd[3];          /* its stdin, stdout, stderr: all >= 3, close-on-exec */
	pid_t parent;       /* getpid() before the clone */
	int err;            /* written by the child: errno of the step that failed */
};

/*
 * The child, on the parent's memory until it execs: only system calls, no allocation,
 * no locks, no sanitizer instrumentation (its stack is not one the sanitizer knows).
 * Every signal is blocked on entry (the parent blocked them before the clone), so no
 * handler of the worker can run here; the handled ones are set back to the default
 * before the mask is cleared, and the mask itself is what the handler starts with: empty
 * (the worker's loop thread blocks SIGPIPE). On any failure it exits 127 with `err` set.
 */
/* glibc's sigaction() refuses its two reserved real-time signals (32, 33), yet a worker
 * started with them ignored would pass that on across exec (seen under a CI runner): the
 * kernel's call then, with an all-zero action — SIG_DFL, no flags, an empty mask, which
 * reads the same in every architecture's layout of the kernel's struct. */
__attribute__((no_sanitize("address", "undefined"))) static void default_reserved(int sig)
{
	unsigned long zero[8] = {0};

	syscall(SYS_rt_sigaction, sig, zero, NULL, (size_t)(NSIG - 1) / 8);
}

__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_args *a = arg;
	struct sigaction dfl;
	sigset_t none;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, &dfl, NULL) != 0)
			default_reserved(sig);
	/* The kernel kills the handler when the worker's thread dies. The worker may have
	 * died before this line took effect: then our parent is someone else already. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != a->parent)
		goto fail;
	/* Its own session and process group: a Ctrl-C meant for the worker does not reach
	 * it (the worker drains instead), and stopping the group stops what it started. */
	if (setsid() < 0)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (dup2(a->fd[i], i) < 0) /* the copy is not close-on-exec; a->fd[i] is */
			goto fail;
	/* Ours are close-on-exec; this also closes what the worker itself inherited without
	 * the flag (from its own parent), which is not the handler's either. Linux 5.9; on
	 * an older kernel (ENOSYS) only close-on-exec applies. */
	close_range(3, ~0U, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(a->path, a->argv, a->envp);
fail:
	a->err = errno ? errno : EINVAL;
	_exit(127);
}

/* The clone's stack. One suffices: spawns are serialised by cloexec_mutex, and the
 * parent's thread waits (CLONE_VFORK) until the child has exec'd or exited, after which
 * the child no longer uses it. */
static char child_stack[64 * 1024] __attribute__((aligned(64)));

/* A descriptor number >= 3 for fd (close-on-exec), so the child's dup2 onto 0..2 never
 * overwrites another of its three (the worker may run with 0..2 closed). */
static int above_stdio(int fd)
{
	int nfd;

	if (fd >= 3)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/* Three pipes: p[0] stdin (child reads p[0][0]), p[1] stdout, p[2] stderr. On failure
 * errno is set and nothing is left open. */
static int make_pipes(int p[3][2])
{
	int i;

	for (i = 0; i < 3; i++) {
		if (pipe2(p[i], O_CLOEXEC) != 0)
			goto fail;
		if ((p[i][0] = above_stdio(p[i][0])) < 0 || (p[i][1] = above_stdio(p[i][1])) < 0) {
			int e = errno;

			if (p[i][0] >= 0)
				close(p[i][0]);
			if (p[i][1] >= 0)
				close(p[i][1]);
			errno = e;
			goto fail;
		}
	}
	return 0;
fail:
	{
		int e = errno;

		while (i-- > 0) {
			close(p[i][0]);
			close(p[i][1]);
		}
		errno = e;
	}
	return -1;
}

/*
 * An input of at most PIPE_BUF bytes goes into the new (empty) stdin pipe at once and the
 * write end is closed, before the child exists: a write of at most PIPE_BUF bytes to an
 * empty pipe neither blocks nor comes back short (the kernel gives every pipe at least
 * one page, PIPE_BUF, even to a user over pipe-user-pages-soft), and the reader is ours
 * (p[0] still open), so no EPIPE. The handler then reads the input and EOF exactly as
 * from a write through the loop, and the loop needs no handle for its stdin. Returns 1
 * when written and closed (*wfd = -1), 0 when the input is larger or the write failed
 * (the loop writes it, as before; nothing was written).
 */
static int write_small_input(int *wfd, const char *input, size_t len)
{
	ssize_t r = 0;

	if (len > PIPE_BUF)
		return 0;
	if (len > 0) {
		do
			r = write(*wfd, input, len);
		while (r < 0 && errno == EINTR);
		if (r != (ssize_t)len)
			return 0; /* cannot happen (see above); a partial write cannot either */
	}
	close(*wfd);
	*wfd = -1;
	return 1;
}

/* Starts the child; its pid, and its pidfd in *pidfd. -1 with errno: nothing runs (an
 * exec failure is reaped here). */
static pid_t start_child(struct child_args *a, int *pidfd)
{
	sigset_t all, old;
	pid_t pid;
	int e;

	sigfillset(&all);
	a->err = 0;
	a->parent = getpid();
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* No other thread is inside a section that may hold a descriptor without
	 * close-on-exec while the child exists (see wq__spawn_cloexec_begin). */
	pthread_mutex_lock(&cloexec_mutex);
	if (!(a->envp = env_block(a->changes))) {
		pid = -1;
		e = ENOMEM;
	} else {
		pid = clone(child_main, child_stack + sizeof(child_stack),
			    CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, a, pidfd);
		e = errno;
	}
	a->envp = NULL; /* the cache's, and the next spawn's once the lock is let go */
	pthread_mutex_unlock(&cloexec_mutex);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		errno = e;
		return -1;
	}
	if (a->err) { /* exec failed: the child has exited (or is about to): reap it */
		siginfo_t si;

		while (waitid((idtype_t)P_PIDFD, (id_t)*pidfd, &si, WEXITED) != 0 && errno == EINTR)
			;
		close(*pidfd);
		*pidfd = -1;
		errno = a->err;
		return -1;
	}
	return pid;
}

/* The error for a handler that could not be started (errno e): out of descriptors or
 * processes is the system's state (WQ_ELIMIT), not the handler's. */
static wq_rc start_error(int e, const char *prog, wq_error *err)
{
	wq_rc code = e == EMFILE || e == ENFILE || e == EAGAIN ? WQ_ELIMIT
		     : e == ENOMEM			     ? WQ_ENOMEM
							     : WQ_EIO;

	return wq__err(err, code, "%s: %s", prog, strerror(e));
}

wq_rc wq__spawn_start(const struct wq__spawn_opts *o, struct wq__spawn **out, wq_error *err)
{
	struct wq__spawn *sp;
	struct child_args a;
	char prog[4096];
	int p[3][2];
	pid_t pid;
	wq_rc rc;

	if (!o || !o->loop || !o->argv || !o->argv[0] || !o->on_done)
		return wq__err(err, WQ_EINVAL, "spawn: missing loop, argv or on_done");
	memset(&a, 0, sizeof(a));
	/* A program named by a path goes to execve as it is: the kernel checks what a stat
	 * and an access here would (missing, not executable, a directory) and the child
	 * hands its errno back ("PATH: reason", as before). A bare name is looked up in
	 * PATH, as execvp would. */
	if (strchr(o->argv[0], '/')) {
		a.path = o->argv[0];
	} else {
		if ((rc = wq__spawn_which(o->argv[0], prog, sizeof(prog), err)) != WQ_OK)
			return rc;
		a.path = prog;
	}
	a.argv = (char **)o->argv;
	a.changes = o->env;
	sp = calloc(1, sizeof(*sp));
	/* the read buffer exists before any read (on_alloc never meets its absence) */
	if (!sp || !rbuf_get()) {
		free(sp);
		return wq__err(err, WQ_ENOMEM, "spawn %s: out of memory", o->argv[0]);
	}
	if (make_pipes(p) != 0) {
		rc = start_error(errno, o->argv[0], err);
		free(sp);
		return rc;
	}
	sp->in_handle = !write_small_input(&p[0][1], o->input, o->input_len);
	a.fd[0] = p[0][0];
	a.fd[1] = p[1][1];
	a.fd[2] = p[2][1];
	sp->pidfd = -1;
	pid = start_child(&a, &sp->pidfd);
	rc = pid < 0 ? start_error(errno, a.path, err) : WQ_OK;
	/* The child's ends are the child's now (or nobody's). */
	close(p[0][0]);
	close(p[1][1]);
	close(p[2][1]);
	if (rc != WQ_OK) {
		if (p[0][1] >= 0)
			close(p[0][1]);
		close(p[1][0]);
		close(p[2][0]);
		free(sp);
		return rc;
	}

	sp->o = *o;
	sp->o.argv = NULL;
	sp->o.env = NULL;
	sp->res.exit_status = -1;
	sp->proc.data = sp;
	sp->in.data = sp;
	sp->out.data = sp;
	sp->err.data = sp;
	sp->timer.data = sp;
	sp->wreq.data = sp;
	sp->started = 1;
	sp->pid = pid;
	sp->pgid = pid; /* setsid() in the child */

	if (sp->in_handle)
		uv_pipe_init(o->loop, &sp->in, 0);
	uv_pipe_init(o->loop, &sp->out, 0);
	uv_pipe_init(o->loop, &sp->err, 0);
	uv_timer_init(o->loop, &sp->timer);
	sp->open_handles = 3 + sp->in_handle;
	if ((sp->in_handle && uv_pipe_open(&sp->in, p[0][1]) != 0) ||
	    uv_pipe_open(&sp->out, p[1][0]) != 0 ||
	    uv_pipe_open(&sp->err, p[2][0]) != 0 ||
	    uv_poll_init(o->loop, &sp->proc, sp->pidfd) != 0) {
		/* The loop cannot watch it (no memory for its tables): the child must not run
		 * unwatched. A uv_pipe_t owns its descriptor from uv_pipe_open on; the ones
		 * not reached are closed here. */
		pidfd_send_signal(sp->pidfd, SIGKILL, NULL, 0);
		while (waitid((idtype_t)P_PIDFD, (id_t)sp->pidfd, &(siginfo_t){0}, WEXITED) != 0 &&
		       errno == EINTR)
			;
		for (int i = sp->in_handle ? 0 : 1; i < 3; i++) {
			uv_pipe_t *h = i == 0 ? &sp->in : i == 1 ? &sp->out : &sp->err;
			uv_os_fd_t fd;

			if (uv_fileno((uv_handle_t *)h, &fd) != 0)
				close(i == 0 ? p[0][1] : p[i][0]);
		}
		sp->started = 0;
		sp->in_closed = sp->out_closed = sp->err_closed = 1;
		if (sp->in_handle)
			close_handle(sp, (uv_handle_t *)&sp->in);
		close_handle(sp, (uv_handle_t *)&sp->out);
		close_handle(sp, (uv_handle_t *)&sp->err);
		check_done(sp); /* closes the timer; frees sp (and the pidfd) at the last close */
		return wq__err(err, WQ_ENOMEM, "spawn %s: the event loop cannot watch it",
			       o->argv[0]);
	}
	sp->open_handles++;
	uv_poll_start(&sp->proc, UV_READABLE, on_exit_cb);

	uv_read_start((uv_stream_t *)&sp->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&sp->err, on_alloc, on_read);
	if (!sp->in_handle) {
		sp->in_closed = 1; /* written and closed before the clone */
	} else if (o->input_len > 0) {
		uv_buf_t b = uv_buf_init((char *)o->input, (unsigned int)o->input_len);

		if (uv_write(&sp->wreq, (uv_stream_t *)&sp->in, &b, 1, on_write) != 0)
			close_in(sp);
	} else {
		close_in(sp);
	}
	if (o->timeout > 0)
		uv_timer_start(&sp->timer, on_deadline, us_to_ms(o->timeout), 0);
	*out = sp;
	return WQ_OK;
}
