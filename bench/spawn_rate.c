/*
 * spawn_rate.c — the cost of starting a command handler, without the store: N runs of
 * `/bin/true` (or argv after --), C at a time, on one libuv loop, through
 *   spawn   wakeq's own path (src/spawn.c: clone(CLONE_VM|CLONE_VFORK) + execve, pidfd)
 *   setpriv the path before issue 11: uv_spawn of `setpriv --pdeathsig KILL -- argv`
 *   uv      uv_spawn of argv alone (no death signal: a reference, not an option)
 * Prints one line per mode: `mode=spawn n=... concurrency=... seconds=... spawns_per_s=...`.
 * Built and run by bench/spawn_rate.sh against a build directory's libwakeq.a.
 */
#include "spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

static uv_loop_t *loop;
static int todo, inflight, conc, failed;
static char **args;
static const char *mode;
static const char *setpriv_path = "/usr/bin/setpriv";

static void next(void);

static void done_spawn(struct wq__spawn *sp, struct wq__spawn_result *r, void *ud)
{
	if (r->exit_status != 0)
		failed++;
	inflight--;
	next();
}

static void done_uv(uv_process_t *p, int64_t status, int sig)
{
	if (status != 0 || sig)
		failed++;
	uv_close((uv_handle_t *)p, (uv_close_cb)free);
	inflight--;
	next();
}

static void start_one(void)
{
	if (strcmp(mode, "spawn") == 0) {
		struct wq__spawn_opts o;
		struct wq__spawn *sp;
		wq_error e;

		memset(&o, 0, sizeof(o));
		o.loop = loop;
		o.argv = args;
		o.result_max = 1024;
		o.stderr_max = 1024;
		o.kill_grace = 1000000;
		o.on_done = done_spawn;
		if (wq__spawn_start(&o, &sp, &e) != WQ_OK) {
			fprintf(stderr, "spawn: %s\n", e.message);
			exit(1);
		}
	} else {
		uv_process_t *p = calloc(1, sizeof(*p));
		uv_process_options_t po;
		uv_stdio_container_t io[3];
		char *sargs[64];
		int n = 0, r;

		memset(&po, 0, sizeof(po));
		if (strcmp(mode, "setpriv") == 0) {
			sargs[n++] = (char *)setpriv_path;
			sargs[n++] = "--pdeathsig";
			sargs[n++] = "KILL";
			sargs[n++] = "--";
		}
		for (int i = 0; args[i] && n < 63; i++)
			sargs[n++] = args[i];
		sargs[n] = NULL;
		/* as src/spawn.c did before: three pipes, detached */
		for (int i = 0; i < 3; i++) {
			uv_pipe_t *pp = calloc(1, sizeof(*pp));

			uv_pipe_init(loop, pp, 0);
			io[i].flags = UV_CREATE_PIPE | (i == 0 ? UV_READABLE_PIPE : UV_WRITABLE_PIPE);
			io[i].data.stream = (uv_stream_t *)pp;
		}
		po.file = sargs[0];
		po.args = sargs;
		po.exit_cb = done_uv;
		po.flags = UV_PROCESS_DETACHED;
		po.stdio = io;
		po.stdio_count = 3;
		r = uv_spawn(loop, p, &po);
		for (int i = 0; i < 3; i++)
			uv_close((uv_handle_t *)io[i].data.stream, (uv_close_cb)free);
		if (r != 0) {
			fprintf(stderr, "uv_spawn: %s\n", uv_strerror(r));
			exit(1);
		}
	}
	inflight++;
	todo--;
}

static void next(void)
{
	while (todo > 0 && inflight < conc)
		start_one();
}

int main(int argc, char **argv)
{
	static char *deflt[] = {"/bin/true", NULL};
	struct timespec a, b;
	int n;
	double s;

	if (argc < 4) {
		fprintf(stderr, "usage: spawn_rate spawn|setpriv|uv N C [-- argv...]\n");
		return 2;
	}
	mode = argv[1];
	n = todo = atoi(argv[2]);
	conc = atoi(argv[3]);
	args = argc > 5 && strcmp(argv[4], "--") == 0 ? argv + 5 : deflt;
	if (getenv("SETPRIV"))
		setpriv_path = getenv("SETPRIV");
	loop = uv_default_loop();
	clock_gettime(CLOCK_MONOTONIC, &a);
	next();
	uv_run(loop, UV_RUN_DEFAULT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("mode=%s n=%d concurrency=%d seconds=%.3f spawns_per_s=%.0f failed=%d\n", mode, n,
	       conc, s, n / s, failed);
	return failed ? 1 : 0;
}
