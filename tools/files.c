/*
 * The command line's files: temporary ones removed whatever ends grove (a failure, or
 * SIGINT, SIGTERM or SIGHUP), and outputs checked against the inputs and each other.
 *
 * Signals are taken by a thread of their own (cli_cleanup_start blocks them in every
 * other thread) so that the cleanup runs as ordinary code: it takes locks and reads
 * directories, which a signal handler could not do safely.
 */
#include "tools/cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary directories in use (predict's and tune's): removed with their files by cli_cleanup. */
static pthread_mutex_t directories_lock = PTHREAD_MUTEX_INITIALIZER;
static char *directories[4];

/* Remove the files in dir (it holds no directories), then dir. */
static void remove_directory(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *entry;
	if (d) {
		while ((entry = readdir(d)))
			if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
				unlinkat(dirfd(d), entry->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

void cli_cleanup(void)
{
	pending_files_unlink();
	pthread_mutex_lock(&directories_lock);
	for (size_t i = 0; i < COUNT_OF(directories); i++)
		if (directories[i])
			remove_directory(directories[i]);
	pthread_mutex_unlock(&directories_lock);
}

char *cli_temporary_directory(const char *name)
{
	const char *root = temporary_root();
	size_t len = strlen(root) + strlen(name) + 9;
	char *template;
	Error e;
	/* Paths in it are built in PATH_MAX buffers (tools/tune.c): a root that leaves no room is refused, not cut. */
	if (strlen(root) > PATH_MAX - 64)
		fail("cannot create a temporary directory in %s%s: its name is too long (%zu bytes; at most %d)", root,
		     getenv("TMPDIR") && *getenv("TMPDIR") ? ", which $TMPDIR names" : "", strlen(root), PATH_MAX - 64);
	if (!temporary_root_check("a temporary directory", &e))
		fail("%s", e.message);
	template = xmalloc(len);
	snprintf(template, len, "%s/%s-XXXXXX", root, name);
	if (!mkdtemp(template))
		fail("%s: cannot create a temporary directory: %s", template, strerror(errno));
	pthread_mutex_lock(&directories_lock);
	for (size_t i = 0; i < COUNT_OF(directories); i++)
		if (!directories[i]) {
			directories[i] = template;
			break;
		}
	pthread_mutex_unlock(&directories_lock);
	return template;
}

void cli_temporary_directory_remove(char *dir)
{
	pthread_mutex_lock(&directories_lock);
	for (size_t i = 0; i < COUNT_OF(directories); i++)
		if (directories[i] == dir)
			directories[i] = NULL;
	pthread_mutex_unlock(&directories_lock);
	remove_directory(dir);
	free(dir);
}

/* Whether the signal thread is ending grove: a command failing meanwhile (its linker stopped) leaves that to it. */
static atomic_bool stopping;

bool cli_stopping(void)
{
	return atomic_load(&stopping);
}

/* The signal thread, waiting for one of the signals of set (its argument): stop the linkers, remove the temporary files, and
   die of the signal. */
static void *signal_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;
	while (sigwait(set, &sig) != 0)
		;
	atomic_store(&stopping, true);
	target_linkers_stop();
	cli_cleanup();
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, set, NULL);
	raise(sig);
	_exit(128 + sig);
}

void cli_cleanup_start(void)
{
	static sigset_t set; /* the signal thread's, for as long as grove runs */
	int taken[] = {SIGINT, SIGTERM, SIGHUP};
	pthread_t thread;
	sigemptyset(&set);
	for (size_t i = 0; i < COUNT_OF(taken); i++) {
		struct sigaction old;
		/* One ignored when grove started (nohup, a shell's background job) stays ignored. */
		if (sigaction(taken[i], NULL, &old) != 0 || old.sa_handler != SIG_IGN)
			sigaddset(&set, taken[i]);
	}
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 || pthread_create(&thread, NULL, signal_thread, &set) != 0)
		fail("cannot start the signal thread: %s", strerror(errno));
	pthread_detach(thread);
}

/* path's directory made absolute and its last name: a name for a file that may not exist yet (malloc'ed), or NULL. */
static char *resolved(const char *path)
{
	char dir[PATH_MAX], *slash = strrchr(path, '/'), *real, *out;
	const char *base = slash ? slash + 1 : path;
	size_t len;
	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
	else
		strcpy(dir, ".");
	if (!(real = realpath(dir, NULL)))
		return NULL;
	len = strlen(real) + strlen(base) + 2;
	out = xmalloc(len);
	snprintf(out, len, "%s/%s", real, base);
	free(real);
	return out;
}

bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	bool a_there, b_there, same;
	char *ra, *rb;
	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
		return false;
	a_there = stat(a, &sa) == 0;
	b_there = stat(b, &sb) == 0;
	if (a_there && b_there) /* two writes into /dev/null, or one read from it, lose nothing */
		return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (a_there || b_there)
		return false;
	ra = resolved(a);
	rb = resolved(b);
	same = ra && rb ? !strcmp(ra, rb) : !strcmp(a, b);
	free(ra);
	free(rb);
	return same;
}

void check_output(const char *option, const char *output, const char *const *inputs, size_t n)
{
	if (!*output)
		fail("%s '': an empty file name", option);
	for (size_t i = 0; i < n; i++)
		if (same_file(output, inputs[i]))
			fail("%s %s: the same file as the input %s, which would be lost; name another output", option, output,
			     inputs[i]);
}
