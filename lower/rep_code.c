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
 * Rows walked side by side (an interleaved loop of rows around the walks) take a tree of
 * at most 64 leaves in vectors, with no branch (QuickScorer's exit leaf, in registers):
 * every split's test is one vector of the lanes' answers, each split that sends a lane
 * right clears the leaves of its left subtree from that lane's mask of candidates, and
 * the lowest candidate left, numbered left to right, is the lane's leaf, whose value a
 * gather reads from the tree's leaves (CodeState.leaves). The rows' features come by
 * gathers of the lanes' rows, shared by the walks of the same rows that follow (the
 * trees of a tile, specialized). A tree pays all its splits, not one path, but no
 * mispredict and no chain of loads: the answer for trees as LightGBM grows them (31
 * leaves, 6 to 20 deep), whose branches a walk of one row mispredicts and whose walks
 * side by side wait on their deepest lane. Wider trees, and trees of several outputs,
 * walk each lane as code. Such walks compile several times slower than code a row at
 * a time (vector code, and float rows get an entry of their own: see lower_module).
 *
 * The lowering keeps a function's code under LOWER_CODE_FUNCTION_SPLITS (lower.h), each
 * iteration of a specialized tree loop around a loop over rows being a function of its
 * own; trees nest at most CODE_MAX_DEPTH ifs deep, past which the representation refuses
 * the model.
 */
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdlib.h>

#define CODE_MAX_DEPTH 64
/* Category sets of at most this many words that are not 0 are immediates in lanes' tests; wider ones are gathered. */
#define CODE_LANES_SET_WORDS 8

typedef struct CodeState {
	const HForest *forest;
	uint32_t *stack;  /* for the walk's nest: per level a node, its IF and its stage; for walks of lanes, per node its
	                     first leaf (left to right), then the nodes in depth-first order */
	int64_t *first_leaf; /* per tree, where its leaves' values start in the leaf buffer; -1: its lanes walk as code */
	uint32_t leaf_buffer; /* the leaves of trees whose lanes walk in vectors */
	uint32_t leaves;      /* its address in the function being built */
	/*
	 * Per feature, its vector for the lanes' rows (LIR_NONE: not yet), kept from walk to
	 * walk of the same rows while they are emitted one after the other in one region (the
	 * trees of a tile, specialized): the features in `met`, the last walk's leaf values
	 * at `mark` of function `fn`, its lane 0's row `row`, the lanes' stride and their count.
	 */
	uint32_t *feature_x, *met, num_met, mark, stride, lanes;
	/*
	 * Per category feature, kept as feature_x is (ok LIR_NONE: not yet): whether the lanes'
	 * values are categories below `categories` (i1), the categories (i32, 0 where not),
	 * their word index and their bit in the word (lanes_categories).
	 */
	struct LaneCategories {
		uint32_t ok, c, word, bit;
	} *feature_categories;
	uint32_t categories;
	const LFunc *fn;
	RepRow row;
} CodeState;

