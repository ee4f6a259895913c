/*
 * The code representation (Treelite's and lleaves'): no node is stored; each tree's
 * walk is a nest of ifs whose features, thresholds and missing-value directions are
 * constants in the instructions, ending at each leaf with the leaf's value. A step is
 * then one load of the row's feature and one compare against an immediate, with no
 * node loads and no index arithmetic, and a predictable branch costs almost nothing;
 * an unpredictable one costs a mispredict where the array layout pays none. Code grows
 * with the model: one copy of a tree per walk of it that the schedule writes.
 *
 * A walk needs its tree known at compile time, so every tree loop around the walks must
 * be specialized (specialize(t)); the lowering refuses a walk of a tree chosen at run
 * time, naming the loop. The category sets of IN splits and the leaf vectors of
 * multi-output trees stay in the buffers every layout shares (rep_lay_out_forest).
 *
 * The lowering keeps a function's code under LOWER_CODE_FUNCTION_SPLITS (lower.h), each
 * iteration of a specialized tree loop around a loop over rows being a function of its
 * own; trees nest at most CODE_MAX_DEPTH ifs deep, past which the representation refuses
 * the model.
 */
#include "lower/rep.h"

#include <stdlib.h>

#define CODE_MAX_DEPTH 64

typedef struct CodeState {
	const HForest *forest;
	uint32_t *stack;  /* for the walk's nest: per level a node, its IF and its stage */
} CodeState;

static bool code_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	uint32_t most = 1;
	CodeState *s;
	if (!rep_lay_out_forest(f, m, "code", layout, e))
		return false;
	/* Thresholds are immediates, leaves constants of their own type: float thresholds compare as floats. */
	if (rep_float_thresholds(f, layout))
		layout->threshold_type = LTYPE_F32;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		if (depth > CODE_MAX_DEPTH)
			return error_set(e, "code representation: tree %u has depth %u, at most %d nest as code; use array or sparse",
			                 t, depth, CODE_MAX_DEPTH);
		most = f->trees[t].num_nodes > most ? f->trees[t].num_nodes : most;
	}
	s = xcalloc(1, sizeof *s);
	s->forest = f;
	s->stack = xmalloc(3 * (size_t)most * sizeof *s->stack);
	layout->state = s;
	return true;
}

static void code_free(RepLayout *layout)
{
	CodeState *s = layout->state;
	if (s)
		free(s->stack);
	rep_free_state(layout);
}

/* A tree's handle is its number: the walk reads it as a constant. */
static uint32_t code_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	(void)side_by_side;
	(void)layout;
	(void)b;
	return tree;
}

/* Stages of a split in the walk's nest: its right subtree is being emitted, then its left one. */
enum { STAGE_RIGHT, STAGE_LEFT };

static uint32_t code_walk(RepLayout *layout, LBuilder *b, uint32_t tree, const RepRow *row)
{
	CodeState *s = layout->state;
	const LInst handle = b->fn->insts[tree]; /* a copy: emitting moves the instructions */
	const HNode *nodes;
	uint32_t cell, top = 0, *stack = s->stack;

	if (handle.op != LOP_CONST || handle.imm < 0 || (uint64_t)handle.imm >= s->forest->num_trees)
		die("code representation: a walk of a tree not known at compile time");
	nodes = hir_tree_nodes(s->forest, (uint32_t)handle.imm);
	cell = lir_emit(b, LOP_VAR, layout->leaf_type, lir_const_float(b, layout->leaf_type, 0.0), LIR_NONE, LIR_NONE);
	/*
	 * Depth first, on a stack of the splits still open. A node is emitted when reached; a
	 * split opens `if (goes right) { right } else { left }` and stays on the stack, with
	 * its IF, until both halves are in.
	 */
	for (uint32_t id = 0;;) {
		const HNode *n = &nodes[id];
		if (n->feature == HIR_LEAF) {
			double value = rep_slot_value(layout, s->forest, n);
			lir_emit(b, LOP_SET, LTYPE_VOID, cell, lir_const_float(b, layout->leaf_type, value), LIR_NONE);
		} else {
			uint32_t right = rep_split_goes_right(layout, b, s->forest, n, row);
			stack[top++] = id;
			stack[top++] = lir_begin(b, LOP_IF, right, LIR_NONE, LIR_NONE);
			stack[top++] = STAGE_RIGHT;
			id = n->right;
			continue;
		}
		/* Close the splits whose halves are done; go down the left half of the first that has one to go. */
		while (top && stack[top - 1] == STAGE_LEFT) {
			top -= 3;
			lir_end(b);
		}
		if (!top)
			break;
		stack[top - 1] = STAGE_LEFT;
		lir_else(b, stack[top - 2]);
		id = nodes[stack[top - 3]].left;
	}
	return lir_emit(b, LOP_GET, layout->leaf_type, cell, LIR_NONE, LIR_NONE);
}

const LRepresentation rep_code = {
	.name = "code",
	.lay_out = code_lay_out,
	.free = code_free,
	.begin_function = rep_begin_forest,
	.tree = code_tree,
	.walk = code_walk,
	.one_version = true,
};
