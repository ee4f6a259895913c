/*
 * Walks (MOP_WALK): a walk node by node over the representation's hooks, its steps
 * peeled or unrolled as the MIR says, its first levels taken at once as tops
 * (lower/lower_tops.c) where rows walk side by side, and the representation's whole
 * walks (code, blocks of trees, leaf masks) where they apply.
 */
#include "lower/lowering.h"
#include "lower/cost.h"

/* One step of a walk from node for row: the representation tests the split and yields the child (a leaf stays where leaf_stays). */
static uint32_t lower_step(Lowering *l, uint32_t tree, uint32_t node, const RepRow *row, const RepNode *fields, bool leaf_stays)
{
	return l->rep->step(&l->layout, &l->b, tree, node, fields, row, leaf_stays);
}

/*
 * A walk of a tree known at compile time (a specialized tree loop) takes that tree's
 * own depths: as many straight steps as its shallowest leaf allows, and no loop when
 * they reach its deepest leaf.
 */
static void specialize_walk(Lowering *l, uint32_t tree_index, uint32_t *peel, uint32_t *safe, bool *exact)
{
	const LInst *t = &l->b.fn->insts[tree_index];
	uint32_t shallowest, deepest;
	if (t->op != LOP_CONST || t->imm < 0 || (uint64_t)t->imm >= l->f->num_trees)
		return;
	hir_trees_leaf_depth_range(l->f, (uint32_t)t->imm, (uint32_t)t->imm + 1, &shallowest, &deepest);
	if (*safe < shallowest)
		*safe = shallowest;
	if (*peel < shallowest)
		*peel = shallowest;
	if (*peel >= deepest) {
		*peel = deepest;
		*exact = true;
	}
}

/*
 * The row a walk reads in lane r (lowering.h). Lanes of interleaved rows address their
 * features from one pointer, lane 0's row, each at a constant offset: a feature's address
 * is then that pointer, the feature and a displacement, where per-lane row addresses
 * would each hold a register through the walk (16 lanes outnumber x86's registers, and
 * the walk spilled).
 * Keys in tiles: row o of the block at tile o / TOP_LANES, lane o % TOP_LANES, which the
 * lanes of rows that share a tile take from lane 0's as constants.
 */
RepRow lower_walk_row(Lowering *l, const MInst *walk, uint32_t r)
{
	bool row_lanes = !l->scope.lanes_are_trees && l->scope.lane_var != HIR_NONE && mir_index_has(&walk->row, l->scope.lane_var);
	/* Walks read the rows' keys where the ifComplete around made them. */
	bool keys = l->block.key_rows != LIR_NONE, tiled = l->block.key_tiled, shared = tiled && lower_lanes_share_tile(l, walk); /* (tiled: keys) */
	/* cache(v)'s copy column by column (Lowering.row_cache_rows): a row's features lie that many apart, its rows 1 */
	bool columns = !keys && l->row_cache != LIR_NONE && l->row_cache_rows;
	int64_t width = columns ? 1 : keys ? l->layout.key_columns : l->f->num_features + (l->row_cache != LIR_NONE ? l->row_cache_pad : 0);
	int64_t step = row_lanes ? (int64_t)r * l->scope.lane_step : 0;
	int64_t offset = !tiled ? step * width : shared ? step : 0;
	uint32_t index = lower_index(l, &walk->row, row_lanes && (!tiled || shared) ? 0 : r), start, lane = LIR_NONE;
	uint32_t buffer = keys ? l->block.key_rows : l->row_cache != LIR_NONE ? l->row_cache : l->block.zero_rows != LIR_NONE ? l->block.zero_rows : l->rows;
	RepRow row = {.type = keys ? l->block.key_type : l->row_type, .complete = l->complete, .feature_step = columns ? l->row_cache_rows : 1,
	              .row_step = tiled ? 1 : width};
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	if (keys || l->row_cache != LIR_NONE) /* the keys, or cache(v)'s copy of the rows: from their first row */
		index = emit2(l, LOP_SUB, LTYPE_I64, index, keys ? l->block.key_first : l->row_cache_first);
	if (tiled && !shared) { /* the tile's first row, and the lane */
		lane = emit2(l, LOP_AND, LTYPE_I64, index, const_i64(l, TOP_LANES - 1));
		index = emit2(l, LOP_SUB, LTYPE_I64, index, lane);
	}
	start = columns ? index : emit2(l, LOP_MUL, LTYPE_I64, index, const_i64(l, width));
	row.base = lir_index(&l->b, buffer, start, row.type);
	row.start = lane != LIR_NONE ? lane : const_i64(l, offset);
	return row;
}