uint32_t rep_depth_first(const HForest *f, uint32_t t, uint32_t *order, uint32_t *first)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0, n = 0, leaves = 0, *stack = first; /* first is the stack until the end */
	stack[top++] = 0;
	while (top) {
		uint32_t id = stack[--top];
		order[n++] = id;
		if (nodes[id].feature != HIR_LEAF) {
			stack[top++] = nodes[id].right;
			stack[top++] = nodes[id].left;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (nodes[order[i]].feature == HIR_LEAF)
			first[order[i]] = leaves++;
	for (uint32_t i = n; i-- > 0;) /* children after their parent: a split's first leaf is its left child's */
		if (nodes[order[i]].feature != HIR_LEAF)
			first[order[i]] = first[nodes[order[i]].left];
	return leaves;
}

/* The leaves of the trees whose lanes walk in vectors (at most LOWER_CODE_MASK_LEAVES, one output), left to right. */
static void lay_out_lanes(const HForest *f, LModule *m, RepLayout *layout, CodeState *s)
{
	uint32_t *order = s->stack, *first;
	uint64_t count = 0;
	void *values;
	s->first_leaf = xmalloc(((size_t)f->num_trees + 1) * sizeof *s->first_leaf);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint64_t leaves = (f->trees[t].num_nodes + 1) / 2;
		s->first_leaf[t] = !layout->leaf_vectors && leaves <= LOWER_CODE_MASK_LEAVES ? (int64_t)count : -1; /* (one output) */
		count += s->first_leaf[t] < 0 ? 0 : leaves;
	}
	values = xcalloc(count ? count : 1, lir_type_size(layout->leaf_type));
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t);
		uint32_t size = f->trees[t].num_nodes, reached;
		if (s->first_leaf[t] < 0)
			continue;
		first = order + size;
		reached = 2 * rep_depth_first(f, t, order, first) - 1;
		for (uint32_t i = 0; i < reached; i++)
			if (nodes[order[i]].feature == HIR_LEAF)
				rep_store_value(values, layout->leaf_type, (uint64_t)s->first_leaf[t] + first[order[i]],
				                rep_slot_value(layout, f, &nodes[order[i]]));
	}
	s->leaf_buffer = lir_buffer_add(m, "code.lane_leaves", layout->leaf_type, count ? count : 1, values);
	s->feature_x = xmalloc(((size_t)f->num_features + 1) * sizeof *s->feature_x);
	s->feature_categories = xmalloc(((size_t)f->num_features + 1) * sizeof *s->feature_categories);
	s->met = xmalloc(((size_t)f->num_features + 1) * sizeof *s->met);
	s->fn = NULL;
	for (uint32_t i = 0; i < f->num_features; i++)
		s->feature_x[i] = s->feature_categories[i].ok = LIR_NONE;
	for (uint32_t i = 0; i < f->num_sets; i++) /* every set's categories (32 x the widest's words: a float holds it) */
		s->categories = 32 * f->sets[i].num_words > s->categories ? 32 * f->sets[i].num_words : s->categories;
}

/* The code representation's state; its trees' leaves laid out for masks where `masks` (every walk branch-free, or lanes). */
static bool lay_out(const HForest *f, LModule *m, RepLayout *layout, bool masks, Error *e)
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
	s->leaf_buffer = LIR_NONE;
	if (masks)
		lay_out_lanes(f, m, layout, s);
	return true;
}

static bool code_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out(f, m, layout, layout->lanes, e);
}

static void code_free(RepLayout *layout)
{
	CodeState *s = layout->state;
	if (s) {
		free(s->stack);
		free(s->first_leaf);
		free(s->feature_x);
		free(s->feature_categories);
		free(s->met);
	}
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

static void forget_features(CodeState *s)
{
	for (uint32_t i = 0; i < s->num_met; i++)
		s->feature_x[s->met[i]] = s->feature_categories[s->met[i]].ok = LIR_NONE;
	s->num_met = 0;
}

static void code_begin_function(RepLayout *layout, LBuilder *b)
{
	CodeState *s = layout->state;
	rep_begin_forest(layout, b);
	s->leaves = s->leaf_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->leaf_buffer);
	s->fn = NULL; /* (a new function: no vectors kept) */
	forget_features(s);
}

static uint32_t lanes_op(LBuilder *b, LOp op, LType t, uint32_t x, uint32_t y)
{
	return lir_emit_vector(b, op, t, (uint8_t)lir_lanes(b->fn, x), x, y, LIR_NONE);
}

static uint32_t lanes_select(LBuilder *b, LType t, uint32_t when, uint32_t x, uint32_t y)
{
	return lir_emit_vector(b, LOP_SELECT, t, (uint8_t)lir_lanes(b->fn, when), when, x, y);
}

/*
 * The lanes' categories of feature j, whose values are x: whether each is a category
 * below every set's end by the forest's rule, the categories, their words' index and
 * their bits (CodeState.feature_categories); made once for the walks that keep x
 * (lanes_feature), since every IN split of j takes them.
 */
