/*
 * The bit-vector representation (QuickScorer: Lucchese et al., SIGIR 2015). A row's
 * walks of a block of B trees are one scan over the features instead of B walks over
 * nodes. Each tree keeps a bit per leaf, leaves numbered left to right, all set at
 * first; a split the row goes right at clears the leaves of its left subtree, and the
 * tree's exit is then its lowest set bit (count trailing zeros). The block's splits are
 * stored grouped by feature, each group sorted by threshold, so for a row value x the
 * splits it goes right at are a prefix of its feature's group: the scan stops at the
 * first it goes left at, never reading the splits it would not change.
 *
 * Where the lowering walks B consecutive trees of one row side by side (an interleaved
 * tree loop of B iterations: `tile(tree, t0, t1, B); interleave(t1)`), trees_apply
 * holds for blocks that start at a multiple of B and whose trees have at most 64 leaves
 * each; the tables of each block size are laid out on the first walk that asks for it.
 * Elsewhere (other blocks, other loops) trees are walked node by node in the array
 * layout, which this representation keeps beside its tables.
 *
 * Splits are read as `x < t` goes left (or `x <= t`; `>=` and `>` are the same splits
 * with their sides swapped), one kind per forest. A missing x (NaN) sends the row to
 * each split's default side: the scan then visits its feature's whole group, with masks
 * that clear nothing where the default is left. Forests with `==`, `!=`, category splits
 * or LightGBM's zero-as-missing, or mixing < with <=, are refused.
 */
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

/* Trees a block's bit vectors cover at most (64 leaves each, an i64). */
#define MAX_LEAVES 64
/* Block sizes a representation keeps tables of (one per interleaved loop size). */
#define MAX_SIZES 4

/* One split of a block, for sorting. */
typedef struct Split {
	int32_t feature;
	double threshold;
	uint32_t tree;                 /* within the block */
	uint64_t mask, missing_mask;   /* what going right clears; what a missing x clears (all ones: nothing) */
} Split;

/* The tables of blocks of `size` trees (buffer indices), and their addresses where a walk emits them. */
typedef struct Blocks {
	uint32_t size;
	uint32_t ok, starts, groups, thresholds, trees, masks, missing_masks;
} Blocks;

typedef struct BitvectorState {
	void *array;                   /* the array layout's state, for walks node by node */
	const HForest *f;
	LModule *m;
	bool le;                       /* splits read as x <= t (else x < t) */
	uint32_t leaf_buffer, base_buffer; /* leaf values (leaf_type) left to right per tree; each tree's first */
	uint32_t leaves, bases;
	Blocks sizes[MAX_SIZES];
	uint32_t num_sizes;
} BitvectorState;

/* Whether the row goes left at n when its compare holds: > and >= are < and <= with their sides swapped. */
static bool swapped(const HNode *n) { return n->compare == HCMP_GT || n->compare == HCMP_GE; }

/*
 * Number tree t's leaves left to right (sides swapped where swapped() says), writing
 * their values into leaves (when not NULL) and, per split, the range of leaves its left
 * subtree holds. Returns the leaf count.
 */
static uint32_t number_leaves(const HForest *f, const RepLayout *layout, uint32_t t, double *leaves, uint32_t *first,
                              uint32_t *end, uint32_t *stack)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0, count = 0;
	/* Depth first, left side first: a node is pushed with a flag once its left side is done. */
	stack[top++] = 0;
	while (top) {
		uint32_t id = stack[--top] & INT32_MAX, after_left = stack[top] >> 31;
		const HNode *n = &nodes[id];
		uint32_t left = swapped(n) ? n->right : n->left, right = swapped(n) ? n->left : n->right;
		if (n->feature == HIR_LEAF) {
			if (leaves)
				leaves[count] = rep_slot_value(layout, f, n);
			count++;
		} else if (!after_left) {
			first[id] = count;
			stack[top++] = id | 1u << 31;
			stack[top++] = left;
		} else {
			end[id] = count;
			stack[top++] = right;
		}
	}
	return count;
}

/* Splits by feature, then threshold. */
static int by_feature(const void *a, const void *b)
{
	const Split *x = a, *y = b;
	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	return x->threshold < y->threshold ? -1 : x->threshold > y->threshold;
}

