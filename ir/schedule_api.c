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

bool hir_schedule_name_size(HSchedule *s, const char *name, int64_t value, Error *e)
{
	size_t n = strlen(name);
	bool ok = n > 0 && n < HIR_MAX_NAME && !(name[0] >= '0' && name[0] <= '9');
	for (size_t i = 0; ok && i < n; i++)
		ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_';
	if (!ok)
		return error_set(e, "'%s' is not a size's name (letters, digits and '_', not first a digit, at most %d)", name, HIR_MAX_NAME - 1);
	if (!strcmp(name, "N_t"))
		return error_set(e, "N_t is the number of trees: name the size otherwise");
	for (uint32_t i = 0; i < s->num_size_names; i++)
		if (!strcmp(s->size_names[i].name, name))
			return error_set(e, "the size '%s' is named twice", name);
	if (s->num_size_names == HIR_MAX_SIZE_NAMES)
		return error_set(e, "'%s': at most %d sizes can be named", name, HIR_MAX_SIZE_NAMES);
	if (value < 0 || value > INT32_MAX)
		return error_set(e, "the size '%s' is %lld (expected a number from 0 to %d)", name, (long long)value, INT32_MAX);
	snprintf(s->size_names[s->num_size_names].name, HIR_MAX_NAME, "%s", name);
	s->size_names[s->num_size_names++].value = value;
	return true;
}
