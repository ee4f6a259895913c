/*
 * Walks of TOP_LANES rows side by side that read the rows' keys in tiles (BlockScope.key_tiles,
 * feature f of the tile's row r at element f x TOP_LANES + r): their tops, the first
 * levels of every tree taken for the rows at once (RepLayout.top_levels), and walks of
 * whole trees by leaf masks (RepLayout.leaf_masks, lower/rep_masks.c); and walks of
 * BYTE_TOP_LANES rows of symmetric trees that read the rows' bins (RepLayout.byte_tops).
 */
#include "lower/lowering.h"

/* Whether lane 0's row of the walk lies `align` rows (a power of two) or a multiple of them into its block. */
static bool walk_aligned(const Lowering *l, const MInst *walk, uint8_t align)
{
	const MIndex *block = l->block.key_index;
	for (uint32_t i = 0; i < block->num_terms; i++)
		if (!mir_index_has(&walk->row, block->terms[i]))
			return false;
	for (uint32_t i = 0; i < walk->row.num_terms; i++) {
		int32_t var = walk->row.terms[i];
		if (!mir_index_has(block, var) && lower_var_align(l, var) < align)
			return false;
	}
	return true;
}

bool lower_walk_at_tile(const Lowering *l, const MInst *walk) { return walk_aligned(l, walk, TOP_LANES); }

/*
 * Whether the rows of the walk's lanes lie in one tile of keys (BlockScope.key_tiled),
 * lane 0's row first: at a tile's start (lower_walk_at_tile) and the lanes' rows follow
 * it within TOP_LANES.
 */
bool lower_lanes_share_tile(const Lowering *l, const MInst *walk)
{
	return lower_walk_at_tile(l, walk) && (int64_t)(l->scope.lanes - 1) * l->scope.lane_step < TOP_LANES;
}

/* Whether the walk's lanes are `lanes` consecutive rows of one tree, all walked (none masked). */
static bool rows_side_by_side(const Lowering *l, const MInst *walk, uint32_t lanes)
{
	return l->scope.lanes == lanes && !l->scope.lanes_are_trees && l->scope.lane_step == 1 && l->scope.masked == LIR_NONE &&
	       l->scope.lane_var != HIR_NONE && mir_index_has(&walk->row, l->scope.lane_var);
}

/*
 * Whether the walk's lanes are TOP_LANES rows side by side of one tree that share a tile
 * of keys: their tops and leaf masks can read the tile.
 */
static bool lanes_take_tile(const Lowering *l, const MInst *walk)
{
	return l->block.key_tiles != LIR_NONE && rows_side_by_side(l, walk, TOP_LANES) && lower_lanes_share_tile(l, walk);
}

void lower_lanes_apart(Lowering *l, uint32_t v, uint32_t lanes, uint32_t *values)
{
	LType type = l->b.fn->insts[v].type;
	uint32_t spill = lir_local_array(&l->b, type, lanes, LSPACE_PRIVATE);
	l->b.fn->insts[spill].lanes = (uint8_t)lanes;
	lir_emit_vector(&l->b, LOP_STORE, LTYPE_VOID, (uint8_t)lanes, spill, const_i64(l, 0), v);
	for (uint32_t r = 0; r < lanes; r++)
		values[r] = emit2(l, LOP_LOAD, type, spill, const_i64(l, r));
}

/*
 * The tile of the walk's rows (where lanes_take_tile) in `tiles`, of `columns` keys a row;
 * *offset: lane 0's row in the keys' block (i64).
 */
static uint32_t lanes_tile(Lowering *l, const MInst *walk, uint32_t tiles, int64_t columns, uint32_t *offset)
{
	*offset = lower_index(l, &walk->row, 0);
	*offset = emit2(l, LOP_SUB, LTYPE_I64, *offset, l->block.key_first);
	return lir_index(&l->b, tiles, emit2(l, LOP_MUL, LTYPE_I64, *offset, const_i64(l, columns)), LTYPE_I32);
}

/* Tags of tops (top_tag) tell levels apart below this. */
#define TOP_TAG_LEVELS 16
/*
 * Where `when` (i1) holds, the top of tree number `tree` (i64) for the rows whose keys
 * by feature start at `tile` (their tile of keys), into the vector of l->block.top_nodes at `at` (i64). It
 * uses 512-bit vectors (LIR_IF_WIDE), in place.
 */
static void take_top(Lowering *l, uint32_t when, uint32_t tree, uint32_t levels, uint32_t tile, uint32_t at)
{
	uint32_t lanes = l->scope.lanes, branch = lir_begin(&l->b, LOP_IF, when, LIR_NONE, LIR_NONE), top, element;
	l->b.fn->insts[branch].imm = LIR_IF_WIDE;
	top = l->rep->top_nodes(&l->layout, &l->b, tree, levels, lanes, tile);
	element = emit2(l, LOP_MUL, LTYPE_I64, at, const_i64(l, lanes));
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.top_nodes, element, top);
	lir_end(&l->b);
}

