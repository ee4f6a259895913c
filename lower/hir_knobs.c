/*
 * The knobs of the schedules grove writes itself (HScheduleKnobs), described once: the
 * heuristic sets them, `grove tune` turns them and logs them by these names, and the
 * cost model reads them as features (lower/cost.c).
 */
#include "lower/lower.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define KNOB(field, kind) {#field, offsetof(HScheduleKnobs, field), sizeof(((HScheduleKnobs *)0)->field), kind}

const HKnob hir_knobs[HKNOB_COUNT] = {
	[HKNOB_ROWS] = KNOB(rows, HKNOB_NUMBER),
	[HKNOB_TREES] = KNOB(trees, HKNOB_NUMBER),
	[HKNOB_TREE_TILE] = KNOB(tree_tile, HKNOB_NUMBER),
	[HKNOB_ROW_TILE] = KNOB(row_tile, HKNOB_NUMBER),
	[HKNOB_PARALLEL] = KNOB(parallel, HKNOB_PARALLEL_NAME),
	[HKNOB_UNROLL] = KNOB(unroll, HKNOB_NUMBER),
	[HKNOB_PEEL] = KNOB(peel, HKNOB_NUMBER),
	[HKNOB_REPRESENTATION] = KNOB(representation, HKNOB_REPRESENTATION_NAME),
	[HKNOB_DEPTH_GROUPS] = KNOB(depth_groups, HKNOB_NUMBER),
	[HKNOB_TILE_TREES] = KNOB(tile_trees, HKNOB_NUMBER),
	[HKNOB_CACHE_ROWS] = KNOB(cache_rows, HKNOB_NUMBER),
	[HKNOB_CACHE_TREES] = KNOB(cache_trees, HKNOB_NUMBER),
	[HKNOB_FEW_TREES] = KNOB(few_trees, HKNOB_NUMBER),
	[HKNOB_FEW_ROWS] = KNOB(few_rows, HKNOB_NUMBER),
};

uint32_t hir_knob_get(const HScheduleKnobs *k, HKnobId i)
{
	const unsigned char *at = (const unsigned char *)k + hir_knobs[i].offset;
	return hir_knobs[i].size == 1 ? *at : *(const uint32_t *)(const void *)at;
}

void hir_knob_set(HScheduleKnobs *k, HKnobId i, uint32_t v)
{
	unsigned char *at = (unsigned char *)k + hir_knobs[i].offset;
	if (hir_knobs[i].size == 1)
		*at = (unsigned char)v;
	else
		*(uint32_t *)(void *)at = v;
}

void hir_knobs_normal(HScheduleKnobs *k)
{
	if (!k->tree_tile)
		k->row_tile = 0;
	if (!k->few_trees)
		k->few_rows = 0;
	if (k->depth_groups < 2)
		k->depth_groups = 0;
}

bool hir_knobs_same(const HScheduleKnobs *a, const HScheduleKnobs *b)
{
	HScheduleKnobs x = *a, y = *b;
	hir_knobs_normal(&x);
	hir_knobs_normal(&y);
	for (int i = 0; i < HKNOB_COUNT; i++)
		if (hir_knob_get(&x, i) != hir_knob_get(&y, i))
			return false;
	return true;
}

int hir_knob_value(const HScheduleKnobs *k, HKnobId i, char *buf, size_t size)
{
	uint32_t v = hir_knob_get(k, i);
	switch (hir_knobs[i].kind) {
	case HKNOB_PARALLEL_NAME:
		return snprintf(buf, size, "%s", v < HPARALLEL_COUNT ? hir_parallel_names[v] : "?");
	case HKNOB_REPRESENTATION_NAME:
		return snprintf(buf, size, "%s", v ? lower_representation_name(v - 1u) : "auto");
	default:
		return snprintf(buf, size, "%u", v);
	}
}

int hir_knobs_describe(const HScheduleKnobs *k, char *buf, size_t size)
{
	HScheduleKnobs n = *k;
	size_t at = 0;
	hir_knobs_normal(&n);
	if (size)
		buf[0] = 0;
	for (int i = 0; i < HKNOB_COUNT; i++) {
		char value[32];
		int w;
		hir_knob_value(&n, i, value, sizeof value);
		w = snprintf(buf + (at < size ? at : size), at < size ? size - at : 0, "%s%s %s", i ? " " : "",
		             hir_knobs[i].name, value);
		at += w > 0 ? (size_t)w : 0;
	}
	return (int)at;
}

size_t lower_representation_index(const char *name)
{
	size_t i = 0;
	while (lower_representation_name(i) && strcmp(lower_representation_name(i), name))
		i++;
	return i;
}