static bool bitvector_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	BitvectorState *s;
	uint64_t total = 0;
	uint32_t max_nodes = 1, *first, *end, *stack;
	int32_t *bases;
	double *values;
	void *leaves;
	bool lt = false, le = false;

	for (uint32_t t = 0; t < f->num_trees; t++)
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++) {
			const HNode *n = &hir_tree_nodes(f, t)[i];
			if (n->feature == HIR_LEAF)
				continue;
			if (n->compare > HCMP_GE || n->missing != HMISSING_NAN)
				return error_set(e, "bitvector representation: a split tests %s%s; it takes <, <=, > and >= splits "
				                    "of NaN as missing only (use array or sparse)", hir_compare_name((HCompare)n->compare),
				                 n->missing != HMISSING_NAN ? " with zero as missing" : "");
			lt |= n->compare == HCMP_LT || n->compare == HCMP_GE;
			le |= n->compare == HCMP_LE || n->compare == HCMP_GT;
		}
	if (lt && le)
		return error_set(e, "bitvector representation: the forest mixes < (or >=) with <= (or >) splits");
	if (!rep_array.lay_out(f, m, layout, e)) { /* trees of blocks that do not fit walk the array layout */
		error_prefix(e, "bitvector representation, for trees of more than 64 leaves");
		return false;
	}
	rep_tests_missing(layout); /* a block's walk sends missing values to their sides, and skips that for complete rows */
	s = xcalloc(1, sizeof *s);
	s->array = layout->state;
	layout->state = s;
	s->f = f;
	s->m = m;
	s->le = le;
	/* Leaves left to right, tree after tree. */
	for (uint32_t t = 0; t < f->num_trees; t++)
		max_nodes = f->trees[t].num_nodes > max_nodes ? f->trees[t].num_nodes : max_nodes;
	first = xmalloc(max_nodes * sizeof *first);
	end = xmalloc(max_nodes * sizeof *end);
	stack = xmalloc(max_nodes * sizeof *stack);
	values = xmalloc(max_nodes * sizeof *values);
	bases = xmalloc(((size_t)f->num_trees + 1) * sizeof *bases);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		bases[t] = (int32_t)total;
		total += number_leaves(f, layout, t, NULL, first, end, stack);
	}
	bases[f->num_trees] = (int32_t)total;
	leaves = xcalloc(total ? total : 1, lir_type_size(layout->leaf_type));
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t n = number_leaves(f, layout, t, values, first, end, stack);
		for (uint32_t k = 0; k < n; k++)
			rep_store_value(leaves, layout->leaf_type, (uint64_t)bases[t] + k, values[k]);
	}
	free(first);
	free(end);
	free(stack);
	free(values);
	s->leaf_buffer = lir_buffer_add(m, "bitvector.leaves", layout->leaf_type, total, leaves);
	s->base_buffer = lir_buffer_add(m, "bitvector.tree_leaves", LTYPE_I32, f->num_trees + 1, bases);
	return true;
}

