/*
 * A program that loads libwakeq.so with dlopen, enqueues from a thread of its own,
 * unloads the library with dlclose while that thread lives, then lets the thread exit.
 * random.c's per-thread pool of random bytes is freed by a pthread key destructor in the
 * library: were the library unmapped by the dlclose, the thread's exit would call into
 * unmapped code (SIGSEGV). Exit 0: the thread exited; 2: setup failed.
 *
 * Usage: dlclose_thread LIBWAKEQ.so DB-PATH
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wakeq.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the thread enqueued; 2: the library is closed */
static void *lib;
static const char *db_path;

static void set_stage(int s)
{
	pthread_mutex_lock(&mu);
	stage = s;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void wait_stage(int s)
{
	pthread_mutex_lock(&mu);
	while (stage < s)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

typedef wq_rc (*open_fn)(const char *, unsigned, wq_db **, wq_error *);
typedef wq_rc (*enqueue_fn)(wq_db *, const wq_enqueue_opts *, wq_enqueued *, wq_error *);
typedef void (*close_fn)(wq_db *);

static void *user(void *arg)
{
	open_fn db_open = (open_fn)dlsym(lib, "wq_db_open");
	enqueue_fn enqueue = (enqueue_fn)dlsym(lib, "wq_enqueue");
	close_fn db_close = (close_fn)dlsym(lib, "wq_db_close");
	wq_enqueue_opts o;
	wq_enqueued out;
	wq_error e;
	wq_db *db;

	(void)arg;
	if (!db_open || !enqueue || !db_close) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		exit(2);
	}
	if (db_open(db_path, WQ_OPEN_MIGRATE, &db, &e) != WQ_OK) {
		fprintf(stderr, "wq_db_open: %s\n", e.message);
		exit(2);
	}
	memset(&o, 0, sizeof(o));
	o.kind = "k"; /* no key: a generated operation id, drawn from this thread's pool */
	if (enqueue(db, &o, &out, &e) != WQ_OK) {
		fprintf(stderr, "wq_enqueue: %s\n", e.message);
		exit(2);
	}
	db_close(db);
	set_stage(1);
	wait_stage(2);
	return NULL; /* the thread's key destructors run now */
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3) {
		fprintf(stderr, "usage: dlclose_thread LIBWAKEQ.so DB-PATH\n");
		return 2;
	}
	db_path = argv[2];
	remove(db_path);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	if (pthread_create(&t, NULL, user, NULL) != 0)
		return 2;
	wait_stage(1);
	dlclose(lib);
	set_stage(2);
	pthread_join(t, NULL);
	remove(db_path);
	printf("the thread exited after dlclose\n");
	return 0;
}
