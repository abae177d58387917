/* command_check.c — a worker's start-up check of its handlers' programs (issue 14). */
#include "internal.h"
#include "spawn.h"

#include <limits.h>

static wq_rc check_one(const wq_config *cfg, const char *what, const char *name, int line,
		       char *const *argv, wq_error *err)
{
	char path[PATH_MAX];
	wq_error e = {0};

	if (!argv || !argv[0])
		return WQ_OK; /* the loader refuses a missing command already */
	if (wq__spawn_which(argv[0], path, sizeof(path), &e) == WQ_OK)
		return WQ_OK;
	return wq__err(err, WQ_ECONFIG,
		       "%s:%d: [%s.%s] command: '%s' does not exist or is not executable (%s)",
		       cfg->path ? cfg->path : "config", line, what, name, argv[0], e.message);
}

wq_rc wq__check_commands(const wq_config *cfg, wq_error *err)
{
	wq_rc rc;

	for (size_t i = 0; i < cfg->nkinds; i++)
		if ((rc = check_one(cfg, "kind", cfg->kinds[i].name, cfg->kinds[i].line,
				    cfg->kinds[i].argv, err)))
			return rc;
	for (size_t i = 0; i < cfg->nchannels; i++)
		if (cfg->channels[i].type == WQ__CHANNEL_COMMAND &&
		    (rc = check_one(cfg, "channel", cfg->channels[i].name, cfg->channels[i].line,
				    cfg->channels[i].argv, err)))
			return rc;
	return WQ_OK;
}
