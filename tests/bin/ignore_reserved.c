/* ignore_reserved PROGRAM ARGS...: runs PROGRAM with glibc's two reserved real-time
 * signals (32, 33) ignored, as some CI runners start their jobs: set with the kernel's
 * call, since glibc's sigaction() refuses them. A worker must not pass that on to its
 * handlers (t_spawn_direct). */
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long act[8] = {(unsigned long)SIG_IGN}; /* handler first in every layout */

	if (argc < 2) {
		fprintf(stderr, "usage: ignore_reserved PROGRAM ARGS...\n");
		return 2;
	}
	for (int sig = 32; sig <= 33; sig++)
		if (syscall(SYS_rt_sigaction, sig, act, NULL, (size_t)(NSIG - 1) / 8) != 0) {
			perror("rt_sigaction");
			return 1;
		}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
