/*
 * sqlite_vfs.c — SQLite's unix VFS with one directory sync per WAL file instead of one
 * per process (issue 11, wave 5).
 *
 * SQLite's unix VFS syncs the directory on the first sync of every WAL file opened with
 * SQLITE_OPEN_CREATE, and it opens the WAL with that flag in every connection: so every
 * `wakeq enqueue` paid two fsyncs, its commit and the directory's. The directory sync
 * makes the WAL's directory entry durable; it is needed once per WAL file (per inode),
 * not once per process.
 *
 * The mark: the extended attribute WQ__WAL_SYNCED on the WAL file, set by
 * wq__sqlite_wal_mark() after a commit in synchronous=FULL of a connection that opened
 * the WAL with SQLITE_OPEN_CREATE (the mark was absent): SQLite synced the WAL and then
 * the directory on that connection's first WAL sync, which precedes the commit's wal
 * hook. A connection whose WAL has the mark opens it without SQLITE_OPEN_CREATE, and
 * SQLite then skips the directory sync. Invariants:
 *   - the mark names the file AND the directory it was synced in: its value is the
 *     device and inode numbers of both, and a mark whose numbers are not the file's
 *     and its directory's now is no mark. A WAL deleted (the last connection's
 *     checkpoint on close) and created again has no mark until its own directory
 *     sync; a WAL copied with its attributes (cp -a, rsync -X, tar --xattrs) or moved
 *     to another directory carries a mark that names another file or directory, so
 *     its new directory entry is synced as SQLite would;
 *   - the WAL is never deleted while a connection has it open (WAL-mode connections
 *     hold a shared lock on the database, the deleter needs an exclusive one), so the
 *     file opened is the file whose mark was read;
 *   - a mark lost in a crash, or a file system without user xattrs, only costs the
 *     directory sync again (SQLite's own behaviour).
 */
#include "sql.h"

#include <sqlite3.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#define WQ__WAL_SYNCED "user.wakeq.wal-dirsynced"
#define WQ__VFS_NAME "wakeq-unix"

static sqlite3_vfs vfs;         /* the unix VFS, xOpen replaced */
static sqlite3_vfs *base;       /* the default VFS (not owned) */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered;

#define MARK_MAX 96 /* four numbers of at most 20 digits, three colons, NUL */

/* The mark path should carry: the device and inode numbers of the file and of its
 * directory, as text in mark (MARK_MAX bytes); 0, or -1 when they cannot be read. */
static int mark_of(const char *path, char *mark)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat f, d;
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (n >= sizeof dir)
		return -1;
	if (slash) {
		memcpy(dir, path, n);
		dir[n ? n : 1] = '\0';
		if (n == 0)
			dir[0] = '/';
	} else {
		strcpy(dir, ".");
	}
	if (stat(path, &f) != 0 || stat(dir, &d) != 0)
		return -1;
	snprintf(mark, MARK_MAX, "%" PRIuMAX ":%" PRIuMAX ":%" PRIuMAX ":%" PRIuMAX,
		 (uintmax_t)f.st_dev, (uintmax_t)f.st_ino, (uintmax_t)d.st_dev,
		 (uintmax_t)d.st_ino);
	return 0;
}

int wq__sqlite_wal_has_mark(const char *path)
{
	char want[MARK_MAX], v[MARK_MAX];
	ssize_t n;

	if (mark_of(path, want) != 0)
		return 0;
	n = getxattr(path, WQ__WAL_SYNCED, v, sizeof(v) - 1);
	if (n <= 0)
		return 0;
	v[n] = '\0';
	return strcmp(v, want) == 0;
}

static int vfs_open(sqlite3_vfs *self, sqlite3_filename name, sqlite3_file *file, int flags,
		    int *out_flags)
{
	int rc;

	(void)self;
	if (!(flags & SQLITE_OPEN_WAL) || !(flags & SQLITE_OPEN_CREATE) || !name ||
	    !wq__sqlite_wal_has_mark(name))
		return base->xOpen(base, name, file, flags, out_flags);
	rc = base->xOpen(base, name, file, flags & ~SQLITE_OPEN_CREATE, out_flags);
	if (rc != SQLITE_OK) /* gone meanwhile (cannot be, see above): SQLite's own way */
		rc = base->xOpen(base, name, file, flags, out_flags);
	return rc;
}

static void vfs_register(void)
{
	base = sqlite3_vfs_find(NULL);
	if (!base || base->iVersion < 1 || strncmp(base->zName, "unix", 4) != 0)
		return; /* not the unix VFS: its open flags may mean something else */
	vfs = *base;
	vfs.zName = WQ__VFS_NAME;
	vfs.pNext = NULL;
	vfs.xOpen = vfs_open;
	registered = sqlite3_vfs_register(&vfs, 0) == SQLITE_OK;
}

const char *wq__sqlite_vfs(void)
{
	pthread_once(&once, vfs_register);
	return registered ? WQ__VFS_NAME : NULL;
}

void wq__sqlite_wal_mark(const char *wal_path)
{
	char mark[MARK_MAX];

	if (wal_path && !wq__sqlite_wal_has_mark(wal_path) && mark_of(wal_path, mark) == 0)
		(void)setxattr(wal_path, WQ__WAL_SYNCED, mark, strlen(mark), 0); /* unsupported: no mark */
}
