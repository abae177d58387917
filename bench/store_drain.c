/*
 * store_drain.c — the store's side of the in-process drain (W2), deterministic: a fresh
 * SQLite store at DB, an instance, N tasks enqueued one by one (setup), then drain():
 * claim(B), then finish_batch(B outcomes, claim B) until nothing is left — what the
 * worker's store thread does, with the batch fixed instead of following the threads'
 * timing. Run under `valgrind --tool=callgrind --collect-atstart=no
 * --toggle-collect=drain` for instructions per task that repeat to the instruction
 * (bench/store_drain.sh). HARNESS_LIMIT=n gives the kind an attempt limit of n.
 * Uses the store's internal methods (store/op.h): built against the tree of the library
 * it links.
 */
#include "internal.h"
#include "store/op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FP "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct wq__store_methods *M = &wq__sqlite_methods;
static const char *const kinds[] = {"bench-w2"};
static const int inproc[] = {1};
static int maxatt[] = {0};

static void die(const char *what, const wq_error *e)
{
	fprintf(stderr, "store_drain: %s: %s\n", what, e->message);
	exit(1);
}

/* n succeeded outcomes of the claimed tasks c into o and v. */
static void outcomes(const struct wq__claimed *c, size_t n, struct wq__outcome *o,
		     const struct wq__outcome **v, int64_t *now)
{
	for (size_t i = 0; i < n; i++) {
		memset(&o[i], 0, sizeof(o[i]));
		o[i].task_id = c[i].id;
		o[i].attempt = c[i].attempt;
		o[i].instance = "w1";
		o[i].kind = WQ__FINISH_SUCCEEDED;
		o[i].now = ++*now;
		o[i].exit_status = -1;
		v[i] = &o[i];
	}
}

/* The counted part: every task claimed and finished, B at a time. */
__attribute__((noinline)) long drain(struct wq__store *s, int b, int64_t now)
{
	struct wq__claim_req req = {.instance = "w1", .kinds = kinds, .nkinds = 1, .limit = b,
				    .now = now, .max_attempts = maxatt, .in_process = inproc};
	struct wq__outcome *o = calloc((size_t)b, sizeof(*o));
	const struct wq__outcome **v = calloc((size_t)b, sizeof(*v));
	wq_rc *rcs = calloc((size_t)b, sizeof(*rcs));
	wq_error *errs = calloc((size_t)b, sizeof(*errs)), e;
	struct wq__claimed *c = NULL, *got = NULL;
	size_t n = 0, ngot = 0;
	long done = 0;

	if (!o || !v || !rcs || !errs || M->claim(s, &req, &c, &n, &e) != WQ_OK)
		die("claim", &e);
	while (n) {
		outcomes(c, n, o, v, &now);
		req.now = now;
		if (M->finish_batch(s, v, n, rcs, errs, &req, &got, &ngot, &e) != WQ_OK)
			die("finish", &e);
		for (size_t i = 0; i < n; i++) {
			if (rcs[i] != WQ_OK)
				die("outcome", &errs[i]);
			free(c[i].payload);
		}
		free(c);
		done += (long)n;
		c = got;
		n = ngot;
		got = NULL;
		ngot = 0;
	}
	free(c);
	free(o);
	free(v);
	free(rcs);
	free(errs);
	return done;
}

int main(int argc, char **argv)
{
	int64_t now = INT64_C(1700000000000000);
	struct wq__instance in;
	struct wq__store *s;
	wq_error e;
	long n, b, d;

	if (argc != 4 || (n = atol(argv[2])) <= 0 || (b = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: store_drain DB N B\n");
		return 2;
	}
	if (getenv("HARNESS_LIMIT"))
		maxatt[0] = atoi(getenv("HARNESS_LIMIT"));
	if (M->open(argv[1], WQ_OPEN_MIGRATE, &s, &e) != WQ_OK)
		die("open", &e);
	memset(&in, 0, sizeof(in));
	snprintf(in.id, sizeof(in.id), "w1");
	snprintf(in.host, sizeof(in.host), "h");
	in.pid = 1;
	in.started_at = in.heartbeat_at = now;
	if (M->instance_register(s, &in, &e) != WQ_OK)
		die("register", &e);
	for (long i = 0; i < n; i++) {
		struct wq__new_task t = {0};
		struct wq__enqueued_row row = {0};
		char op[32];

		snprintf(op, sizeof(op), "op_%ld", i);
		t.kind = "bench-w2";
		t.tenant = t.scope = "";
		t.operation = op;
		t.payload = "{}";
		t.payload_len = 2;
		t.payload_version = 1;
		t.payload_sha256 = t.fingerprint = FP;
		t.due_at = t.order_at = t.now = now + i;
		t.max_attempts = 3;
		if (M->enqueue(s, &t, &row, &e) != WQ_OK)
			die("enqueue", &e);
	}
	d = drain(s, (int)b, now + n + 1);
	printf("store_drain n=%ld batch=%ld drained=%ld\n", n, b, d);
	M->close(s);
	return d == n ? 0 : 1;
}