static const struct LaneCategories *lanes_categories(const RepLayout *layout, LBuilder *b, uint32_t j, uint32_t x)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	CodeState *s = layout->state;
	struct LaneCategories *k = &s->feature_categories[j];
	uint32_t lanes = lir_lanes(b->fn, x), ok, below, c;
	LType t = layout->threshold_type;
	if (k->ok != LIR_NONE)
		return k;
	ok = layout->category_rule == HCATEGORY_TRUNCATE ? lir_cmp(b, LOP_FCMP, LCMP_OGT, x, rep_splat(b, t, lanes, 0, -1.0))
	                                                 : lir_cmp(b, LOP_FCMP, LCMP_OGE, x, rep_splat(b, t, lanes, 0, 0.0));
	below = lir_cmp(b, LOP_FCMP, LCMP_OLT, x, rep_splat(b, t, lanes, 0, s->categories));
	ok = lanes_op(b, LOP_AND, LTYPE_I1, ok, below);
	c = lir_cast(b, LCAST_FPTOSI, LTYPE_I32, lanes_select(b, t, ok, x, rep_splat(b, t, lanes, 0, 0.0)));
	if (layout->category_rule == HCATEGORY_EXACT)
		ok = lanes_op(b, LOP_AND, LTYPE_I1, ok, lir_cmp(b, LOP_FCMP, LCMP_OEQ, lir_cast(b, LCAST_SITOFP, t, c), x));
	k->ok = ok;
	k->c = c;
	k->word = lanes_op(b, LOP_ASHR, LTYPE_I32, c, rep_splat(b, LTYPE_I32, lanes, 5, 0.0));
	k->bit = lanes_op(b, LOP_AND, LTYPE_I32, c, rep_splat(b, LTYPE_I32, lanes, 31, 0.0));
	return k;
}

/*
 * i1 per lane: whether x (the lanes' values of feature j, layout's threshold type) is in
 * set `set` of f by the forest's category rule, the set known: its words immediates,
 * picked by the category's word index, where few are not 0, else gathered from the set
 * buffer (as rep.c's constant_category_in, per lane).
 */
static uint32_t lanes_category_in(const RepLayout *layout, LBuilder *b, const HForest *f, uint32_t set, uint32_t j,
                                  uint32_t x)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	const HSet *hs = &f->sets[set];
	const uint32_t *words = f->set_words + hs->first;
	const struct LaneCategories *k;
	uint32_t lanes = lir_lanes(b->fn, x), end = 0, nonzero = 0, ok, below, c, word, bit, zero;
	for (uint32_t w = 0; w < hs->num_words; w++) { /* one past the set's greatest category */
		if (words[w])
			end = 32 * w + 32 - (uint32_t)__builtin_clz(words[w]);
		nonzero += words[w] != 0;
	}
	if (!end)
		return rep_splat(b, LTYPE_I1, lanes, 0, 0.0);
	k = lanes_categories(layout, b, j, x);
	ok = k->ok;
	bit = k->bit;
	if (nonzero <= CODE_LANES_SET_WORDS) { /* the word of c's: immediates, by c / 32 (0 past them) */
		word = rep_splat(b, LTYPE_I32, lanes, 0, 0.0);
		for (uint32_t w = 0; w < hs->num_words; w++) {
			uint32_t here;
			if (!words[w])
				continue;
			here = lir_cmp(b, LOP_ICMP, LCMP_EQ, k->word, rep_splat(b, LTYPE_I32, lanes, w, 0.0));
			word = lanes_select(b, LTYPE_I32, here, rep_splat(b, LTYPE_I32, lanes, (int32_t)words[w], 0.0), word);
		}
	} else { /* c below end keeps the gather inside the set */
		below = lir_cmp(b, LOP_ICMP, LCMP_SLT, k->c, rep_splat(b, LTYPE_I32, lanes, end, 0.0));
		ok = lanes_op(b, LOP_AND, LTYPE_I1, ok, below);
		c = lanes_select(b, LTYPE_I32, below, k->c, rep_splat(b, LTYPE_I32, lanes, 0, 0.0));
		word = lanes_op(b, LOP_ASHR, LTYPE_I32, c, rep_splat(b, LTYPE_I32, lanes, 5, 0.0));
		word = rep_set_words(layout, b, (uint8_t)lanes, lir_const_int(b, LTYPE_I64, (int64_t)layout->set_offsets[set] + !layout->set_stride),
		                     word, (end + 31) / 32, REP_INDEX_WHOLE);
	}
	bit = lanes_op(b, LOP_ASHR, LTYPE_I32, word, bit);
	bit = lanes_op(b, LOP_AND, LTYPE_I32, bit, rep_splat(b, LTYPE_I32, lanes, 1, 0.0));
	zero = rep_splat(b, LTYPE_I32, lanes, 0, 0.0);
	return lanes_op(b, LOP_AND, LTYPE_I1, ok, lir_cmp(b, LOP_ICMP, LCMP_NE, bit, zero));
}

