/*
 * w3_handler.c — the handler of bench/w3_lateness: on entry it reads CLOCK_MONOTONIC and
 * writes "<WAKEQ_TASK_ID> <ns>\n" to the FIFO named by argv[1], then exits 0. libc only,
 * so that its own start (exec, the dynamic loader) costs as little as a handler can.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	char line[96];
	const char *id = getenv("WAKEQ_TASK_ID");
	int fd, n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (argc < 2 || !id)
		return 1;
	n = snprintf(line, sizeof(line), "%s %lld\n", id,
		     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	fd = open(argv[1], O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, line, (size_t)n) != n) /* < PIPE_BUF: one atomic write */
		return 1;
	close(fd);
	return 0;
}