/* Lay out the tables of blocks of `size` trees (every full block of the forest). */
static void lay_out_blocks(BitvectorState *s, const RepLayout *layout, uint32_t size, Blocks *k)
{
	const HForest *f = s->f;
	uint32_t num_blocks = f->num_trees / size, max_nodes = 1, *first, *end, *stack, *starts;
	uint64_t splits = 0, groups = 0, at = 0, group_at = 0;
	uint8_t *ok = xcalloc(num_blocks ? num_blocks : 1, 1), *trees;
	uint64_t *masks, *missing_masks;
	int32_t *group_words;
	void *thresholds;
	Split *block;

	for (uint32_t t = 0; t < f->num_trees; t++) {
		max_nodes = f->trees[t].num_nodes > max_nodes ? f->trees[t].num_nodes : max_nodes;
		splits += hir_tree_splits(f, t);
	}
	first = xmalloc(max_nodes * sizeof *first);
	end = xmalloc(max_nodes * sizeof *end);
	stack = xmalloc(max_nodes * sizeof *stack);
	block = xmalloc(((uint64_t)size * max_nodes + 1) * sizeof *block);
	starts = xmalloc(((size_t)num_blocks + 1) * sizeof *starts);
	group_words = xcalloc(3 * splits + 3, sizeof *group_words);
	thresholds = xcalloc(splits + 1, lir_type_size(layout->threshold_type));
	trees = xcalloc(splits + 1, 1);
	masks = xcalloc(splits + 1, sizeof *masks);
	missing_masks = xcalloc(splits + 1, sizeof *missing_masks);
	for (uint32_t j = 0; j < num_blocks; j++) {
		uint32_t n = 0;
		ok[j] = 1;
		starts[j] = (uint32_t)groups;
		for (uint32_t i = 0; i < size; i++) {
			uint32_t t = j * size + i;
			const HNode *nodes = hir_tree_nodes(f, t);
			if (number_leaves(f, layout, t, NULL, first, end, stack) > MAX_LEAVES) {
				ok[j] = 0;
				break;
			}
			for (uint32_t id = 0; id < f->trees[t].num_nodes; id++) {
				const HNode *v = &nodes[id];
				uint64_t width = end[id] - first[id], cleared;
				if (v->feature == HIR_LEAF)
					continue;
				cleared = (width == 64 ? ~0ull : ((1ull << width) - 1)) << first[id];
				block[n++] = (Split){.feature = v->feature, .threshold = v->value, .tree = i, .mask = ~cleared,
				                     /* missing goes to the default side: right clears the left subtree */
				                     .missing_mask = (v->default_left != 0) != swapped(v) ? ~0ull : ~cleared};
			}
		}
		if (!ok[j])
			continue;
		qsort(block, n, sizeof *block, by_feature);
		for (uint32_t i = 0; i < n; i++) {
			if (i == 0 || block[i].feature != block[i - 1].feature) {
				group_words[3 * group_at] = block[i].feature;
				group_words[3 * group_at + 1] = (int32_t)at;
				group_at++;
			}
			group_words[3 * group_at - 1] = (int32_t)(at + 1); /* the group's end so far */
			rep_store_value(thresholds, layout->threshold_type, at, block[i].threshold);
			trees[at] = (uint8_t)block[i].tree;
			masks[at] = block[i].mask;
			missing_masks[at] = block[i].missing_mask;
			at++;
		}
		groups = group_at;
	}
	starts[num_blocks] = (uint32_t)groups;
	free(first);
	free(end);
	free(stack);
	free(block);
	k->size = size;
	k->ok = lir_buffer_add(s->m, "bitvector.block_ok", LTYPE_I8, num_blocks ? num_blocks : 1, ok);
	k->starts = lir_buffer_add(s->m, "bitvector.block_groups", LTYPE_I32, (uint64_t)num_blocks + 1, starts);
	k->groups = lir_buffer_add(s->m, "bitvector.groups", LTYPE_I32, 3 * groups + 3, group_words);
	k->thresholds = lir_buffer_add(s->m, "bitvector.thresholds", layout->threshold_type, at + 1, thresholds);
	k->trees = lir_buffer_add(s->m, "bitvector.trees", LTYPE_I8, at + 1, trees);
	k->masks = lir_buffer_add(s->m, "bitvector.masks", LTYPE_I64, at + 1, masks);
	k->missing_masks = lir_buffer_add(s->m, "bitvector.missing_masks", LTYPE_I64, at + 1, missing_masks);
}

/* The tables of blocks of `size` trees, laid out on first use; NULL past MAX_SIZES sizes. */
static Blocks *blocks_of(BitvectorState *s, const RepLayout *layout, uint32_t size)
{
	for (uint32_t i = 0; i < s->num_sizes; i++)
		if (s->sizes[i].size == size)
			return &s->sizes[i];
	if (s->num_sizes == MAX_SIZES)
		return NULL;
	lay_out_blocks(s, layout, size, &s->sizes[s->num_sizes]);
	return &s->sizes[s->num_sizes++];
}

static uint32_t i64c(LBuilder *b, int64_t v) { return lir_const_int(b, LTYPE_I64, v); }
static uint32_t load_i64(LBuilder *b, LType t, uint32_t base, uint32_t at)
{
	uint32_t v = lir_emit(b, LOP_LOAD, t, base, at, LIR_NONE);
	return lir_cast(b, t == LTYPE_I32 ? LCAST_SEXT : LCAST_ZEXT, LTYPE_I64, v);
}

