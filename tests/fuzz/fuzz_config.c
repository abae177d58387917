/* fuzz_config.c — the worker configuration (INI, src/config.c): any text is accepted
 * or refused with a message, never a crash or a leak. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1);
	wq_config *cfg = NULL;
	wq_error e;

	memcpy(text, data, size);
	text[size] = '\0';
	if (wq_config_parse(text, "fuzz.ini", &cfg, &e) == WQ_OK) {
		wq_prune_opts p;
		(void)wq_config_db(cfg);
		wq_config_retention(cfg, &p);
		wq_config_free(cfg);
	} else if (!e.message[0]) {
		abort(); /* refused without saying why */
	}
	free(text);
	return 0;
}
