/* sd_notify.c — the systemd notification protocol (sd_notify(3)), for a worker run as a
 * `Type=notify` service (dist/wakeq-worker@.service).
 *
 * Why not libsystemd's sd_notify(): the protocol is one datagram of "KEY=VALUE\n" lines
 * to the AF_UNIX socket named by $NOTIFY_SOCKET (a path, or an abstract name written
 * with a leading '@'), documented as a stable interface; a dozen lines here avoid
 * linking every program that uses libwakeq (and the package) against libsystemd, and
 * they work unchanged where systemd is absent (no $NOTIFY_SOCKET: nothing is sent).
 *
 * Sent: READY=1 once the instance is registered and claims; STOPPING=1 when a drain
 * begins; WATCHDOG=1 on every heartbeat tick when $WATCHDOG_USEC asks for it (and
 * $WATCHDOG_PID, when set, is this process). Failures are ignored: a notification is
 * advice to the service manager, never a reason to stop working. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void wq__sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	socklen_t salen;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len >= sizeof sa.sun_path)
		return;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace: the name is not NUL-terminated */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)!sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	close(fd);
}

void wq__sd_watchdog(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");

	if (!usec || !*usec)
		return;
	if (pid && *pid && strtol(pid, NULL, 10) != (long)getpid())
		return;
	wq__sd_notify("WATCHDOG=1");
}
