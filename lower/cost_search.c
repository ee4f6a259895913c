/*
 * The space of schedules grove writes itself as its searches turn it (lower/cost.h):
 * grove tune's, which times candidates, and the cost model's, which predicts them.
 */
#include "lower/cost.h"

#include <stdlib.h>

/*
 * Code is searched for forests of at most this many splits (unless named): LLVM's time
 * grows with the splits, and past some thousands, walks over memory are faster (code's
 * branches on random rows mispredict).
 */
#define COST_CODE_SPLITS (4 * HIR_CODE_SPLITS)

void cost_space(const CostForest *c, const char *representation, size_t batch, CostSpace *s)
{
	HScheduleKnobs tiled;
	*s = (CostSpace){.forest = c->forest, .representation = representation, .batch = batch, .depth = c->deepest,
	                 .splits = c->splits, .oblivious = c->oblivious && c->walks_even,
	                 .depths_differ = c->shallowest != c->deepest};
	hir_choose_knobs(c->forest, HIR_TILE_AUTO, 1, 1, "array", MTOPS_NONE, &tiled); /* (a layout of records: the tile L2 holds) */
	s->tree_tile = tiled.tree_tile;
}

bool cost_turns(const CostSpace *s, int i, const HScheduleKnobs *k)
{
	return !(s->fixed >> i & 1) && !(i == 4 && !k->tree_tile) && !(i == 1 && s->forest->num_trees < 2);
}

void cost_normal(const HForest *f, HScheduleKnobs *k)
{
	k->cache_rows = k->cache_rows && hir_rows_cache_fits(f, k);
	k->cache_trees = k->cache_trees && hir_trees_cache_applies(f, k);
	hir_knobs_normal(k);
}

uint32_t cost_values(const CostSpace *t, const HScheduleKnobs *heuristic, int i, uint32_t *v)
{
	uint32_t n = 0, trees = t->forest->num_trees;
	switch (i) {
	case 0: /* rows */
	case 1: /* trees */
		for (uint32_t x = 1; x <= MIR_WALK_LANES; x *= 2)
			v[n++] = x;
		return n;
	case 2: /* parallel */
		for (uint32_t x = 0; x < HPARALLEL_COUNT; x++)
			v[n++] = x;
		return n;
	case 3: { /* tree_tile: none, or around the L2-sized tile */
		uint32_t base = t->tree_tile ? t->tree_tile : heuristic->tree_tile ? heuristic->tree_tile : trees / 4;
		v[n++] = 0;
		for (uint32_t x = base / 4 > 2 ? base / 4 : 2; x <= base * 4 && x < trees && n < 8; x *= 2)
			v[n++] = x;
		return n;
	}
	case 4: /* row_tile */
		v[n++] = 16, v[n++] = 64, v[n++] = 256;
		return n;
	case 5: /* unroll */
		v[n++] = 0, v[n++] = 1;
		return n;
	case 7: /* representation: each one named (not searched where --representation names one); tiles by knob 9 */
		for (uint32_t r = 0; lower_representation_name(r) && !t->representation && n < 8; r++)
			if (!(lower_representation_traits(r) & (LREP_TILES | LREP_NAMED)) &&
			    !(lower_representation_traits(r) & LREP_CODE && t->splits > COST_CODE_SPLITS) &&
			    !(lower_representation_traits(r) & LREP_LEVELS && !t->oblivious))
				v[n++] = r + 1;
		return n;
	case 9: /* tiles: none, or complete subtrees of 2 and 3 levels (4 and 8 float lanes), in each tiled layout (rep << 8) */
		v[n++] = 0;
		if (t->depth >= 2 && !t->representation)
			for (uint32_t r = 0; lower_representation_name(r); r++)
				if (lower_representation_traits(r) & LREP_TILES)
					v[n++] = 3 | (r + 1) << 8, v[n++] = 7 | (r + 1) << 8;
		if (t->depth >= 2 && lower_representation_named_traits(t->representation) & LREP_TILES)
			v[n++] = 3, v[n++] = 7;
		return n;
	case 10: /* rows cached: off, on */
	case 12: /* trees prefetched: off, on */
		v[n++] = 0, v[n++] = 1;
		return n;
	case 11: /* batches of lone rows apart, this many trees side by side: only where the batch is one of them */
		if (heuristic->few_trees && t->batch < heuristic->few_rows)
			v[n++] = 0, v[n++] = 6, v[n++] = 8, v[n++] = 9, v[n++] = 10, v[n++] = 12;
		return n;
	case 8: /* depth groups: none, 2, 4 (where the trees' depths differ) */
		v[n++] = 0;
		if (t->depths_differ)
			v[n++] = 2, v[n++] = HIR_MAX_DEPTH_GROUPS;
		return n;
	default: { /* peel: none, 2, 4, 6, and around the heuristic's where deeper (trees whose walks loop) */
		uint32_t p = heuristic->peel, around[] = {p * 3 / 4, p, p * 5 / 4};
		for (uint32_t x = 0; x <= 6 && x < t->depth; x += 2)
			v[n++] = x;
		for (size_t j = 0; j < COUNT_OF(around); j++)
			if (around[j] > 6 && around[j] < t->depth && around[j] <= HIR_MAX_WALK_STEPS)
				v[n++] = around[j];
		return n;
	}
	}
}