static uint32_t bitvector_trees_apply(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count)
{
	BitvectorState *s = layout->state;
	uint32_t block, aligned, inside, ok;
	Blocks *k;
	if (count < 2 || s->f->num_trees < count || !(k = blocks_of(s, layout, count)))
		return LIR_NONE;
	/* A whole block (first a multiple of count, the block inside the forest) whose trees all fit 64 leaves. */
	block = lir_emit(b, LOP_SDIV, LTYPE_I64, first, i64c(b, count), LIR_NONE);
	aligned = lir_cmp(b, LOP_ICMP, LCMP_EQ, lir_emit(b, LOP_MUL, LTYPE_I64, block, i64c(b, count), LIR_NONE), first);
	inside = lir_cmp(b, LOP_ICMP, LCMP_SLT, block, i64c(b, s->f->num_trees / count));
	block = lir_emit(b, LOP_SELECT, LTYPE_I64, inside, block, i64c(b, 0));
	ok = lir_emit(b, LOP_LOAD, LTYPE_I8, rep_buffer_address(b, k->ok), block, LIR_NONE);
	ok = lir_cmp(b, LOP_ICMP, LCMP_NE, ok, lir_const_int(b, LTYPE_I8, 0));
	return lir_emit(b, LOP_AND, LTYPE_I1, lir_emit(b, LOP_AND, LTYPE_I1, aligned, inside, LIR_NONE), ok, LIR_NONE);
}

/* bits[trees[i]] &= masks[i] (trees: i8, masks: i64). */
static void clear(LBuilder *b, uint32_t bits, uint32_t trees, uint32_t masks, uint32_t i)
{
	uint32_t tree = load_i64(b, LTYPE_I8, trees, i), mask = lir_emit(b, LOP_LOAD, LTYPE_I64, masks, i, LIR_NONE);
	uint32_t old = lir_emit(b, LOP_LOAD, LTYPE_I64, bits, tree, LIR_NONE);
	lir_emit(b, LOP_STORE, LTYPE_VOID, bits, tree, lir_emit(b, LOP_AND, LTYPE_I64, old, mask, LIR_NONE));
}

static void bitvector_walk_trees(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count, const RepRow *row,
                                 uint32_t *values)
{
	BitvectorState *s = layout->state;
	const Blocks *k = blocks_of(s, layout, count); /* trees_apply laid it out */
	LType t = layout->threshold_type;
	/* The tables' addresses here: walks sit in different branches, none of which dominates the others. */
	uint32_t starts = rep_buffer_address(b, k->starts), groups = rep_buffer_address(b, k->groups);
	uint32_t thresholds = rep_buffer_address(b, k->thresholds), trees = rep_buffer_address(b, k->trees);
	uint32_t masks = rep_buffer_address(b, k->masks), missing_masks = rep_buffer_address(b, k->missing_masks);
	uint32_t bits = lir_local_array(b, LTYPE_I64, count, LSPACE_PRIVATE), block, group, feature, begin, end, x, cell, i, stop;
	for (uint32_t j = 0; j < count; j++) {
		uint32_t at = i64c(b, j);
		lir_emit(b, LOP_STORE, LTYPE_VOID, bits, at, i64c(b, -1));
	}
	block = lir_emit(b, LOP_SDIV, LTYPE_I64, first, i64c(b, count), LIR_NONE);
	begin = load_i64(b, LTYPE_I32, starts, block);
	end = load_i64(b, LTYPE_I32, starts, lir_emit(b, LOP_ADD, LTYPE_I64, block, i64c(b, 1), LIR_NONE));
	/* Each feature group of the block: the row's value, then the splits it goes right at. */
	group = lir_begin(b, LOP_FOR, begin, end, i64c(b, 1));
	group = lir_emit(b, LOP_MUL, LTYPE_I64, group, i64c(b, 3), LIR_NONE);
	feature = load_i64(b, LTYPE_I32, groups, group);
	begin = load_i64(b, LTYPE_I32, groups, lir_emit(b, LOP_ADD, LTYPE_I64, group, i64c(b, 1), LIR_NONE));
	end = load_i64(b, LTYPE_I32, groups, lir_emit(b, LOP_ADD, LTYPE_I64, group, i64c(b, 2), LIR_NONE));
	x = lir_emit(b, LOP_LOAD, row->type, row->base, rep_row_at(b, row, feature, false), LIR_NONE);
	if (row->type != t)
		x = lir_cast(b, row->type == LTYPE_F32 ? LCAST_FPEXT : LCAST_FPTRUNC, t, x);
	if (!row->complete) { /* a missing x: every split of the group, each to its default side */
		uint32_t missing = lir_begin(b, LOP_IF, lir_cmp(b, LOP_FCMP, LCMP_UNO, x, x), LIR_NONE, LIR_NONE);
		i = lir_begin(b, LOP_FOR, begin, end, i64c(b, 1));
		clear(b, bits, trees, missing_masks, i);
		lir_end(b);
		lir_else(b, missing);
	}
	/* Thresholds ascending: the row goes right while t <= x (x < t goes left), or t < x (x <= t goes left). */
	cell = lir_emit(b, LOP_VAR, LTYPE_I64, begin, LIR_NONE, LIR_NONE);
	lir_begin(b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
	i = lir_emit(b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
	lir_emit(b, LOP_BREAK_IF, LTYPE_VOID, lir_cmp(b, LOP_ICMP, LCMP_SGE, i, end), LIR_NONE, LIR_NONE);
	stop = lir_cmp(b, LOP_FCMP, s->le ? LCMP_OGE : LCMP_OGT, lir_emit(b, LOP_LOAD, t, thresholds, i, LIR_NONE), x);
	lir_emit(b, LOP_BREAK_IF, LTYPE_VOID, stop, LIR_NONE, LIR_NONE);
	clear(b, bits, trees, masks, i);
	lir_emit(b, LOP_SET, LTYPE_VOID, cell, lir_emit(b, LOP_ADD, LTYPE_I64, i, i64c(b, 1), LIR_NONE), LIR_NONE);
	lir_end(b);
	if (!row->complete)
		lir_end(b);
	lir_end(b);
	/* Each tree's exit: its lowest leaf left. */
	for (uint32_t j = 0; j < count; j++) {
		uint32_t tree = lir_emit(b, LOP_ADD, LTYPE_I64, first, i64c(b, j), LIR_NONE);
		uint32_t leaf = lir_emit(b, LOP_CTZ, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I64, bits, i64c(b, j), LIR_NONE), LIR_NONE, LIR_NONE);
		leaf = lir_emit(b, LOP_ADD, LTYPE_I64, load_i64(b, LTYPE_I32, s->bases, tree), leaf, LIR_NONE);
		values[j] = lir_emit(b, LOP_LOAD, layout->leaf_type, s->leaves, leaf, LIR_NONE);
	}
}

/* The node hooks: the array layout's, on its own state. */
#define ARRAY(layout, call)                                  \
	do {                                                 \
		BitvectorState *s_ = (layout)->state;        \
		(layout)->state = s_->array;                 \
		call;                                        \
		(layout)->state = s_;                        \
	} while (0)

static void bitvector_begin_function(RepLayout *layout, LBuilder *b)
{
	BitvectorState *s = layout->state;
	ARRAY(layout, rep_array.begin_function(layout, b));
	s->leaves = rep_buffer_address(b, s->leaf_buffer);
	s->bases = rep_buffer_address(b, s->base_buffer);
}

static uint32_t bitvector_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	uint32_t v;
	ARRAY(layout, v = rep_array.tree(layout, b, tree, side_by_side));
	return v;
}

