/* fuzz_argv.c — a configured command line split into an argument vector (src/argv.c,
 * no shell: the `command =` of a kind or channel). Property: the arguments together
 * are never longer than the line (quotes and escapes only remove characters). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1), **argv = NULL;
	wq_error e;

	memcpy(text, data, size);
	text[size] = '\0';
	if (wq__argv_split(text, &argv, &e) == WQ_OK) {
		size_t total = 0;
		for (char **a = argv; *a; a++)
			total += strlen(*a);
		if (total > strlen(text))
			abort();
		wq__argv_free(argv);
	}
	free(text);
	return 0;
}