void cost_set(HScheduleKnobs *k, int i, uint32_t v)
{
	switch (i) {
	case 0: k->rows = v; break;
	case 1: k->trees = v; break;
	case 2: k->parallel = (uint8_t)v; break;
	case 3: k->tree_tile = v; break;
	case 4: k->row_tile = v; break;
	case 5: k->unroll = (uint8_t)v; break;
	case 7: k->representation = (uint8_t)v; break;
	case 8: k->depth_groups = (uint8_t)v; break;
	case 10: k->cache_rows = (uint8_t)v; break;
	case 11: k->few_trees = (uint8_t)v; break;
	case 12: k->cache_trees = (uint8_t)v; break;
	case 9:
		k->tile_trees = (uint8_t)v;
		if (v >> 8 || (k->representation && lower_representation_traits(k->representation - 1u) & LREP_TILES))
			k->representation = (uint8_t)(v >> 8); /* the tiled layout named, none without tiles */
		break;
	default: k->peel = (uint8_t)v; break;
	}
	/* Code ignores tiles and tiles replace any other representation (hir_apply_knobs): one candidate for each pair. */
	if (k->tile_trees && k->representation && !(lower_representation_traits(k->representation - 1u) & LREP_TILES)) {
		if (lower_representation_traits(k->representation - 1u) & LREP_CODE)
			k->tile_trees = 0;
		else
			k->representation = 0;
	}
	if (k->representation && lower_representation_traits(k->representation - 1u) & LREP_BLOCKS)
		k->rows = k->trees = 1; /* hir_apply_knobs chooses them: one candidate, not one per value */
	if (k->representation && lower_representation_traits(k->representation - 1u) & LREP_CODE) {
		k->trees = 1; /* code walks no trees side by side, and rows one at a time or in vectors of HIR_CODE_LANES */
		k->rows = k->rows > 1 ? HIR_CODE_LANES : 1;
	}
	if (k->representation && lower_representation_traits(k->representation - 1u) & LREP_LEVELS)
		k->unroll = 1, k->peel = 0; /* a split per level: walks unrolled to the depth */
}