static uint32_t bitvector_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	uint32_t v;
	ARRAY(layout, v = rep_array.root(layout, b, tree));
	return v;
}

static RepNode bitvector_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	RepNode n;
	ARRAY(layout, n = rep_array.load_node(layout, b, tree, node));
	return n;
}

static uint32_t bitvector_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                               const RepRow *row, bool leaf_stays)
{
	uint32_t v;
	ARRAY(layout, v = rep_array.step(layout, b, tree, node, fields, row, leaf_stays));
	return v;
}

static uint32_t bitvector_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	uint32_t v;
	ARRAY(layout, v = rep_array.leaf_value(layout, b, tree, node));
	return v;
}

static void bitvector_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole)
{
	ARRAY(layout, rep_array.prefetch_tree(layout, b, tree, whole));
}

static void bitvector_prefetch_below(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, bool leaves)
{
	ARRAY(layout, rep_array.prefetch_below(layout, b, tree, node, leaves));
}

static void bitvector_free(RepLayout *layout)
{
	BitvectorState *s = layout->state;
	if (!s)
		return;
	layout->state = s->array;
	rep_array.free(layout);
	free(s);
}

const LRepresentation rep_bitvector = {
	.name = "bitvector",
	.lay_out = bitvector_lay_out,
	.free = bitvector_free,
	.begin_function = bitvector_begin_function,
	.tree = bitvector_tree,
	.root = bitvector_root,
	.load_node = bitvector_load_node,
	.step = bitvector_step,
	.leaf_value = bitvector_leaf_value,
	.prefetch_tree = bitvector_prefetch_tree,
	.prefetch_below = bitvector_prefetch_below,
	.trees_apply = bitvector_trees_apply,
	.walk_trees = bitvector_walk_trees,
};
