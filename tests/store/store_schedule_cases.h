/* store_schedule_cases.h — store contract cases of schedules (issue 12), included by
 * test_store.c where they stood (they use its fixtures and helpers). */
/* ---- schedules (issue 12) ---- */

#define SEC INT64_C(1000000)

static void add_schedule(struct fx *f, const char *name, const char *overlap,
			 const char *catch_up, wq_rc want)
{
	struct wq__new_schedule ns;
	wq_error e;

	memset(&ns, 0, sizeof ns);
	ns.name = name;
	ns.cron = "";
	ns.tz = "";
	ns.kind = "k";
	ns.tenant = "";
	ns.scope = "";
	ns.every = SEC;
	ns.payload = "{}";
	ns.payload_len = 2;
	ns.payload_version = 1;
	ns.payload_sha256 = FP;
	ns.fingerprint = FP;
	ns.max_attempts = 3;
	ns.overlap = overlap;
	ns.catch_up = catch_up;
	ns.now = T0;
	ns.next_slot = T0 + SEC;
	assert_int_equal(M->schedule_add(f->s, &ns, &e), want);
}

static int sched_fire(struct fx *f, const char *inst, int64_t now)
{
	int fired = -1;
	int64_t next = 0;
	wq_error e;

	assert_int_equal(M->schedule_fire(f->s, inst, now, SEC, &fired, &next, &e), WQ_OK);
	return fired;
}

/* Takes or renews inst's leases for ttl on the store's clock; how many it holds. */
static int sched_lease(struct fx *f, const char *inst, int64_t ttl)
{
	int owned = -1;
	int64_t next = 0;
	wq_error e;

	assert_int_equal(M->schedule_lease(f->s, inst, ttl, &owned, &next, &e), WQ_OK);
	return owned;
}

/* The lease is one owner's until it expires on the store's clock, whatever the
 * callers' clocks say (issue 15); only the owner fires; a slot fired again (by a later
 * owner) is a replay of its key, not a second task. */
static void schedule_lease_and_fire_once(void **state)
{
	struct fx *f = *state;
	wq_schedule sc;
	wq_task t;
	wq_error e;
	int64_t first_task;

	add_schedule(f, "s", "allow", "latest", WQ_OK);
	add_schedule(f, "s", "allow", "latest", WQ_ECONFLICT);
	assert_int_equal(sched_lease(f, "a", 60 * SEC), 1);
	assert_int_equal(sched_lease(f, "b", 60 * SEC), 0); /* a's lease holds */
	assert_int_equal(sched_fire(f, "b", T0 + SEC + SEC / 2), 0);
	assert_int_equal(sched_fire(f, "a", T0 + SEC + SEC / 2), 1);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_OK);
	assert_true(sc.last_slot == T0 + SEC);
	assert_true(sc.next_slot == T0 + 2 * SEC);
	assert_string_equal(sc.owner, "a");
	first_task = sc.last_task;
	assert_int_equal(M->get(f->s, first_task, &t, &e), WQ_OK);
	assert_string_equal(t.operation, "schedule:s:2023-11-14T22:13:21.000Z");
	assert_int_equal(sched_fire(f, "a", T0 + SEC + SEC / 2), 0); /* nothing due */

	/* a renews once with a short lease and stops; b takes over only once it expired
	 * on the store's clock (polled, bounded); the slot T0+1s comes round again (resume
	 * sets next_slot) and b fires it: the key replays, no second task */
	assert_int_equal(sched_lease(f, "a", SEC / 2), 1);
	for (int i = 0; i < 2000 && sched_lease(f, "b", 60 * SEC) == 0; i++)
		usleep(10000);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_OK);
	assert_string_equal(sc.owner, "b");
	assert_int_equal(sched_fire(f, "a", T0 + 11 * SEC), 0); /* a is no owner now */
	assert_int_equal(M->schedule_pause(f->s, "s", 1, 0, &e), WQ_OK);
	assert_int_equal(sched_lease(f, "b", 60 * SEC), 0); /* paused: nobody's */
	assert_int_equal(M->schedule_pause(f->s, "s", 0, T0 + SEC, &e), WQ_OK);
	assert_int_equal(sched_lease(f, "b", 60 * SEC), 1);
	assert_int_equal(M->schedule_fire(f->s, "b", T0 + SEC + SEC / 2, SEC, &(int){0},
					  &(int64_t){0}, &e), WQ_OK);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_OK);
	assert_true(sc.last_task == first_task);
	assert_int_equal(M->schedule_release(f->s, "b", &e), WQ_OK);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_OK);
	assert_string_equal(sc.owner, "");
	assert_int_equal(M->schedule_rm(f->s, "s", &e), WQ_OK);
	assert_int_equal(M->schedule_rm(f->s, "s", &e), WQ_ENOTFOUND);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_ENOTFOUND);
}

