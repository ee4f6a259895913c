/* Things every part of the compiler uses: errors, checked allocation, growable arrays. */
#ifndef GROVE_IR_COMMON_H
#define GROVE_IR_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A user-facing error: bad input (model, schedule, rows) or a failed system call.
 * Functions that can fail take an Error * and return false (or NULL) after filling it.
 * Messages name the place, e.g. "model.json: trees[3].left_children[7]: index 912 out of range".
 * Internal bugs are not Errors: they assert or call die().
 */
typedef struct Error {
	char message[1024];
	/*
	 * The schedule's place a lowering's message is about, which the caller that holds the
	 * schedule puts before it (target/compile.c, place_error): 1 + the index variable
	 * (0: none) and the kind of its directive (HDirectiveKind; -1: the variable's loop).
	 * error_set clears it.
	 */
	uint32_t place;
	int32_t place_directive;
} Error;

/* Format a message into e (if e is not NULL), its place cleared; always returns false so callers can `return error_set(...)`. */
bool error_set(Error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefix e's message with "prefix: ". */
void error_prefix(Error *e, const char *prefix);

/*
 * Temporary output files (an artifact before its rename, predict's output): a new empty
 * file beside path named path.XXXXXX<suffix> (malloc'ed), or NULL with e filled. Until
 * temporary_drop, it is pending: pending_files_unlink, called when the compiler exits
 * before finishing (out of memory, a fatal error of the command, a signal), removes it,
 * and no temporary file is made after it. At most 64 are pending at a time.
 */
char *temporary_beside(const char *path, const char *suffix, Error *e);
/*
 * Where temporary files and directories go that have no place beside an output: $TMPDIR
 * where it is set and not empty (as mktemp(1) and cc take it), else /tmp.
 */
const char *temporary_root(void);
/*
 * Whether temporary_root() is a directory grove may create what (for messages: "a
 * temporary directory") in; false with e naming it, and $TMPDIR when it comes from there.
 */
bool temporary_root_check(const char *what, Error *e);
/* Done with temporary file name: keep it (renamed away) or remove it; free the name. */
void temporary_drop(char *name, bool keep);
void pending_files_unlink(void);

/* Report an internal compiler bug and abort. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Allocation that exits (status 1, "grove: out of memory") on exhaustion; compiler only
 * (the runtime library never uses these).
 */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/*
 * The names of a table through its accessor (name(i) for i = 0, 1, ... until NULL), joined
 * into buf (n bytes, truncated to fit): sep between them, or last (where not NULL) before
 * the last one. Returns buf. Messages and help texts list a table's entries this way.
 */
const char *names_join(char *buf, size_t n, const char *(*name)(size_t i), const char *sep, const char *last);

/* Grow *array (of element size elem) so that it holds at least need elements; *cap is its capacity. */
void grow_array(void **array, size_t elem, size_t need, size_t *cap);
#define GROW(array, need, cap) grow_array((void **)&(array), sizeof *(array), (need), &(cap))

/* A deep copy of n strings (NULL for NULL). */
char **strings_copy(char *const *s, uint32_t n);
/* Free n strings and their array (NULL is allowed). */
void strings_free(char **s, uint32_t n);

/*
 * Columns whose values a model names: the categories of the pandas categorical columns it
 * was trained on (LightGBM's pandas_categorical, XGBoost's categories). Value k of
 * column f's list is category k, the number the model's splits test.
 */
typedef struct CategoryValues {
	uint32_t *counts;    /* values of each column (0: a column of numbers), or NULL: no column has values */
	char **values;       /* all of them, column by column */
	bool unseen_missing; /* a value in no list is missing (LightGBM's rule), else refused (XGBoost's) */
} CategoryValues;

/* How many values c holds over num_features columns. */
uint64_t category_values_total(const CategoryValues *c, uint32_t num_features);
/* A deep copy of c. */
CategoryValues category_values_copy(const CategoryValues *c, uint32_t num_features);
void category_values_free(CategoryValues *c, uint32_t num_features);

/*
 * Phase timing (grove compile --time): one line per phase on standard error with its
 * wall time, the processor time the process spent in it (the linker's, a child process,
 * not counted) and the process's peak memory so far. A NULL PhaseTimer * reports nothing.
 */
typedef struct PhaseTimer {
	double start, last; /* seconds on a monotonic clock: when timing began, when the last phase ended */
	double cpu;         /* the process's processor seconds when the last phase ended */
} PhaseTimer;

/* Start timing phases. */
void phase_timer_start(PhaseTimer *t);
/* Report the phase called name, which ends now (nothing if t is NULL). */
void phase_end(PhaseTimer *t, const char *name);

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif
