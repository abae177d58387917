/* state.c — the task state machine of SPEC §2. */
#include "internal.h"

#include <string.h>

static const char *const state_names[] = {
	[WQ_STATE_PENDING] = "pending",	    [WQ_STATE_RUNNING] = "running",
	[WQ_STATE_SUCCEEDED] = "succeeded", [WQ_STATE_FAILED] = "failed",
	[WQ_STATE_INTERRUPTED] = "interrupted", [WQ_STATE_CANCELLED] = "cancelled",
};

const char *wq_state_name(wq_state s)
{
	if ((int)s < WQ_STATE_PENDING || (int)s > WQ_STATE_CANCELLED)
		return NULL;
	return state_names[s];
}

wq_rc wq_state_parse(const char *name, wq_state *out, wq_error *err)
{
	for (int s = WQ_STATE_PENDING; s <= WQ_STATE_CANCELLED; s++) {
		if (name && strcmp(name, state_names[s]) == 0) {
			*out = (wq_state)s;
			return WQ_OK;
		}
	}
	return wq__err(err, WQ_EINVAL,
		       "unknown state '%s' (expected pending, running, succeeded, failed, "
		       "interrupted or cancelled)",
		       name ? name : "");
}

int wq_state_is_terminal(wq_state s)
{
	return s == WQ_STATE_SUCCEEDED || s == WQ_STATE_FAILED || s == WQ_STATE_CANCELLED;
}

/* Rows: from; bits: allowed targets. Terminal states have no row: they never change.
 * running → pending exists only for a retryable failure reported by the handler itself;
 * recovery never uses it (it produces interrupted). */
#define BIT(s) (1u << (s))
static const unsigned allowed[] = {
	[WQ_STATE_PENDING] = BIT(WQ_STATE_RUNNING) | BIT(WQ_STATE_CANCELLED),
	[WQ_STATE_RUNNING] = BIT(WQ_STATE_SUCCEEDED) | BIT(WQ_STATE_PENDING) |
			     BIT(WQ_STATE_FAILED) | BIT(WQ_STATE_INTERRUPTED) |
			     BIT(WQ_STATE_CANCELLED),
	[WQ_STATE_INTERRUPTED] = BIT(WQ_STATE_PENDING) | BIT(WQ_STATE_SUCCEEDED) |
				 BIT(WQ_STATE_FAILED) | BIT(WQ_STATE_CANCELLED),
	[WQ_STATE_SUCCEEDED] = 0,
	[WQ_STATE_FAILED] = 0,
	[WQ_STATE_CANCELLED] = 0,
};

int wq__transition_allowed(wq_state from, wq_state to)
{
	if (!wq_state_name(from) || !wq_state_name(to))
		return 0;
	return (allowed[from] & BIT(to)) != 0;
}