/* Clock skew (issue 15): an owner whose clock runs 10 minutes ahead of the store's
 * still holds (and fires) its schedule, and a would-be owner whose clock runs ahead
 * does not take it over: the lease lives 60 s on the store's clock. */
static void schedule_lease_ignores_the_callers_clock(void **state)
{
	struct fx *f = *state;
	int64_t store_now = 0;
	wq_schedule sc;
	wq_error e;

	add_schedule(f, "s", "allow", "latest", WQ_OK);
	assert_int_equal(M->store_now(f->s, &store_now, &e), WQ_OK);
	assert_int_equal(sched_lease(f, "a", 60 * SEC), 1);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_OK);
	assert_true(sc.lease_until >= store_now + 60 * SEC); /* written on the store's clock */
	assert_int_equal(sched_fire(f, "b", store_now + 600 * SEC), 0);
	assert_int_equal(sched_lease(f, "b", 60 * SEC), 0);
	assert_int_equal(sched_fire(f, "a", store_now + 600 * SEC), 1);
	assert_int_equal(M->schedule_get(f->s, "s", &sc, &e), WQ_OK);
	assert_string_equal(sc.owner, "a");
}

static int64_t event_count(struct fx *f, const char *name, const char *type)
{
	wq_schedule_event *ev = NULL;
	size_t n = 0;
	int64_t sum = 0;
	wq_error e;

	assert_int_equal(M->schedule_events(f->s, name, &ev, &n, &e), WQ_OK);
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev[i].type, type) == 0)
			sum += ev[i].count;
	free(ev);
	return sum;
}

/* Five slots due: all runs five, latest one (four recorded missed), none only the newest
 * (within the grace: on time; four missed), and after a longer gap none at all; overlap
 * skip records a slot whose previous run is still pending. */
static void schedule_catch_up_and_overlap(void **state)
{
	struct fx *f = *state;
	wq_schedule sc;
	wq_error e;

	add_schedule(f, "all", "allow", "all", WQ_OK);
	add_schedule(f, "latest", "allow", "latest", WQ_OK);
	add_schedule(f, "none", "allow", "none", WQ_OK);
	add_schedule(f, "skip", "skip", "latest", WQ_OK);
	assert_int_equal(sched_lease(f, "a", 60 * SEC), 4);
	/* slots T0+1s .. T0+5s are due at T0+5.5s; skip fires one */
	assert_int_equal(sched_fire(f, "a", T0 + 5 * SEC + SEC / 2), 5 + 1 + 1 + 1);
	assert_int_equal(event_count(f, "all", "fired"), 5);
	assert_int_equal(event_count(f, "latest", "fired"), 1);
	assert_int_equal(event_count(f, "latest", "skipped-missed"), 4);
	assert_int_equal(event_count(f, "none", "fired"), 1);
	assert_int_equal(event_count(f, "none", "skipped-missed"), 4);
	assert_int_equal(M->schedule_get(f->s, "none", &sc, &e), WQ_OK);
	assert_true(sc.next_slot == T0 + 6 * SEC);
	/* the next slot of skip: its run (pending, never claimed) overlaps */
	assert_int_equal(sched_fire(f, "a", T0 + 6 * SEC + SEC / 10), 1 + 1 + 1 + 0);
	assert_int_equal(event_count(f, "skip", "skipped-overlap"), 1);
	assert_int_equal(event_count(f, "skip", "fired"), 1);
	/* none, with a grace shorter than the newest slot's lateness: nothing runs */
	assert_int_equal(M->schedule_fire(f->s, "a", T0 + 9 * SEC + SEC / 2, SEC / 10, &(int){0},
					  &(int64_t){0}, &e), WQ_OK);
	assert_int_equal(event_count(f, "none", "fired"), 2);
	assert_int_equal(event_count(f, "none", "skipped-missed"), 4 + 3);
}