/* i64: what a top in l->block.top_nodes is for: the rows `offset` (i64) into the keys' block, tree number `tree` (i64), its levels. */
static uint32_t top_tag(Lowering *l, uint32_t offset, uint32_t tree, uint32_t levels)
{
	uint32_t tag = emit2(l, LOP_MUL, LTYPE_I64, offset, const_i64(l, l->f->num_trees));
	tag = emit2(l, LOP_ADD, LTYPE_I64, tag, tree);
	tag = emit2(l, LOP_MUL, LTYPE_I64, tag, const_i64(l, TOP_TAG_LEVELS));
	return emit2(l, LOP_ADD, LTYPE_I64, tag, const_i64(l, levels));
}

/*
 * The first steps of the walks of TOP_LANES rows side by side, taken at once by the
 * representation (top_nodes), where it can: yields how many (0: none), and *nodes where
 * the rows' nodes after them lie. The walks of tree t take tree t + 1's top too, for the next
 * iteration, kept in l->block.top_nodes for their rows (a pair per TOP_LANES rows of the
 * block, by the tree's parity); a walk whose top was not taken ahead (the first tree of
 * a block, or a loop whose next tree is another) takes its own. Taken ahead, the top's
 * compares lie beside the walks' chains of loads, not on them.
 *
 * Where the walks end with the top, the representation takes their leaves from its
 * nodes (leaf_values: symmetric trees) and the CPU has AVX-512, there are no chains of
 * loads to hide the compares beside: the top is taken in place, without tags or the next
 * tree's (RepLayout.top_in_place). With AVX2 that was slower (measured:
 * docs/performance-notes.md, Symmetric trees' tops in place).
 */
uint32_t lower_tops(Lowering *l, const MInst *walk, const RepRow *row, const uint32_t *safe, uint32_t ends, uint32_t *nodes)
{
	uint32_t levels = l->layout.top_levels, lanes = l->scope.lanes, offset, pair, tree, next, parity, at, at_next, missing,
	         tile, tag, last;
	*nodes = LIR_NONE;
	if (l->block.top_nodes == LIR_NONE || !lanes_take_tile(l, walk) || !rep_keys_decide(&l->layout, row))
		return 0;
	for (uint32_t r = 0; r < lanes && !l->layout.leaves_stay; r++) /* (where leaves stay, a top takes their copies) */
		levels = safe[r] < levels ? safe[r] : levels;
	if (levels < 2)
		return 0;
	tile = lanes_tile(l, walk, l->block.key_tiles, l->layout.key_columns, &offset);
	pair = emit2(l, LOP_SDIV, LTYPE_I64, offset, const_i64(l, TOP_LANES));
	pair = emit2(l, LOP_MUL, LTYPE_I64, pair, const_i64(l, TOP_SLOTS));
	tree = l->tree_index[lane_slot(walk->a, 0)];
	parity = emit2(l, LOP_AND, LTYPE_I64, tree, const_i64(l, 1));
	at = emit2(l, LOP_ADD, LTYPE_I64, pair, parity);
	if (levels >= ends && l->rep->leaf_values && l->layout.vector_tops == MTOPS_WIDE) {
		l->layout.top_in_place = true;
		take_top(l, lir_const_int(&l->b, LTYPE_I1, 1), tree, levels, tile, at);
		l->layout.top_in_place = false;
	} else {
		/* This tree's top, where the walks before did not take it. */
		tag = emit2(l, LOP_LOAD, LTYPE_I64, l->block.top_tags, at);
		missing = lir_cmp(&l->b, LOP_ICMP, LCMP_NE, tag, top_tag(l, offset, tree, levels));
		take_top(l, missing, tree, levels, tile, at);
		/* The next tree's (the last tree's again after the last). */
		next = emit2(l, LOP_ADD, LTYPE_I64, tree, const_i64(l, 1));
		last = lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, next, const_i64(l, l->f->num_trees));
		next = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, last, next, tree);
		at_next = emit2(l, LOP_ADD, LTYPE_I64, pair, const_i64(l, 1));
		at_next = emit2(l, LOP_SUB, LTYPE_I64, at_next, parity);
		take_top(l, lir_const_int(&l->b, LTYPE_I1, 1), next, levels, tile, at_next);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.top_tags, at_next, top_tag(l, offset, next, levels));
	}
	at = emit2(l, LOP_MUL, LTYPE_I64, at, const_i64(l, lanes));
	*nodes = lir_index(&l->b, l->block.top_nodes, at, LTYPE_I32);
	return levels;
}

