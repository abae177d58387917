/* intake_maildir.c — a Maildir as a source (issue 13; SPEC §9). Runs on a pool thread.
 *
 * Unacknowledged messages: every file in new/, and every file in cur/ whose flags (after
 * ":2,") have neither S (seen) nor T (trashed) — a mail client may have moved a message
 * to cur/ without reading it. The key is the file's unique name (before ':'), which
 * stays the same whatever flags are added. Reading opens the file and changes nothing:
 * the message stays where it is. The acknowledgement moves it to cur/ with the S flag
 * added (cur/UNIQUE:2,S), one rename(2); a message already seen, or gone, needs nothing. */
#include "intake.h"
#include "store/evidence.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD_MAX (64u * 1024u) /* read for the header summary */

static wq_rc md_open(const struct wq__source_config *c, void **conn, wq_error *err)
{
	*conn = NULL; /* nothing to keep: every call works on the directory */
	return WQ_OK;
}

static void md_close(void *conn)
{
	(void)conn;
}

/* The flags of a name in cur/ ("" when it has no ":2," part). */
static const char *flags_of(const char *name)
{
	const char *info = strstr(name, ":2,");

	return info ? info + 3 : "";
}

/* A unique name usable as a key: UTF-8, no control character, not too long. */
static int key_ok(const char *name, size_t len)
{
	if (len == 0 || len > WQ_INTAKE_KEY_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return 0;
	return 1; /* valid UTF-8 is checked by the caller */
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct wq__intake_item *)a)->key,
		      ((const struct wq__intake_item *)b)->key);
}

/* Appends the unacknowledged messages of sub ("new" or "cur"). */
static int scan(const struct wq__source_config *c, const char *sub,
		struct wq__intake_item **items, size_t *n, size_t *cap, char *err, size_t errsz)
{
	char dir[4096];
	struct dirent *d;
	DIR *dh;

	snprintf(dir, sizeof(dir), "%s/%s", c->path, sub);
	if (!(dh = opendir(dir))) {
		snprintf(err, errsz, "cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((d = readdir(dh))) {
		const char *name = d->d_name;
		size_t klen = strcspn(name, ":");
		struct wq__intake_item *it;
		char *clean = NULL;

		if (name[0] == '.')
			continue;
		if (strcmp(sub, "cur") == 0 && strpbrk(flags_of(name), "ST"))
			continue;
		if (!key_ok(name, klen) ||
		    !(clean = wq__utf8_clean(name, klen)) || strlen(clean) != klen ||
		    memcmp(clean, name, klen) != 0) {
			/* not a usable key: never handed out, never touched */
			free(clean);
			continue;
		}
		free(clean);
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			struct wq__intake_item *g = realloc(*items, nc * sizeof(*g));

			if (!g)
				goto oom;
			*items = g;
			*cap = nc;
		}
		it = &(*items)[*n];
		memset(it, 0, sizeof(*it));
		memcpy(it->key, name, klen);
		it->key[klen] = '\0';
		if (!(it->ref = malloc(strlen(sub) + strlen(name) + 2)))
			goto oom;
		sprintf(it->ref, "%s/%s", sub, name);
		(*n)++;
	}
	closedir(dh);
	return 0;
oom:
	closedir(dh);
	snprintf(err, errsz, "out of memory listing %s", dir);
	return -1;
}

static int md_list(void *conn, const struct wq__source_config *c, int64_t *uidvalidity,
		   struct wq__intake_item **items, size_t *n, char *err, size_t errsz)
{
	size_t cap = 0;

	*uidvalidity = 0;
	*items = NULL;
	*n = 0;
	if (scan(c, "new", items, n, &cap, err, errsz) || scan(c, "cur", items, n, &cap, err, errsz)) {
		wq__intake_items_free(*items, *n);
		*items = NULL;
		*n = 0;
		return -1;
	}
	if (*n > 1)
		qsort(*items, *n, sizeof(**items), by_key);
	return 0;
}

