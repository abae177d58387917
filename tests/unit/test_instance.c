/* Host identity and the "is that instance gone?" decision (instance.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "instance.h"
#include "store/store.h"

#define LEASE (10 * WQ__US_PER_S)
#define NOW (INT64_C(1800000000) * WQ__US_PER_S)

static struct wq__instance inst(const char *host, const char *host_id, int64_t pid,
				int64_t start, int64_t heartbeat_at)
{
	struct wq__instance in;

	memset(&in, 0, sizeof(in));
	snprintf(in.id, sizeof(in.id), "%s:%lld:0000", host, (long long)pid);
	snprintf(in.host, sizeof(in.host), "%s", host);
	snprintf(in.host_id, sizeof(in.host_id), "%s", host_id);
	in.pid = pid;
	in.proc_start = start;
	in.heartbeat_at = heartbeat_at;
	return in;
}

static void same_host(void **state)
{
	struct wq__instance a = inst("web1", "boot-1/4026531836", 100, 5, NOW);
	struct wq__instance b = inst("web1", "boot-1/4026531836", 200, 5, NOW);

	(void)state;
	assert_true(wq__instance_same_host(&a, &b));
	/* another PID namespace on the same kernel (a container with the same host name) */
	snprintf(b.host_id, sizeof(b.host_id), "boot-1/4026532999");
	assert_false(wq__instance_same_host(&a, &b));
	/* another kernel (another machine, or this one rebooted) */
	snprintf(b.host_id, sizeof(b.host_id), "boot-2/4026531836");
	assert_false(wq__instance_same_host(&a, &b));
	/* unknown on either side: never compare pids */
	b.host_id[0] = '\0';
	assert_false(wq__instance_same_host(&a, &b));
	assert_false(wq__instance_same_host(&b, &a));
	a.host_id[0] = '\0';
	assert_false(wq__instance_same_host(&a, &b));
	/* the same identity under another host name ($WAKEQ_HOST): treated as another host */
	b = inst("web2", "boot-1/4026531836", 200, 5, NOW);
	a = inst("web1", "boot-1/4026531836", 100, 5, NOW);
	assert_false(wq__instance_same_host(&a, &b));
}

static void gone_same_host(void **state)
{
	struct wq__instance self = inst("web1", "boot-1/77", 100, 5, NOW);
	struct wq__instance in = inst("web1", "boot-1/77", 200, 9, NOW - WQ__US_PER_S);
	struct wq__pid_probe alive = {1, 'S', 9}, dead = {0, 0, 0}, zombie = {1, 'Z', 9};
	struct wq__pid_probe reused = {1, 'R', 12}, gone = {1, 'X', 9};
	char buf[128];

	(void)state;
	assert_null(wq__instance_gone_reason(&self, &in, &alive, LEASE, NOW, buf, sizeof(buf)));
	assert_null(wq__instance_gone_reason(&self, &in, NULL, LEASE, NOW, buf, sizeof(buf)));
	assert_non_null(wq__instance_gone_reason(&self, &in, &dead, LEASE, NOW, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "is dead"));
	assert_non_null(wq__instance_gone_reason(&self, &in, &zombie, LEASE, NOW, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "zombie"));
	assert_non_null(wq__instance_gone_reason(&self, &in, &gone, LEASE, NOW, buf, sizeof(buf)));
	assert_non_null(wq__instance_gone_reason(&self, &in, &reused, LEASE, NOW, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "another process"));
	/* start time unknown on the record: a live pid is not judged reused */
	in.proc_start = 0;
	assert_null(wq__instance_gone_reason(&self, &in, &reused, LEASE, NOW, buf, sizeof(buf)));
}

static void gone_other_namespace(void **state)
{
	/* Same host name, another PID namespace: its pid 200 is not our pid 200, whatever
	 * our /proc says about it; only the lease decides. */
	struct wq__instance self = inst("web1", "boot-1/77", 100, 5, NOW);
	struct wq__instance in = inst("web1", "boot-1/88", 200, 9, NOW - WQ__US_PER_S);
	struct wq__pid_probe dead = {0, 0, 0}, zombie = {1, 'Z', 9}, reused = {1, 'R', 12};
	char buf[128];

	(void)state;
	assert_null(wq__instance_gone_reason(&self, &in, &dead, LEASE, NOW, buf, sizeof(buf)));
	assert_null(wq__instance_gone_reason(&self, &in, &zombie, LEASE, NOW, buf, sizeof(buf)));
	assert_null(wq__instance_gone_reason(&self, &in, &reused, LEASE, NOW, buf, sizeof(buf)));
	/* the same with host_id unknown (a store that does not keep it) */
	in.host_id[0] = '\0';
	assert_null(wq__instance_gone_reason(&self, &in, &dead, LEASE, NOW, buf, sizeof(buf)));
	/* the lease still applies */
	in.heartbeat_at = NOW - LEASE - 1;
	assert_non_null(wq__instance_gone_reason(&self, &in, &dead, LEASE, NOW, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "no heartbeat"));
	in.heartbeat_at = NOW - LEASE;
	assert_null(wq__instance_gone_reason(&self, &in, NULL, LEASE, NOW, buf, sizeof(buf)));
}

static void parse_stat(void **state)
{
	struct wq__pid_probe p;
	/* comm may hold spaces and ')': the last ')' ends it */
	const char *line = "4242 (a) b) Z 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 "
			   "987654 0 0 18446744073709551615";

	(void)state;
	assert_int_equal(wq__instance_parse_stat(line, &p), 0);
	assert_int_equal(p.exists, 1);
	assert_int_equal(p.state, 'Z');
	assert_int_equal(p.start, 987654);
	assert_int_equal(wq__instance_parse_stat("4242 (a) S 1 2", &p), -1);
	assert_int_equal(wq__instance_parse_stat("garbage", &p), -1);
	assert_int_equal(p.exists, 0);
	assert_int_equal(wq__instance_parse_stat(NULL, &p), -1);
}

static void own_identity(void **state)
{
	struct wq__self self;
	wq_error e;
	char id[WQ_NAME_MAX + 1];
	const char *slash;

	(void)state;
	assert_int_equal(wq__instance_init(&self, "unit-host", &e), WQ_OK);
	assert_int_equal(self.proc_start, wq__instance_proc_start((int64_t)getpid()));
	assert_true(self.proc_start > 0);
	wq__instance_host_id(id, sizeof(id));
	assert_string_equal(self.host_id, id);
	if (access("/proc/sys/kernel/random/boot_id", R_OK) != 0)
		return; /* no /proc here: unknown is "" */
	slash = strchr(self.host_id, '/');
	assert_non_null(slash);
	assert_int_equal(slash - self.host_id, 36); /* a UUID */
	assert_true(slash[1] >= '1' && slash[1] <= '9');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_host),	     cmocka_unit_test(gone_same_host),
		cmocka_unit_test(gone_other_namespace), cmocka_unit_test(parse_stat),
		cmocka_unit_test(own_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
