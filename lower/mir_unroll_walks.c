/*
 * MIR pass: walk unrolling. A walk takes its first steps in straight-line code, without
 * leaf tests, then loops until it meets a leaf; when the straight steps reach the
 * deepest leaf of every tree the walk can meet, no loop follows (exact).
 *
 * How many steps, per walk, follows the innermost loop around it and the trees that
 * loop's walks reach (mir_loop_trees):
 *  - always at least as many steps as no leaf can end (the shallowest leaf's depth),
 *    which is the whole walk where all leaves sit at one depth (as after hir_pad);
 *  - peelWalk(v, n): n steps if that is more; those past the shallowest leaf may start
 *    on a leaf and stay there (peel_safe counts the ones before);
 *  - unrollWalk(v, d): d steps if that is more, which hir_pad_unrolled_walks made
 *    leaf-free by padding those trees (were they not padded, the steps past the
 *    shallowest leaf stay on leaves as with peelWalk).
 * Loops are found by walking the MIR tree, whatever the shape of the nest.
 */
#include "lower/lower.h"

/* The loops around the list being visited, outermost first. */
typedef struct Enclosing {
	int32_t vars[HIR_MAX_VARS];
	uint32_t depth;
} Enclosing;

/* Set walk's steps from the directive on var (HIR_NONE: no loop) and the depths of var's trees. */
static void unroll_walk(const MModule *m, MInst *walk, int32_t var)
{
	const HSchedule *s = &m->forest->schedule;
	uint32_t first = 0, end = m->forest->num_trees, min, max, steps;
	const HIndexVar *v = var != HIR_NONE ? &s->vars[var] : NULL;

	if (v)
		mir_loop_trees(m, var, &first, &end);
	hir_trees_leaf_depth_range(m->forest, first, end, &min, &max);
	steps = v && v->peel_walk ? v->peel_walk : v && v->unroll_walk ? v->unroll_walk : 0;
	steps = steps > min ? steps : min; /* steps no leaf can end cost nothing to take straight */
	steps = steps < max ? steps : max; /* past the deepest leaf a step changes nothing */
	walk->peel = (uint16_t)steps;
	walk->peel_safe = (uint16_t)(steps < min ? steps : min);
	walk->exact = steps == max;
}

static void visit(MModule *m, uint32_t first, Enclosing *loops)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		MInst *inst = &m->insts[id];
		if (inst->op == MOP_WALK)
			unroll_walk(m, inst, loops->depth ? loops->vars[loops->depth - 1] : HIR_NONE);
		if (inst->op != MOP_FOR)
			continue;
		if (loops->depth == HIR_MAX_VARS)
			die("mir_unroll_walks: loops nested deeper than there are variables");
		loops->vars[loops->depth++] = inst->var;
		visit(m, inst->body, loops);
		loops->depth--;
	}
}

void mir_unroll_walks(MModule *m)
{
	Enclosing loops = {.depth = 0};
	visit(m, m->body, &loops);
}