/* The most lines of rows one walk of TOP_LANES rows prefetches (prefetch_next_rows). */
#define PREFETCH_ROWS_MAX_LINES 4

/*
 * A block's scan reads its rows in one pass, and rows that come from memory arrive
 * there at the rate a core streams them: half of syn-year's scan (90 features) waited
 * for them. So the walks of TOP_LANES rows side by side, each a tree's, prefetch the
 * lines of the block the thread will likely scan next (l->block.next), spread over the
 * block: walk number tree x groups + group takes k lines after the k x number before
 * it, k the fewest that cover the block with one set a walk (at most
 * PREFETCH_ROWS_MAX_LINES); walks whose lines lie past the next block or the batch take
 * none (narrow rows' walks spent time prefetching one line again, and a batch of one
 * block would prefetch its last line), and no line lies past the batch's end. The walks
 * of later trees than the lines need pay one test (computing each walk's line cost
 * more). A burst of them at the block's start cost more than it gained. Spread, they
 * pay for wide rows and leave narrow ones unchanged (measured: docs/performance-notes.md,
 * Prefetching the next rows).
 */
static void prefetch_next_rows(Lowering *l, const MInst *walk)
{
	int64_t width = l->f->num_features, per_line = 64 / (int64_t)lir_type_size(l->row_type);
	int64_t groups = (l->block.span + TOP_LANES - 1) / TOP_LANES, walks = groups * (int64_t)(l->f->num_trees ? l->f->num_trees : 1);
	int64_t lines = (l->block.span * width + per_line - 1) / per_line, k = (lines + walks - 1) / walks;
	uint32_t tree, group, line, first, end, at;
	if (lines == 0) /* (rows of no features) */
		return;
	if (k > PREFETCH_ROWS_MAX_LINES)
		k = PREFETCH_ROWS_MAX_LINES;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	tree = l->tree_index[lane_slot(walk->a, 0)];
	lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, tree, const_i64(l, ((lines + k - 1) / k + groups - 1) / groups)),
	          LIR_NONE, LIR_NONE); /* (the first trees' walks: one test for the others) */
	end = emit2(l, LOP_ADD, LTYPE_I64, l->block.next, const_i64(l, l->block.span));
	end = emit2(l, LOP_MIN, LTYPE_I64, end, l->num_rows);
	end = emit2(l, LOP_MUL, LTYPE_I64, end, const_i64(l, width)); /* the next block's end, or the batch's */
	group = emit2(l, LOP_SUB, LTYPE_I64, lower_index(l, &walk->row, 0), l->block.first);
	group = emit2(l, LOP_SDIV, LTYPE_I64, group, const_i64(l, TOP_LANES));
	line = emit2(l, LOP_MUL, LTYPE_I64, tree, const_i64(l, groups));
	line = emit2(l, LOP_ADD, LTYPE_I64, line, group);
	line = emit2(l, LOP_MUL, LTYPE_I64, line, const_i64(l, k * per_line));
	first = emit2(l, LOP_MUL, LTYPE_I64, l->block.next, const_i64(l, width));
	first = emit2(l, LOP_ADD, LTYPE_I64, first, line);
	lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, first, end), LIR_NONE, LIR_NONE);
	end = emit2(l, LOP_SUB, LTYPE_I64, end, const_i64(l, 1));
	for (int64_t i = 0; i < k; i++) {
		at = emit2(l, LOP_ADD, LTYPE_I64, first, const_i64(l, i * per_line));
		at = emit2(l, LOP_MIN, LTYPE_I64, at, end);
		lir_emit(&l->b, LOP_PREFETCH, l->row_type, l->rows, at, LIR_NONE);
	}
	lir_end(&l->b);
	lir_end(&l->b);
}

/* RepLayout.leaf_level of a walk of `peel` steps, `safe` of them safe, exact or not. */
static int32_t leaf_level(const Lowering *l, uint32_t peel, uint32_t safe, bool exact)
{
	return l->layout.packed_leaves && exact && safe >= peel ? (int32_t)peel : -1;
}