static int md_fetch(void *conn, const struct wq__source_config *c, int64_t uidvalidity,
		    struct wq__intake_item *it)
{
	char path[4096], *head = NULL;
	struct stat st;
	ssize_t got;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", c->path, it->ref);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(it->error, sizeof(it->error), "cannot read %s: %s", it->ref, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!(head = malloc(HEAD_MAX))) {
		close(fd);
		snprintf(it->error, sizeof(it->error), "out of memory");
		return -1;
	}
	while (len < HEAD_MAX && (got = read(fd, head + len, HEAD_MAX - len)) > 0)
		len += (size_t)got;
	close(fd);
	it->size = st.st_size;
	it->payload = wq__intake_payload(c->name, it->key, 0, 0, head, len, it->size, 0, path,
					 &it->payload_len);
	free(head);
	if (!it->payload) {
		snprintf(it->error, sizeof(it->error), "out of memory building the payload");
		return -1;
	}
	return 0;
}

/* The name in sub/ whose unique part is key, into out; 0 when found. */
static int find_name(const struct wq__source_config *c, const char *sub, const char *key,
		     char *out, size_t outsz)
{
	size_t klen = strlen(key);
	char dir[4096];
	struct dirent *d;
	DIR *dh;
	int rc = -1;

	snprintf(dir, sizeof(dir), "%s/%s", c->path, sub);
	if (!(dh = opendir(dir)))
		return -1;
	while ((d = readdir(dh)))
		if (strncmp(d->d_name, key, klen) == 0 &&
		    (d->d_name[klen] == '\0' || d->d_name[klen] == ':')) {
			snprintf(out, outsz, "%s", d->d_name);
			rc = 0;
			break;
		}
	closedir(dh);
	return rc;
}

/* The flags with S added, in ASCII order as the Maildir convention wants. */
static void flags_with_seen(const char *flags, char *out, size_t outsz)
{
	size_t o = 0;
	int added = 0;

	for (const char *f = flags; *f && o + 2 < outsz; f++) {
		if (!added && *f > 'S')
			out[o++] = 'S', added = 1;
		if (*f != 'S')
			out[o++] = *f;
	}
	if (!added && o + 1 < outsz)
		out[o++] = 'S';
	out[o] = '\0';
}

static int ack_one(const struct wq__source_config *c, const char *key, char *err, size_t errsz)
{
	char name[1024], from[4096], to[4096], fl[64];
	const char *sub = "new";

	if (find_name(c, "new", key, name, sizeof(name)) != 0) {
		sub = "cur";
		if (find_name(c, "cur", key, name, sizeof(name)) != 0)
			return 0; /* gone (deleted or moved away): nothing left to mark */
		if (strchr(flags_of(name), 'S'))
			return 0; /* acknowledged already (an earlier attempt, or a reader) */
	}
	flags_with_seen(flags_of(name), fl, sizeof(fl));
	snprintf(from, sizeof(from), "%s/%s/%s", c->path, sub, name);
	snprintf(to, sizeof(to), "%s/cur/%s:2,%s", c->path, key, fl);
	if (rename(from, to) == 0)
		return 0;
	if (errno != ENOENT) {
		snprintf(err, errsz, "cannot move %s/%s to cur/: %s", sub, name, strerror(errno));
		return -1;
	}
	/* moved meanwhile by someone else: done if it is seen now, else the next attempt
	 * looks again */
	if (find_name(c, "cur", key, name, sizeof(name)) == 0 && strchr(flags_of(name), 'S'))
		return 0;
	snprintf(err, errsz, "the message moved while being acknowledged");
	return -1;
}

static void md_ack(void *conn, const struct wq__source_config *c,
		   const struct wq__intake_ack_row *rows, size_t n, int *ok,
		   char (*errs)[WQ__INTAKE_ERR])
{
	for (size_t i = 0; i < n; i++) {
		errs[i][0] = '\0';
		ok[i] = ack_one(c, rows[i].key, errs[i], sizeof(errs[i])) == 0;
	}
}

const struct wq__intake_backend wq__intake_maildir = {
	.name = "maildir", .open = md_open, .close = md_close, .list = md_list,
	.fetch = md_fetch, .ack = md_ack,
};
