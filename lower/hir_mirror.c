/*
 * HIR pass: two margins that are each other's negation become one (HBINARY_MIRROR).
 *
 * A two-class model may keep a margin per class where one would do: CatBoost's ONNX
 * export of a binary classifier gives every leaf the vector [-v, v], and the base
 * values [-b, b]. Each tree then adds two values a row where one would do, through the
 * leaf-vector machinery, and the representations that take a lane of rows at once
 * (tops, oblivious levels) fall back to a value per lane and output.
 *
 * The fold keeps the second margin m and marks the first as -m: in round-to-nearest,
 * fl(-a + -b) = -fl(a + b), so the sum of the negated values in tree order is exactly
 * the negation of the sum, and so is an average; the transform (one of each margin
 * alone) then makes the same predictions of -m as of the first margin. MIN and MAX
 * aggregates swap under negation, and SOFTMAX and ARGMAX read both margins: those
 * forests are left as they are.
 */
#include "lower/lower.h"

#include <stdlib.h>

/* Whether every tree of f adds [-v, v] to margins 0 and 1. */
static bool leaves_mirrored(const HForest *f)
{
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t);
		if (f->trees[t].output != 0 || f->trees[t].width != 2)
			return false;
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++)
			if (nodes[i].feature == HIR_LEAF && f->leaf_values[nodes[i].vector] != -f->leaf_values[nodes[i].vector + 1])
				return false;
	}
	return true;
}

bool hir_fold_mirrored_margins(HForest *f)
{
	if (f->num_outputs != 2 || f->binary != HBINARY_NONE || !hir_transform_elementwise(f->transform) ||
	    (f->aggregate != HAGGREGATE_SUM && f->aggregate != HAGGREGATE_AVERAGE) || f->base_score[0] != -f->base_score[1] ||
	    !f->num_trees || !leaves_mirrored(f))
		return false;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		HNode *nodes = hir_tree_nodes(f, t);
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++)
			if (nodes[i].feature == HIR_LEAF)
				nodes[i].value = f->leaf_values[nodes[i].vector + 1];
		f->trees[t].width = 1;
	}
	free(f->leaf_values);
	f->leaf_values = NULL;
	f->num_leaf_values = f->leaf_values_cap = 0;
	f->base_score[0] = f->base_score[1];
	f->num_outputs = 1;
	f->binary = HBINARY_MIRROR;
	return true;
}
