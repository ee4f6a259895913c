/*
 * Running the linker (cc, a cross compiler, ld.lld) as a child process, and stopping
 * the ones running when the compiler is interrupted (target_linkers_stop): a linker left
 * running would write its output after the compiler had removed its temporary files.
 */
#include "target/emit.h"
#include "target/target.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The linkers running now, one per compile in progress (tune and libgrovec compile on several threads). */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t running[64];

/* Note pid as running (add) or done (remove); running_lock is held. */
static void running_note(pid_t pid, bool add)
{
	for (size_t i = 0; i < COUNT_OF(running); i++)
		if (add ? running[i] == 0 : running[i] == pid) {
			running[i] = add ? pid : 0;
			break;
		}
}

/* The linker's attributes: the signals that stop a compile unblocked (grove blocks them for its signal thread). */
static void linker_attributes(posix_spawnattr_t *attr)
{
	sigset_t mask;
	posix_spawnattr_init(attr);
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	sigdelset(&mask, SIGINT);
	sigdelset(&mask, SIGTERM);
	sigdelset(&mask, SIGHUP);
	posix_spawnattr_setsigmask(attr, &mask);
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK);
}

char *target_path_argument(const char *path)
{
	size_t len = strlen(path) + 3;
	char *argument = xmalloc(len);
	snprintf(argument, len, "%s%s", path[0] == '-' ? "./" : "", path);
	return argument;
}

bool target_run_linker(char *const argv[], const char *what, int *spawn_error, Error *e)
{
	posix_spawnattr_t attr;
	pid_t pid;
	int status = 0, rc;
	bool ok = true;

	linker_attributes(&attr);
	pthread_mutex_lock(&running_lock); /* so that target_linkers_stop sees every linker started */
	rc = posix_spawnp(&pid, argv[0], NULL, &attr, argv, environ);
	if (rc == 0)
		running_note(pid, true);
	pthread_mutex_unlock(&running_lock);
	posix_spawnattr_destroy(&attr);
	*spawn_error = rc;
	if (rc != 0)
		return false;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			ok = error_set(e, "waiting for %s: %s", argv[0], strerror(errno));
			break;
		}
	pthread_mutex_lock(&running_lock);
	running_note(pid, false);
	pthread_mutex_unlock(&running_lock);
	if (ok && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		ok = error_set(e, "%s failed (status %d) linking %s", argv[0], status, what);
	return ok;
}

void target_linkers_stop(void)
{
	struct timespec pause = {0, 10 * 1000 * 1000};
	bool any = true;
	pthread_mutex_lock(&running_lock);
	for (size_t i = 0; i < COUNT_OF(running); i++)
		if (running[i])
			kill(running[i], SIGTERM);
	pthread_mutex_unlock(&running_lock);
	/* Until their waiters have seen them exit, or 5 seconds. */
	for (int tries = 0; any && tries < 500; tries++) {
		any = false;
		pthread_mutex_lock(&running_lock);
		for (size_t i = 0; i < COUNT_OF(running); i++)
			any |= running[i] != 0;
		pthread_mutex_unlock(&running_lock);
		if (any)
			nanosleep(&pause, NULL);
	}
}
