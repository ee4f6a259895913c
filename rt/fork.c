/*
 * Predicting in a child of fork. GNU OpenMP's team of threads belongs to the thread that
 * started it; a child of fork has that thread's bookkeeping but none of the team's
 * threads, so the thread that forked waits for them forever at its next parallel region
 * (XGBoost and LightGBM hang there too). A thread started in the child has no team yet
 * and starts its own: in a child of fork, grove runs each host prediction on a fresh
 * thread. (LLVM's OpenMP starts afresh in a child by itself; the thread costs it time at
 * every call: docs/performance-notes.md, A thread a call after fork.)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "rt/device.h"

/* Whether this process is a child of fork of one that had loaded an artifact. */
static atomic_bool forked;

static void note_fork(void)
{
	atomic_store(&forked, true);
}

static void watch(void)
{
	pthread_atfork(NULL, NULL, note_fork);
}

void grove_watch_forks(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, watch);
}

/* The call on the fresh thread. */
static void *run(void *arg)
{
	const HostCall *c = arg;
	if (c->predict_f64)
		c->predict_f64(c->rows, c->nrows, c->out, c->flags, c->workspace);
	else if (c->predict_v1)
		c->predict_v1(c->rows, c->nrows, c->out, c->flags);
	else
		c->predict(c->rows, c->nrows, c->out, c->flags, c->workspace);
	return NULL;
}

GroveStatus grove_run_host(const HostCall *call, GroveError *err)
{
	pthread_t thread;
	int rc;
	if (!atomic_load(&forked)) {
		run((void *)call);
		return GROVE_OK;
	}
	if ((rc = pthread_create(&thread, NULL, run, (void *)call)) != 0)
		return grove_fail(err, GROVE_ERROR_MEMORY, "cannot start a thread to predict in this child of fork: %s",
		                  strerror(rc));
	pthread_join(thread, NULL);
	return GROVE_OK;
}