/*
 * Every lane's node read from its cell into cur and fields, and whether all of them are
 * on their leaves (LIR_NONE where the layout cannot tell a leaf by its node).
 */
static uint32_t lanes_on_leaves(Lowering *l, const uint32_t *tree, const uint32_t *cells, const bool *exact, uint32_t *cur,
                                RepNode *fields)
{
	uint32_t done = LIR_NONE, leaf;
	bool tested = true;
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		if (exact[r])
			continue;
		cur[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cells[r], LIR_NONE, LIR_NONE);
		fields[r] = l->rep->load_node(&l->layout, &l->b, tree[r], cur[r]);
		leaf = rep_leaf_test(&l->layout, &l->b, &fields[r]);
		tested = tested && leaf != LIR_NONE;
		if (tested)
			done = done == LIR_NONE ? leaf : emit2(l, LOP_AND, LTYPE_I1, done, leaf);
	}
	return tested ? done : LIR_NONE;
}

/*
 * The rest of the walks of lanes side by side after their peeled steps (`stepped` of
 * them, at least), stepping every lane until all are on their leaves, a lane on its leaf
 * staying there, so that the lanes' chains of loads overlap where a loop a lane runs
 * them one after another.
 *
 * Lanes that are rows first take up to FINISH_BLOCKS blocks of FINISH_BLOCK_STEPS straight
 * steps, each while some lane still walks, then a loop. A loop holds every lane's node
 * across its rounds, which takes 16 lanes' nodes through the stack each round; straight
 * steps keep them in registers, and a test a block costs less than a test a step
 * (measured: docs/performance-notes.md, Rows' walks finished together). Where the blocks
 * reach the forest's deepest leaf, there is no loop. Lanes that are a row's trees run
 * the loop alone: their steps wait on each load, and the blocks' steps on leaves made
 * them slower.
 *
 * The loop ends on the lanes' leaf tests where they have them, else when no lane moved.
 */
#define FINISH_BLOCK_STEPS 3
#define FINISH_BLOCKS 6
static void finish_together(Lowering *l, const uint32_t *tree, uint32_t *node, const RepRow *row, const bool *exact,
                            uint32_t stepped)
{
	uint32_t cells[MIR_MAX_INTERLEAVE], cur[MIR_MAX_INTERLEAVE], done, tests, next, same, blocks = 0, opened = 0;
	RepNode fields[MIR_MAX_INTERLEAVE];
	if (!l->scope.lanes_are_trees && l->deepest_leaf > stepped) {
		blocks = (l->deepest_leaf - stepped + FINISH_BLOCK_STEPS - 1) / FINISH_BLOCK_STEPS;
		blocks = blocks < FINISH_BLOCKS ? blocks : FINISH_BLOCKS;
	}
	for (uint32_t r = 0; r < l->scope.lanes; r++)
		if (!exact[r])
			cells[r] = lir_emit(&l->b, LOP_VAR, LTYPE_I64, node[r], LIR_NONE, LIR_NONE);
	for (; opened < blocks; opened++) {
		done = lanes_on_leaves(l, tree, cells, exact, cur, fields);
		if (done == LIR_NONE)
			break;
		lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, done, lir_const_int(&l->b, LTYPE_I1, 0)), LIR_NONE,
		          LIR_NONE);
		for (uint32_t i = 0; i < FINISH_BLOCK_STEPS; i++)
			for (uint32_t r = 0; r < l->scope.lanes; r++) {
				if (exact[r])
					continue;
				if (i)
					fields[r] = l->rep->load_node(&l->layout, &l->b, tree[r], cur[r]);
				cur[r] = lower_step(l, tree[r], cur[r], &row[r], &fields[r], true);
			}
		for (uint32_t r = 0; r < l->scope.lanes; r++)
			if (!exact[r])
				emit2(l, LOP_SET, LTYPE_VOID, cells[r], cur[r]);
	}
	if (opened < blocks || stepped + opened * FINISH_BLOCK_STEPS < l->deepest_leaf || l->scope.lanes_are_trees) {
		lir_begin(&l->b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
		tests = lanes_on_leaves(l, tree, cells, exact, cur, fields);
		if (tests != LIR_NONE)
			lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, tests, LIR_NONE, LIR_NONE);
		done = LIR_NONE; /* (without the leaf tests: every lane's step stayed) */
		for (uint32_t r = 0; r < l->scope.lanes; r++) {
			if (exact[r])
				continue;
			next = lower_step(l, tree[r], cur[r], &row[r], &fields[r], true);
			emit2(l, LOP_SET, LTYPE_VOID, cells[r], next);
			if (tests != LIR_NONE)
				continue;
			same = lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, next, cur[r]);
			done = done == LIR_NONE ? same : emit2(l, LOP_AND, LTYPE_I1, done, same);
		}
		if (tests == LIR_NONE)
			lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, done, LIR_NONE, LIR_NONE);
		lir_end(&l->b);
	}
	for (; opened > 0; opened--)
		lir_end(&l->b);
	for (uint32_t r = 0; r < l->scope.lanes; r++)
		if (!exact[r])
			node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cells[r], LIR_NONE, LIR_NONE);
}