/* i1 per lane: where the lanes' rows, of values x, go right at split n (rep_split_goes_right's test, lanewise). */
static uint32_t lanes_go_right(const RepLayout *layout, LBuilder *b, const HForest *f, const HNode *n, uint32_t x,
                               bool complete)
{
	LType t = layout->threshold_type;
	uint32_t lanes = lir_lanes(b->fn, x), right, missing, up, down;
	bool nan_comes = !complete && !layout->nan_reads_zero, nan_right = !n->default_left, zero = n->missing == HMISSING_ZERO;
	if (n->compare == HCMP_IN) /* NaN is in no set: it goes right */
		right = lir_cmp(b, LOP_ICMP, LCMP_EQ, lanes_category_in(layout, b, f, n->set, (uint32_t)n->feature, x), rep_splat(b, LTYPE_I1, lanes, 0, 0.0));
	else if (rep_right_compare(n->compare, true) != LCMP_COUNT && !zero) /* one compare decides NaN too */
		return lir_cmp(b, LOP_FCMP, rep_right_compare(n->compare, nan_comes && nan_right), x, rep_splat(b, t, lanes, 0, n->value));
	else
		right = lir_cmp(b, LOP_FCMP, rep_right_compare(n->compare, false), x, rep_splat(b, t, lanes, 0, n->value));
	if (!nan_comes || (n->compare == HCMP_IN && nan_right && !zero))
		return right;
	missing = lir_cmp(b, LOP_FCMP, LCMP_UNO, x, x);
	if (zero) {
		up = lir_cmp(b, LOP_FCMP, LCMP_OLE, x, rep_splat(b, t, lanes, 0, HIR_ZERO_THRESHOLD));
		down = lir_cmp(b, LOP_FCMP, LCMP_OGE, x, rep_splat(b, t, lanes, 0, -HIR_ZERO_THRESHOLD));
		missing = lanes_op(b, LOP_OR, LTYPE_I1, missing, lanes_op(b, LOP_AND, LTYPE_I1, up, down));
	}
	return lanes_select(b, LTYPE_I1, missing, rep_splat(b, LTYPE_I1, lanes, nan_right, 0.0), right);
}

/*
 * The lanes' values of feature `feature`: lane 0's row's, lane r's r x stride elements
 * on (one load where that is 1: rows column by column, else a gather), once for the
 * walks that keep them (features_kept).
 */
