/* fuzz_followup.c — a handler's follow-ups file ($WAKEQ_FOLLOWUPS, src/followup.c; parsed
 * and checked in src/store/op_followup.c before finish() creates the tasks). Any text is
 * accepted or refused with a reason, never a crash or a leak. Properties: the answer is
 * the same twice; an accepted set has at most the follow-ups the limits allow, each with
 * a non-empty operation key that fits WQ_KEY_MAX; limits only ever refuse more (a text
 * accepted under limits is accepted without them, with the same keys). The first byte
 * chooses the parent's depth and the limits; a text with a NUL byte is refused by the
 * worker before parsing (followup.c), so it is not parsed here either. */
#include "store/op.h"

#include <stdlib.h>
#include <string.h>

#define MAXOPS 16

static void free_ops(char **ops)
{
	for (size_t i = 0; i < MAXOPS; i++)
		free(ops[i]), ops[i] = NULL;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct wq__followup_limits lim = {.max_followups = 3, .max_depth = 2, .max_payload = 64,
					  .section = "limits"};
	char *ops[MAXOPS] = {0}, *ops2[MAXOPS] = {0}, why[512], why2[512];
	const char *kind = "parent.kind", *op = "parent/op";
	size_t n = 0, n2 = 0;
	char *text;
	int depth, limited, r, r2;

	if (size < 1 || memchr(data + 1, '\0', size - 1))
		return 0;
	depth = data[0] & 3;
	limited = (data[0] >> 2) & 1;
	if ((data[0] >> 3) & 1) /* a parent whose keys leave no room: hashed children */
		op = "a-long-operation-key-of-the-parent-task-that-fills-nearly-all-of-the-room-"
		     "there-is-for-an-operation-key-in-wakeq-so-that-children-are-hashed-xxxxxxxxx"
		     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	if (!(text = malloc(size)))
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	r = wq__followups_check(text, limited ? &lim : NULL, kind, op, depth, &n, ops, MAXOPS,
				why, sizeof(why));
	r2 = wq__followups_check(text, limited ? &lim : NULL, kind, op, depth, &n2, ops2, MAXOPS,
				 why2, sizeof(why2));
	if (r != r2 || (r == 0 && n != n2) || (r != 0 && strcmp(why, why2) != 0))
		abort(); /* not the same answer twice */
	if (r != 0 && !why[0])
		abort(); /* refused without a reason */
	if (r == 0) {
		for (size_t i = 0; i < n && i < MAXOPS; i++)
			if (!ops[i] || !ops[i][0] || strlen(ops[i]) > WQ_KEY_MAX ||
			    strcmp(ops[i], ops2[i]) != 0)
				abort();
		if (limited && n > (size_t)lim.max_followups)
			abort();
	}
	free_ops(ops2);
	if (r == 0 && limited) {
		r2 = wq__followups_check(text, NULL, kind, op, depth, &n2, ops2, MAXOPS, why2,
					 sizeof(why2));
		if (r2 != 0 || n2 != n)
			abort(); /* refused without the limits that let it through */
		for (size_t i = 0; i < n && i < MAXOPS; i++)
			if (strcmp(ops[i], ops2[i]) != 0)
				abort();
		free_ops(ops2);
	}
	free_ops(ops);
	free(text);
	return 0;
}