/*
 * The rest of each lane's walk after its peeled steps, a loop a lane: it ends on the
 * leaf's test where the node tells, else on a step that stays (a leaf steps to itself
 * where leaves stay).
 */
static void finish_by_lanes(Lowering *l, const uint32_t *tree, uint32_t *node, const RepRow *row, const bool *exact)
{
	uint32_t cell, leaf, next;
	RepNode fields;
	bool stays;
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		if (exact[r])
			continue;
		cell = lir_emit(&l->b, LOP_VAR, LTYPE_I64, node[r], LIR_NONE, LIR_NONE);
		lir_begin(&l->b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
		node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
		fields = l->rep->load_node(&l->layout, &l->b, tree[r], node[r]);
		stays = fields.is_leaf == LIR_NONE;
		leaf = rep_leaf_test(&l->layout, &l->b, &fields);
		if (leaf != LIR_NONE)
			lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, leaf, LIR_NONE, LIR_NONE);
		next = lower_step(l, tree[r], node[r], &row[r], &fields, stays);
		if (leaf == LIR_NONE)
			lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, next, node[r]), LIR_NONE, LIR_NONE);
		emit2(l, LOP_SET, LTYPE_VOID, cell, next);
		lir_end(&l->b);
		node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
	}
}

/*
 * Where a top of `levels` levels took every step of walk id's tree: its leaves, left to
 * its reduce output by output (TopLeaves) where that takes them, else as the lanes'
 * values at once (lower_top_leaves); false where neither can.
 */
static bool take_top_leaves(Lowering *l, uint32_t id, uint32_t tree, uint32_t levels, uint32_t nodes)
{
	if (lower_reduce_outputs(l, id, levels)) {
		l->top_leaves[id] = (TopLeaves){.tree = tree, .nodes = nodes, .levels = levels, .bins = false};
		return true;
	}
	l->lanes_value[id] = lower_top_leaves(l, tree, levels, nodes, &l->value[lane_slot(id, 0)]);
	return l->lanes_value[id] != LIR_NONE;
}

/*
 * walk, node by node: follow the tree from its root to a leaf for the row of every lane;
 * sets the walk's value per lane to the leaf's value. The lanes' steps are emitted side
 * by side so that their loads overlap.
 *
 * A lone row's walk is a chain of dependent loads, and past the top levels of a forest
 * its nodes come from L2, or L3 for a thousand trees (the next row takes other paths):
 * each peeled step but the first (whose grandchildren share the root's cache line)
 * prefetches the nodes two levels below, so that the load two steps on finds them on its
 * way (measured: docs/performance-notes.md, A lone row's walk). Rows walked
 * side by side reuse a tree's nodes from L1, and the prefetches only cost them
 * instructions.
 *
 * Sixteen rows side by side after their top (lower_tops) are sixteen chains of steps,
 * a step a load of the record, a shift, a compare with the key in the tile and an adc:
 * with the two bases and two temporaries they want more than x86's 15 registers, and
 * LLVM keeps 5 or 6 on the stack. Every way of saving those spills cost more than they
 * do: the steps of lanes 0-7 then of 8-15 (fewer chains in flight), two chains to a
 * register, LLVM's other schedulers and allocators. Nor did the shift's removal pay
 * that way: keys in i64 tiles compared whole took twice the lines, and a record read as
 * two i32 took one load more (measured: docs/performance-notes.md, Where a core's time
 * goes, and Sixteen chains of steps). What did pay is the sparse layout's word copy
 * (RepLayout.child_word), whose word is the offset itself: a step of four instructions,
 * its record's register the next slot (docs/performance-notes.md, Words that are offsets).
 */