static uint32_t lanes_feature(RepLayout *layout, LBuilder *b, const RepRow *row, uint32_t lanes, uint32_t stride,
                              uint32_t feature)
{
	CodeState *s = layout->state;
	uint32_t at, offsets, x;
	if (s->feature_x[feature] != LIR_NONE)
		return s->feature_x[feature];
	s->met[s->num_met++] = feature;
	at = rep_row_at(b, row, feature, true);
	if (stride == 1) {
		x = lir_emit_vector(b, LOP_LOAD, row->type, (uint8_t)lanes, row->base, at, LIR_NONE);
	} else {
		offsets = rep_splat(b, LTYPE_I32, lanes, stride, 0.0);
		b->fn->insts[offsets].sub = LIR_CONST_STEPS;
		x = lir_emit_vector(b, LOP_GATHER, row->type, (uint8_t)lanes, row->base, at, offsets);
	}
	if (row->type != layout->threshold_type)
		x = lir_cast(b, row->type == LTYPE_F32 ? LCAST_FPEXT : LCAST_FPTRUNC, layout->threshold_type, x);
	return s->feature_x[feature] = x;
}

/*
 * Whether LIR values x and y are one value: the same, or the same arithmetic of the same
 * operands (the lowering emits each lane's row address afresh), `depth` levels down.
 */
static bool same_value(const LBuilder *b, uint32_t x, uint32_t y, int depth)
{
	const LInst *p = &b->fn->insts[x], *q = &b->fn->insts[y];
	bool pure = p->op == LOP_CONST || p->op == LOP_INDEX || p->op == LOP_ADD || p->op == LOP_SUB || p->op == LOP_MUL ||
	            p->op == LOP_CAST;
	if (x == y)
		return true;
	if (!pure || depth == 0 || p->op != q->op || p->type != q->type || p->imm != q->imm || p->sub != q->sub ||
	    p->lanes != q->lanes || (p->op == LOP_CONST && p->fimm != q->fimm))
		return false;
	return (p->a == LIR_NONE ? q->a == LIR_NONE : q->a != LIR_NONE && same_value(b, p->a, q->a, depth - 1)) &&
	       (p->b == LIR_NONE ? q->b == LIR_NONE : q->b != LIR_NONE && same_value(b, p->b, q->b, depth - 1));
}

/*
 * Whether the feature vectors of the last walk of lanes serve this one: its rows are the
 * same, and the builder emits into the region of that walk, after it (its instructions
 * then precede every use here).
 */
static bool features_kept(const LBuilder *b, const CodeState *s, const RepRow *row, uint32_t lanes, uint32_t stride)
{
	if (s->fn != b->fn || !same_value(b, row->base, s->row.base, 4) || !same_value(b, row->start, s->row.start, 1) ||
	    row->type != s->row.type || row->complete != s->row.complete || stride != s->stride || lanes != s->lanes)
		return false;
	for (uint32_t at = s->mark; at != LIR_NONE; at = b->fn->insts[at].next)
		if (&b->fn->insts[at].next == b->tail[b->depth])
			return true;
	return false;
}

/*
 * The walk of `lanes` rows (one or more) of a tree of at most LOWER_CODE_MASK_LEAVES leaves
 * by masks, with no branch; LIR_NONE where the tree or the rows do not allow it.
 */
