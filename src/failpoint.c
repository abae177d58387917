/* failpoint.c — crash injection for the crash tests.
 *
 * $WAKEQ_FAILPOINT=<store method> makes the process SIGKILL itself right before that
 * store call: a real crash between two writes, never a clean close. Read once. */
#include "internal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wq__failpoint(const char *name)
{
	static const char *armed;
	static int loaded;

	if (!loaded) {
		armed = getenv("WAKEQ_FAILPOINT");
		loaded = 1;
	}
	if (armed && armed[0] && strcmp(armed, name) == 0)
		kill(getpid(), SIGKILL);
}