static void lower_node_walks(Lowering *l, uint32_t id)
{
	const LRepresentation *rep = l->rep;
	const MInst *walk = &l->m->insts[id];
	uint32_t node[MIR_MAX_INTERLEAVE], tree[MIR_MAX_INTERLEAVE], most = walk->peel, topped, nodes, stepped, shallowest;
	bool whole = true, together; /* every lane's walk is its peeled steps (MInst.exact); lanes' loops run together */
	uint32_t peel[MIR_MAX_INTERLEAVE], safe[MIR_MAX_INTERLEAVE];
	bool exact[MIR_MAX_INTERLEAVE];
	RepRow row[MIR_MAX_INTERLEAVE];
	RepNode fields;
	bool ahead = rep->prefetch_below && !l->gpu.on && lower_walks_lone_row(l);

	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		row[r] = lower_walk_row(l, walk, r);
		/* A walk of keys finds its tree in the key copy of the nodes: the tree's handle again, from its number. */
		l->layout.walk_keys = row[r].type == LTYPE_I64 || row[r].type == LTYPE_I32; /* alike in every lane */
		tree[r] = !l->layout.walk_keys ? l->value[lane_slot(walk->a, r)]
		                               : rep->tree(&l->layout, &l->b, l->tree_index[lane_slot(walk->a, r)], lower_trees_side_by_side(l));
		node[r] = r && !l->scope.lanes_are_trees ? node[0] : rep->root(&l->layout, &l->b, tree[r]);
		peel[r] = walk->peel;
		safe[r] = walk->peel_safe;
		exact[r] = walk->exact;
		specialize_walk(l, l->tree_index[lane_slot(walk->a, r)], &peel[r], &safe[r], &exact[r]);
		most = peel[r] > most ? peel[r] : most;
		whole = whole && exact[r];
	}
	if (l->block.next != LIR_NONE && l->scope.lanes == TOP_LANES && !l->scope.lanes_are_trees && l->scope.lane_step == 1)
		prefetch_next_rows(l, walk);
	/* A top that takes every step may take the leaves too; else peeled steps: no test. The first `safe` start on splits;
	 * later ones may start on a leaf and stay there. */
	topped = lower_tops(l, walk, row, safe, whole ? most : UINT32_MAX, &nodes);
	if (whole && topped >= most && take_top_leaves(l, id, tree[0], topped, nodes)) {
		l->layout.walk_keys = false;
		return;
	}
	for (uint32_t r = 0; r < l->scope.lanes && topped; r++)
		node[r] = lir_cast(&l->b, LCAST_ZEXT, LTYPE_I64, emit2(l, LOP_LOAD, LTYPE_I32, nodes, const_i64(l, r)));
	for (uint32_t i = topped; i < most; i++) {
		for (uint32_t r = 0; r < l->scope.lanes; r++) {
			if (i >= peel[r])
				continue;
			l->layout.step_level = (int32_t)i;
			fields = rep->load_node(&l->layout, &l->b, tree[r], node[r]);
			if (ahead && i >= 1 && i + 2 <= peel[r]) {
				l->layout.leaf_level = leaf_level(l, peel[r], safe[r], exact[r]);
				rep->prefetch_below(&l->layout, &l->b, tree[r], node[r], exact[r] && i + 2 == peel[r]);
			}
			node[r] = lower_step(l, tree[r], node[r], &row[r], &fields, i >= safe[r]);
		}
	}
	/*
	 * Where no lane peels past its first possible leaf, the loops carry the rest of every
	 * walk: a row's trees run them together. Where lanes peel past their leaves (which
	 * stay), most walks end peeled, and a loop a lane costs them one test (measured:
	 * docs/performance-notes.md, A row's trees finished together). Rows side by side
	 * finish together where the forest's leaf depths say it pays (cost_finish_together).
	 */
	together = l->scope.lanes > 1 && !whole;
	if (together && l->scope.lanes_are_trees) {
		for (uint32_t r = 0; r < l->scope.lanes; r++)
			together = together && peel[r] <= safe[r];
	} else if (together) {
		if (l->finish_lanes != l->scope.lanes || l->finish_peel != most) { /* (walks lowered again ask again) */
			l->finish_lanes = l->scope.lanes;
			l->finish_peel = most;
			l->finish_together = cost_finish_together(l->f, most, l->scope.lanes);
			hir_leaf_depth_range(l->f, &shallowest, &l->deepest_leaf);
		}
		together = l->finish_together;
	}
	l->layout.step_level = -1;
	stepped = most;
	for (uint32_t r = 0; r < l->scope.lanes; r++)
		stepped = !exact[r] && peel[r] < stepped ? peel[r] : stepped;
	if (together)
		finish_together(l, tree, node, row, exact, stepped);
	else
		finish_by_lanes(l, tree, node, row, exact);
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		l->layout.leaf_level = leaf_level(l, peel[r], safe[r], exact[r]);
		l->value[lane_slot(id, r)] = rep->leaf_value(&l->layout, &l->b, tree[r], node[r]);
	}
	l->layout.walk_keys = false;
	l->layout.leaf_level = -1;
}

