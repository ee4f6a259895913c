/*
 * The schedule's C API (ir/schedule.h): each directive built from its arguments, as
 * schedule_parse.c builds it from text, and applied by hir_schedule_apply.
 */
#include "ir/schedule.h"

#include <stdio.h>
#include <string.h>

/* Apply a directive built from its parts. */
static bool apply_parts(HSchedule *s, HDirectiveKind kind, const char *const *names, uint32_t n, int64_t value, Error *e)
{
	HDirective d = {.kind = (uint8_t)kind, .value = value};
	if (n > HIR_MAX_ARGS)
		return error_set(e, "%s: at most %d variables", hir_directive_name(kind), HIR_MAX_ARGS);
	for (uint32_t i = 0; i < n; i++) {
		if (strlen(names[i]) + 1 > HIR_MAX_NAME)
			return error_set(e, "%s: '%s' is longer than %d characters", hir_directive_name(kind), names[i], HIR_MAX_NAME - 2);
		snprintf(d.names[i], HIR_MAX_NAME, "%s", names[i]);
	}
	d.num_names = (uint8_t)n;
	return hir_schedule_apply(s, &d, e);
}

bool hir_schedule_tile(HSchedule *s, const char *var, const char *outer, const char *inner, uint32_t size, Error *e)
{
	const char *names[] = {var, outer, inner};
	return apply_parts(s, HDIR_TILE, names, 3, size, e);
}

bool hir_schedule_split(HSchedule *s, const char *var, const char *first, const char *second, uint32_t at, Error *e)
{
	const char *names[] = {var, first, second};
	return apply_parts(s, HDIR_SPLIT, names, 3, at, e);
}

bool hir_schedule_split_size(HSchedule *s, const char *var, const char *small, const char *large, uint32_t size, Error *e)
{
	const char *names[] = {var, small, large};
	return apply_parts(s, HDIR_SPLIT_SIZE, names, 3, size, e);
}

bool hir_schedule_reorder(HSchedule *s, const char *const *vars, uint32_t num_vars, Error *e)
{
	return apply_parts(s, HDIR_REORDER, vars, num_vars, 0, e);
}

bool hir_schedule_mark(HSchedule *s, HDirectiveKind kind, const char *var, int64_t value, Error *e)
{
	return apply_parts(s, kind, &var, 1, value, e);
}

bool hir_schedule_gpu_dimension(HSchedule *s, const char *var, const char *dim, Error *e)
{
	const char *names[] = {var, dim};
	return apply_parts(s, HDIR_GPU_DIMENSION, names, 2, 0, e);
}

bool hir_schedule_representation(HSchedule *s, const char *name, Error *e)
{
	return apply_parts(s, HDIR_REPRESENTATION, &name, 1, 0, e);
}

bool hir_schedule_sort_trees(HSchedule *s, const char *order, Error *e)
{
	return apply_parts(s, HDIR_SORT_TREES, &order, 1, 0, e);
}

bool hir_schedule_tile_trees(HSchedule *s, const char *tiling, uint32_t size, Error *e)
{
	return apply_parts(s, HDIR_TILE_TREES, &tiling, 1, size, e);
}