/* The mean over the machines of the predicted relative log2 time of the n knobs of k into p. */
static void predict_mean(const CostForest *c, const CostMachine *m, uint32_t machines, const HScheduleKnobs *k,
                         uint32_t n, float *p)
{
	size_t rows = (size_t)n * machines;
	float *x = xmalloc(rows * COST_FEATURES * sizeof *x), *y = xmalloc(rows * sizeof *y);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < machines; j++)
			cost_features(c, &m[j], &k[i], x + ((size_t)i * machines + j) * COST_FEATURES);
	if (!cost_predict(x, rows, y))
		die("cost_descend: this grove has no cost model");
	for (uint32_t i = 0; i < n; i++) {
		double sum = 0;
		for (uint32_t j = 0; j < machines; j++)
			sum += y[(size_t)i * machines + j];
		p[i] = (float)(sum / machines);
	}
	free(x);
	free(y);
}

float cost_descend(const CostSpace *s, const CostForest *c, const CostMachine *m, uint32_t n,
                   const HScheduleKnobs *heuristic, HScheduleKnobs *k, CostVisit *visit, void *context)
{
	float best;
	cost_normal(s->forest, k);
	predict_mean(c, m, n, k, 1, &best);
	if (visit)
		visit(context, k, best);
	for (bool improved = true; improved;) {
		improved = false;
		for (int i = 0; i < COST_DIMENSIONS; i++) {
			HScheduleKnobs next[8], start = *k;
			uint32_t values[8], count = cost_values(s, heuristic, i, values);
			float p[8];
			if (!cost_turns(s, i, &start) || !count)
				continue;
			for (uint32_t j = 0; j < count; j++) {
				next[j] = start;
				cost_set(&next[j], i, values[j]);
				cost_normal(s->forest, &next[j]);
			}
			predict_mean(c, m, n, next, count, p);
			for (uint32_t j = 0; j < count; j++) {
				if (visit)
					visit(context, &next[j], p[j]);
				if (p[j] < best - 0.01f) { /* 0.7% faster: not a tie */
					best = p[j];
					*k = next[j];
					improved = true;
				}
			}
		}
	}
	return best;
}

/*
 * The batch sizes the learned schedule is chosen for, its predictions averaged: grove
 * compile does not know the batches an artifact will meet, so the schedule is good on
 * lone rows, small and large batches alike.
 */
static const size_t default_batches[] = {1, 64, 512, 4096};
/*
 * The model's choice replaces the heuristic's where it predicts it a quarter faster:
 * log2(1.25). On models held out of its training, choices it predicted to gain less
 * were no faster, measured; the heuristic stays unless the model is sure
 * (docs/performance-notes.md, The learned model's margin).
 */
#define COST_MARGIN 0.3219f

bool cost_improve_knobs(const HForest *f, const char *named, HScheduleKnobs *k)
{
	CostSpace s;
	CostForest c;
	CostMachine m[COUNT_OF(default_batches)];
	HScheduleKnobs best = *k;
	float heuristic, predicted;
	if (!cost_model_trained() || !f->num_trees)
		return false;
	cost_forest(f, &c);
	cost_space(&c, named, default_batches[0], &s);
	s.fixed = 1u << COST_PARALLEL_DIMENSION | 1u << COST_REPRESENTATION_DIMENSION | 1u << COST_TILES_DIMENSION;
	for (size_t i = 0; i < COUNT_OF(default_batches); i++)
		cost_machine_host(&m[i], default_batches[i], 1);
	cost_normal(f, &best);
	predict_mean(&c, m, COUNT_OF(m), &best, 1, &heuristic);
	predicted = cost_descend(&s, &c, m, COUNT_OF(m), k, &best, NULL, NULL);
	if (predicted > heuristic - COST_MARGIN)
		return false;
	*k = best;
	return true;
}

bool cost_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, const char *named, MTops tops,
                          bool *learned, Error *e)
{
	HScheduleKnobs k;
	Error why;
	hir_choose_knobs(f, tree_tile, rows, trees, named, tops, &k);
	if (cost_improve_knobs(f, named, &k) && hir_apply_knobs(f, &k, &why))
		return *learned = true;
	return hir_choose_schedule(f, tree_tile, rows, trees, named, tops, e);
}
