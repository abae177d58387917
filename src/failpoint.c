/* failpoint.c — crash and fault injection for the tests.
 *
 * $WAKEQ_FAILPOINT=<store method> makes the process SIGKILL itself right before that
 * store call: a real crash between two writes, never a clean close. Other names are
 * checked where the fault is injected (wq__failpoint_hit), e.g. `commit-lost` in
 * src/store/sql.c. Read once. */
#include "internal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int wq__failpoint_hit(const char *name)
{
	static const char *armed;
	static int loaded;

	if (!loaded) {
		armed = getenv("WAKEQ_FAILPOINT");
		loaded = 1;
	}
	return armed && armed[0] && strcmp(armed, name) == 0;
}

void wq__failpoint(const char *name)
{
	if (wq__failpoint_hit(name))
		kill(getpid(), SIGKILL);
}