/*
 * walk: the representation's whole walks (code); its walks of a block of trees (the
 * lanes are consecutive trees of one row) or of a tree by leaf masks (the lanes are rows
 * sharing a tile of keys), where they apply, and node by node elsewhere; or node by node.
 */
void lower_walk(Lowering *l, uint32_t id)
{
	const LRepresentation *rep = l->rep;
	const MInst *walk = &l->m->insts[id];
	uint32_t lanes = l->scope.lanes, first, applies = LIR_NONE, tile = LIR_NONE, cells[MIR_MAX_INTERLEAVE],
	         values[MIR_MAX_INTERLEAVE], branch;
	RepRow row;

	l->top_leaves[id].nodes = LIR_NONE; /* (the walk may be lowered again, in another version of its loop) */
	if (rep->walk) {
		lower_code_walk(l, id);
		return;
	}
	l->lanes_value[id] = LIR_NONE;
	if (rep->walk_bins && lower_bins_walk(l, id))
		return;
	first = l->tree_index[lane_slot(walk->a, 0)];
	if (rep->walk_trees && l->scope.lanes_are_trees && lanes > 1 && l->scope.lane_step == 1) {
		applies = rep->trees_apply(&l->layout, &l->b, first, lanes);
		if (applies != LIR_NONE && l->scope.masked != LIR_NONE) /* a block of trees has no masked lanes */
			applies = emit2(l, LOP_AND, LTYPE_I1, applies, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, l->scope.masked, const_i64(l, 0)));
	} else if (rep->walk_tile) {
		applies = lower_tile_applies(l, walk, &tile);
	}
	if (applies == LIR_NONE) {
		lower_node_walks(l, id);
		return;
	}
	if (tile != LIR_NONE && l->b.fn->insts[applies].op == LOP_CONST) { /* every tree: no walk node by node */
		l->lanes_value[id] = lower_tile_walk(l, id, tile, &l->value[lane_slot(id, 0)]);
		return;
	}
	for (uint32_t r = 0; r < lanes; r++)
		cells[r] = lir_emit(&l->b, LOP_VAR, l->layout.leaf_type, lir_const_float(&l->b, l->layout.leaf_type, 0.0), LIR_NONE, LIR_NONE);
	branch = lir_begin(&l->b, LOP_IF, applies, LIR_NONE, LIR_NONE);
	row = lower_walk_row(l, walk, 0);
	if (tile != LIR_NONE)
		lower_tile_walk(l, id, tile, values);
	else
		rep->walk_trees(&l->layout, &l->b, first, lanes, &row, values);
	for (uint32_t r = 0; r < lanes; r++)
		emit2(l, LOP_SET, LTYPE_VOID, cells[r], values[r]);
	lir_else(&l->b, branch);
	lower_node_walks(l, id);
	for (uint32_t r = 0; r < lanes; r++)
		emit2(l, LOP_SET, LTYPE_VOID, cells[r], l->value[lane_slot(id, r)]);
	lir_end(&l->b);
	for (uint32_t r = 0; r < lanes; r++)
		l->value[lane_slot(id, r)] = lir_emit(&l->b, LOP_GET, l->layout.leaf_type, cells[r], LIR_NONE, LIR_NONE);
}
