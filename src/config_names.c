/* config_names.c — does a configuration define the names an enqueue uses (issue 14)?
 *
 * `wakeq enqueue --config FILE` (or $WAKEQ_CONFIG) refuses a kind or a notify channel the
 * file does not define, so a typo fails at the enqueue (exit 2) instead of leaving a task
 * no worker claims or a delivery no channel sends. The built-in `inbox:` channel needs
 * no section; a channel of another form is left to wq_enqueue's own checks. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* Appends ", 'name'" (or the first "'name'") to buf, truncating quietly: the message
 * names as many unknown names as fit. */
static void add_name(char *buf, size_t bufsz, const char *name)
{
	size_t len = strlen(buf);

	if (len < bufsz)
		snprintf(buf + len, bufsz - len, "%s'%.130s'", len ? ", " : "", name);
}

/* 1 when `channel` is webhook:NAME or command:NAME and the config has no [channel.NAME]
 * of that type. */
static int channel_unknown(const wq_config *cfg, const char *channel)
{
	const struct wq__channel_config *ch;
	enum wq__channel_type want;
	const char *name;

	if (strncmp(channel, "webhook:", 8) == 0) {
		want = WQ__CHANNEL_WEBHOOK;
		name = channel + 8;
	} else if (strncmp(channel, "command:", 8) == 0) {
		want = WQ__CHANNEL_COMMAND;
		name = channel + 8;
	} else {
		return 0;
	}
	ch = wq__config_channel(cfg, name);
	return !ch || ch->type != want;
}

wq_rc wq_config_check_names(const wq_config *cfg, const char *kind,
			    const char *const *notify, size_t nnotify, wq_error *err)
{
	char channels[600] = "";

	if (!cfg)
		return WQ_OK;
	for (size_t i = 0; i < nnotify; i++)
		if (notify[i] && channel_unknown(cfg, notify[i]))
			add_name(channels, sizeof channels, notify[i]);
	if (kind && !wq__config_kind(cfg, kind))
		return wq__err(err, WQ_ECONFIG, "kind '%.130s' is not defined in %s (no [kind.%.130s])%s%s",
			       kind, cfg->path, kind, channels[0] ? "; unknown channels: " : "",
			       channels);
	if (channels[0])
		return wq__err(err, WQ_ECONFIG, "unknown channels: %s (not defined in %s: "
			       "webhook:NAME and command:NAME need a [channel.NAME] of that type)",
			       channels, cfg->path);
	return WQ_OK;
}
