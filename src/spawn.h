/*
 * spawn.h — runs one command handler as a child process on a libuv loop (SPEC §4).
 *
 * The handler's argv is exec'd directly (no shell, no helper program) in a child made with
 * clone(CLONE_VM | CLONE_VFORK) that first sets PR_SET_PDEATHSIG (SIGKILL), so the kernel
 * kills the handler when the worker thread that spawned it dies: a handler never outlives
 * a killed worker. It leads its own session and process group; only its stdin, stdout
 * and stderr (pipes) are inherited, every other descriptor is close-on-exec. Its exit is
 * watched through a pidfd in the loop. Linux 5.4 or later (CLONE_PIDFD, waitid P_PIDFD).
 *
 * Lifecycle: wq__spawn_start() → (wq__spawn_terminate / wq__spawn_kill as needed) →
 * on_done(), called exactly once, after the child has exited AND its stdout and stderr
 * reached EOF AND every libuv handle of the spawn is closed. The spawn frees itself right
 * after on_done returns; the caller must not touch it afterwards.
 */
#ifndef WQ_SPAWN_H
#define WQ_SPAWN_H

#include "wakeq.h"

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct wq__spawn;

/* What one run produced. Valid only inside on_done; `out` may be taken (set to NULL)
 * by on_done, which then owns it and frees it with free(). */
struct wq__spawn_result {
	int exit_status;      /* -1 when killed by a signal */
	int term_signal;      /* 0 unless killed by a signal */
	int timed_out;        /* the runtime limit fired and the handler was stopped */
	int stop_requested;   /* wq__spawn_terminate/kill reached a live child */
	int output_cut;       /* pipes were still open long after exit and were closed */
	char *out;            /* stdout, at most result_max bytes (NUL-terminated) */
	size_t out_len;
	size_t out_total;     /* all stdout bytes seen; > result_max means too large */
	int out_too_large;
	char *err;            /* the last stderr_max bytes of stderr (NUL-terminated) */
	size_t err_len;
	size_t err_total;
};

typedef void (*wq__spawn_done_cb)(struct wq__spawn *sp, struct wq__spawn_result *res,
				  void *ud);
/* Called when the runtime limit fires, right after SIGTERM was sent. */
typedef void (*wq__spawn_timeout_cb)(struct wq__spawn *sp, void *ud);

struct wq__spawn_opts {
	uv_loop_t *loop;
	char *const *argv;          /* the handler's argv, NULL-terminated */
	/* Environment changes on top of the parent's environment: "NAME=value" sets,
	 * "NAME" (no '=') removes. NULL-terminated; may be NULL. */
	const char *const *env;
	const char *input;          /* written to stdin, then stdin is closed; borrowed
				     * until on_done */
	size_t input_len;
	size_t result_max;          /* stdout beyond this is read and discarded */
	size_t stderr_max;          /* stderr kept (the tail) */
	int64_t timeout;            /* µs; 0 = none. SIGTERM, then SIGKILL after kill_grace */
	int64_t kill_grace;         /* µs between SIGTERM and SIGKILL */
	/* µs to wait for stdout/stderr EOF after the child exited (a grandchild may hold
	 * them open); then they are closed and output_cut is set. 0 means kill_grace. */
	int64_t eof_grace;
	wq__spawn_done_cb on_done;  /* required */
	wq__spawn_timeout_cb on_timeout; /* optional */
	void *ud;
};

/*
 * Starts the handler. On success *out is the running spawn (it has exec'd) and on_done
 * will be called exactly once. On failure (program not found, exec refused — not
 * executable, a missing interpreter —, no memory) the error names the program and its
 * reason ("PATH: strerror"), on_done is never called and nothing is left running (a child
 * whose exec failed is reaped before this returns; handles already opened close on the
 * next loop turn).
 * WQ_ELIMIT (out of descriptors or processes: EMFILE, ENFILE, EAGAIN) and WQ_ENOMEM
 * mean the system could not start it now; nothing ran, and a later try may succeed.
 */
wq_rc wq__spawn_start(const struct wq__spawn_opts *o, struct wq__spawn **out, wq_error *err);

/* The child's pid (0 once it has exited: the number is no longer ours to signal). */
int wq__spawn_pid(const struct wq__spawn *sp);

/* Sends SIGTERM and SIGKILL `grace` µs later unless the child exits first. Returns 1 when
 * this call started the stop, 0 when the child had already exited or was already being
 * stopped (a shorter grace still applies). */
int wq__spawn_terminate(struct wq__spawn *sp, int64_t grace);
/* Sends SIGKILL now (no-op once exited). */
void wq__spawn_kill(struct wq__spawn *sp);

/*
 * Descriptors that code we do not control opens without close-on-exec (libcurl's
 * socketpairs: its multi handle's wake-up pair, the threaded resolver's pair) must never
 * reach a handler. Such code runs between wq__spawn_cloexec_begin() and
 * wq__spawn_cloexec_end(): begin takes a process-wide lock and notes the descriptors that
 * lack FD_CLOEXEC; end marks every descriptor that lacks it and was not noted, then
 * unlocks. wq__spawn_start forks under the same lock, so no child is ever created while
 * such a descriptor is open without the flag. Keep the section short: spawns wait on it.
 */
#define WQ__FDSET_MAX 256
struct wq__fdset {
	int n;
	int overflow;         /* more than WQ__FDSET_MAX: the ones beyond are not noted,
			       * so end marks them close-on-exec too */
	int fd[WQ__FDSET_MAX];
};
void wq__spawn_cloexec_begin(struct wq__fdset *before);
void wq__spawn_cloexec_end(const struct wq__fdset *before);

/* Finds `prog` the way execvp would: as is when it contains '/', else in $PATH. Writes an
 * executable path into buf. WQ_ENOTFOUND with "<prog>: <reason>" when none is found. */
wq_rc wq__spawn_which(const char *prog, char *buf, size_t bufsz, wq_error *err);

#endif /* WQ_SPAWN_H */