uint32_t lower_top_leaves(Lowering *l, uint32_t tree, uint32_t levels, uint32_t nodes, uint32_t *values)
{
	uint32_t lanes = l->scope.lanes, v;
	if (!l->rep->leaf_values || nodes == LIR_NONE || !l->rep->leaf_tables(&l->layout, levels, false))
		return LIR_NONE;
	v = lir_emit_vector(&l->b, LOP_LOAD, LTYPE_I32, (uint8_t)lanes, nodes, const_i64(l, 0), LIR_NONE);
	v = l->rep->leaf_values(&l->layout, &l->b, tree, levels, lanes, v, LIR_NONE);
	lower_lanes_apart(l, v, lanes, values);
	return v;
}

bool lower_walks_bytes(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_FOR && inst->interleave == BYTE_TOP_LANES && !(inst->loop & MLOOP_TREES);
}

bool lower_bins_walk(Lowering *l, uint32_t id)
{
	const MInst *walk = &l->m->insts[id];
	uint32_t offset, tree = l->tree_index[lane_slot(walk->a, 0)], v, nodes;
	bool outputs = l->tree_widths != LIR_NONE; /* leaf vectors: their reduce takes them output by output */
	RepRow row;
	if (l->block.bins == LIR_NONE || !rows_side_by_side(l, walk, BYTE_TOP_LANES) || !walk_aligned(l, walk, BYTE_TOP_LANES) ||
	    (outputs && !lower_reduce_outputs(l, id, 0)))
		return false;
	row = lower_walk_row(l, walk, 0);
	if (!rep_keys_decide(&l->layout, &row))
		return false;
	offset = emit2(l, LOP_SUB, LTYPE_I64, lower_index(l, &walk->row, 0), l->block.key_first); /* (a group's first) */
	offset = emit2(l, LOP_MUL, LTYPE_I64, offset, const_i64(l, l->f->num_features));
	v = l->rep->walk_bins(&l->layout, &l->b, tree, lir_index(&l->b, l->block.bins, offset, LTYPE_I8));
	if (outputs) {
		nodes = lir_local_array(&l->b, LTYPE_I8, BYTE_TOP_LANES, LSPACE_PRIVATE);
		l->b.fn->insts[nodes].lanes = BYTE_TOP_LANES;
		lir_emit_vector(&l->b, LOP_STORE, LTYPE_VOID, BYTE_TOP_LANES, nodes, const_i64(l, 0), v);
		l->top_leaves[id] = (TopLeaves){.tree = tree, .nodes = nodes, .levels = 0, .bins = true};
		return true;
	}
	v = l->rep->bin_leaves(&l->layout, &l->b, tree, v, 0);
	lower_lanes_apart(l, v, BYTE_TOP_LANES, &l->value[lane_slot(id, 0)]);
	l->lanes_value[id] = v;
	return true;
}

/* The columns of BlockScope.mask_tiles: rep_mask_key_columns', then two a set feature's (RepLayout.set_features). */
static int64_t mask_columns(const Lowering *l)
{
	return rep_mask_key_columns(&l->layout) + 2 * (int64_t)l->layout.num_set_features;
}

/*
 * Into tile `to` of the copy, the set columns of tile `from` (RepLayout.set_features): a row's category c's word,
 * c >> 5, with the bit that picks the second table copied to the sign, and its bit's shift ~c & 31.
 */
static void copy_set_columns(Lowering *l, uint32_t from, uint32_t to)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	int32_t second = (int32_t)rep_table_words(&l->layout) / 2; /* (the first word of the second table) */
	uint32_t features = rep_buffer_address(&l->b, l->layout.set_features), j, element, column, r, c, word, pick, place;
	j = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), const_i64(l, l->layout.num_set_features), const_i64(l, 1));
	element = emit2(l, LOP_LOAD, LTYPE_I32, features, j);
	element = lir_cast(&l->b, LCAST_ZEXT, LTYPE_I64, element);
	column = emit2(l, LOP_MUL, LTYPE_I64, j, const_i64(l, 2 * TOP_LANES));
	column = emit2(l, LOP_ADD, LTYPE_I64, column, const_i64(l, TOP_LANES * (int64_t)rep_mask_key_columns(&l->layout)));
	r = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), const_i64(l, TOP_LANES), const_i64(l, 1));
	c = emit2(l, LOP_ADD, LTYPE_I64, element, r);
	c = emit2(l, LOP_LOAD, LTYPE_I32, from, c);
	word = emit2(l, LOP_ASHR, LTYPE_I32, c, lir_const_int(&l->b, LTYPE_I32, 5));
	pick = emit2(l, LOP_AND, LTYPE_I32, word, lir_const_int(&l->b, LTYPE_I32, second));
	pick = emit2(l, LOP_SHL, LTYPE_I32, pick, lir_const_int(&l->b, LTYPE_I32, 31 - __builtin_ctz((unsigned)second)));
	word = emit2(l, LOP_OR, LTYPE_I32, word, pick);
	place = emit2(l, LOP_ADD, LTYPE_I64, column, r);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, place, word);
	place = emit2(l, LOP_ADD, LTYPE_I64, place, const_i64(l, TOP_LANES));
	c = emit2(l, LOP_SUB, LTYPE_I32, lir_const_int(&l->b, LTYPE_I32, -1), c);
	c = emit2(l, LOP_AND, LTYPE_I32, c, lir_const_int(&l->b, LTYPE_I32, 31));
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, place, c);
	lir_end(&l->b);
	lir_end(&l->b);
}