static uint32_t mask_walk(RepLayout *layout, LBuilder *b, uint32_t tree, const RepRow *row, uint32_t lanes,
                          uint32_t stride)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	CodeState *s = layout->state;
	const HForest *f = s->forest;
	const LInst handle = b->fn->insts[tree];
	const HNode *nodes;
	uint32_t t, size, leaves, *order = s->stack, *first, mask, leaf;
	LType mask_type;
	if (handle.op != LOP_CONST || handle.imm < 0 || (uint64_t)handle.imm >= f->num_trees)
		die("code representation: a walk of a tree not known at compile time");
	t = (uint32_t)handle.imm;
	if (!s->first_leaf || s->first_leaf[t] < 0 || lanes > MIR_WALK_LANES ||
	    (row->type != LTYPE_F32 && row->type != LTYPE_F64))
		return LIR_NONE;
	if (!features_kept(b, s, row, lanes, stride))
		forget_features(s);
	nodes = hir_tree_nodes(f, t);
	size = f->trees[t].num_nodes;
	first = order + size;
	leaves = rep_depth_first(f, t, order, first);
	/*
	 * Masks of 32 bits where the leaves fit, under double compares too: selecting i32
	 * lanes by a double compare repacks its answers, and costs less than i64 lanes,
	 * twice the registers for every AND and select.
	 */
	mask_type = leaves <= 32 ? LTYPE_I32 : LTYPE_I64;
	mask = rep_splat(b, mask_type, lanes, -1, 0.0);
	for (uint32_t i = 0; i < 2 * leaves - 1; i++) { /* the nodes reached (order holds no others) */
		const HNode *n = &nodes[order[i]];
		uint64_t from, to, left;
		uint32_t x, right, cleared;
		if (n->feature == HIR_LEAF)
			continue;
		from = first[n->left];
		to = first[n->right];
		left = (to >= 64 ? ~0ull : (1ull << to) - 1) & ~((1ull << from) - 1); /* the left subtree's leaves */
		x = lanes_feature(layout, b, row, lanes, stride, (uint32_t)n->feature);
		right = lanes_go_right(layout, b, f, n, x, row->complete);
		/*
		 * The split's own mask selected, ANDed into the lane's: the selects wait on no other
		 * split, only the ANDs chain (docs/performance-notes.md, Branch-free masks ANDed).
		 */
		cleared = lanes_select(b, mask_type, right, rep_splat(b, mask_type, lanes, (int64_t)~left, 0.0),
		                       rep_splat(b, mask_type, lanes, -1, 0.0));
		mask = lanes_op(b, LOP_AND, mask_type, mask, cleared);
	}
	leaf = lir_emit_vector(b, LOP_CTZ, mask_type, (uint8_t)lanes, mask, LIR_NONE, LIR_NONE);
	b->fn->insts[leaf].imm = 1; /* the lane's leaf is always left */
	if (mask_type != LTYPE_I32)
		leaf = lir_cast(b, LCAST_TRUNC, LTYPE_I32, leaf);
	s->mark = lir_emit_vector(b, LOP_GATHER, layout->leaf_type, (uint8_t)lanes, s->leaves,
	                          lir_const_int(b, LTYPE_I64, s->first_leaf[t]), leaf);
	s->fn = b->fn;
	s->row = *row;
	s->stride = stride;
	s->lanes = lanes;
	return s->mark;
}

static uint32_t code_walk_lanes(RepLayout *layout, LBuilder *b, uint32_t tree, const RepRow *row, uint32_t lanes,
                                uint32_t stride)
{
	return lanes < 2 ? LIR_NONE : mask_walk(layout, b, tree, row, lanes, stride);
}

const LRepresentation rep_code = {
	.name = "code",
	.lay_out = code_lay_out,
	.free = code_free,
	.begin_function = code_begin_function,
	.tree = code_tree,
	.walk = code_walk,
	.walk_lanes = code_walk_lanes,
	.one_version = true,
};

/*
 * The branch-free form of seed 003 (its "sem if"): each tree of at most
 * LOWER_CODE_MASK_LEAVES leaves evaluates every split, a row at a time as well as rows
 * side by side, and finds its leaf by the mask of candidates (mask_walk), its
 * thresholds and masks immediates in the code; no branch and no node in memory, only
 * the leaf's value. A tree pays all its splits rather than one path, which pays for
 * shallow trees whose branches would mispredict (or diverge, on a GPU); wider trees,
 * and trees of several outputs, walk as code does.
 */
static bool branchfree_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out(f, m, layout, true, e);
}

static uint32_t branchfree_walk(RepLayout *layout, LBuilder *b, uint32_t tree, const RepRow *row)
{
	uint32_t leaf = mask_walk(layout, b, tree, row, 1, 1);
	return leaf != LIR_NONE ? leaf : code_walk(layout, b, tree, row);
}

const LRepresentation rep_branchfree = {
	.name = "branchfree",
	.lay_out = branchfree_lay_out,
	.free = code_free,
	.begin_function = code_begin_function,
	.tree = code_tree,
	.walk = branchfree_walk,
	.walk_lanes = code_walk_lanes,
	.one_version = true,
};