uint32_t lower_tile_applies(Lowering *l, const MInst *walk, uint32_t *tile)
{
	uint32_t offset;
	*tile = LIR_NONE;
	if (!l->rep->walk_tile || !l->layout.leaf_masks || l->block.key_rows == LIR_NONE || !lanes_take_tile(l, walk))
		return LIR_NONE;
	*tile = l->block.mask_tiles == LIR_NONE ? lanes_tile(l, walk, l->block.key_tiles, l->layout.key_columns, &offset)
	                                         : lanes_tile(l, walk, l->block.mask_tiles, mask_columns(l), &offset);
	return l->rep->tile_apply(&l->layout, &l->b, l->tree_index[lane_slot(walk->a, 0)]);
}

uint32_t lower_tile_walk(Lowering *l, uint32_t id, uint32_t tile, uint32_t *values)
{
	/* In place, in 512-bit vectors where the CPU has them (LIR_IF_WIDE), the leaves' values through memory. */
	const MInst *walk = &l->m->insts[id];
	uint32_t lanes = l->scope.lanes, spill = lir_local_array(&l->b, l->layout.leaf_type, lanes, LSPACE_PRIVATE), branch, v;
	l->b.fn->insts[spill].lanes = (uint8_t)lanes;
	branch = lir_begin(&l->b, LOP_IF, lir_const_int(&l->b, LTYPE_I1, 1), LIR_NONE, LIR_NONE);
	l->b.fn->insts[branch].imm = LIR_IF_WIDE;
	v = l->rep->walk_tile(&l->layout, &l->b, l->tree_index[lane_slot(walk->a, 0)], lanes, tile);
	lir_emit_vector(&l->b, LOP_STORE, LTYPE_VOID, (uint8_t)lanes, spill, const_i64(l, 0), v);
	lir_end(&l->b);
	for (uint32_t r = 0; r < lanes; r++)
		values[r] = emit2(l, LOP_LOAD, l->layout.leaf_type, spill, const_i64(l, r));
	return lir_emit_vector(&l->b, LOP_LOAD, l->layout.leaf_type, (uint8_t)lanes, spill, const_i64(l, 0), LIR_NONE);
}

uint32_t lower_mask_tiles(Lowering *l, uint32_t rows, uint32_t tiles, int64_t tile_rows)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	int64_t size = TOP_LANES * (int64_t)l->layout.key_columns, columns = mask_columns(l); /* a tile's keys, its copy's */
	uint32_t copy = lir_local_array(&l->b, LTYPE_I32, tile_rows * columns, LSPACE_PRIVATE), count, t, from, to, at, key;
	l->b.fn->insts[copy].lanes = TOP_LANES;
	count = emit2(l, LOP_ADD, LTYPE_I64, rows, const_i64(l, TOP_LANES - 1));
	count = emit2(l, LOP_SDIV, LTYPE_I64, count, const_i64(l, TOP_LANES));
	t = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), count, const_i64(l, 1));
	from = emit2(l, LOP_MUL, LTYPE_I64, t, const_i64(l, size));
	from = lir_index(&l->b, tiles, from, LTYPE_I32);
	to = emit2(l, LOP_MUL, LTYPE_I64, t, const_i64(l, TOP_LANES * columns));
	to = lir_index(&l->b, copy, to, LTYPE_I32);
	at = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), const_i64(l, size), const_i64(l, 1));
	key = emit2(l, LOP_LOAD, LTYPE_I32, from, at);
	if (l->layout.signed_masks)
		key = emit2(l, LOP_ADD, LTYPE_I32, key, lir_const_int(&l->b, LTYPE_I32, (int32_t)REP_KEY_BIAS));
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, at, key);
	if (columns > l->layout.key_columns) {
		key = emit2(l, LOP_SUB, LTYPE_I32, key, lir_const_int(&l->b, LTYPE_I32, 1));
		at = emit2(l, LOP_ADD, LTYPE_I64, at, const_i64(l, size));
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, at, key);
	}
	lir_end(&l->b);
	if (l->layout.num_set_features)
		copy_set_columns(l, from, to);
	lir_end(&l->b);
	return copy;
}
