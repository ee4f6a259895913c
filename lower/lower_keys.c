/*
 * ifComplete (MOP_IF_COMPLETE): the scan of a block's rows for missing values, the keys
 * it makes of them (rep.h) and their tiles for the tops (lower/lower_tops.c), the copy
 * of rows with NaN read as 0, and the body lowered once or twice (with and without
 * missing-value tests). With the questions the module driver asks about them.
 */
#include "lower/cost.h"
#include "lower/lowering.h"

#include <string.h>

/* The type of the keys ifComplete inst makes of its float rows (mir_plan_blocks), LTYPE_VOID where it makes none. */
static LType key_type(const MInst *inst)
{
	return !(inst->block & MBLOCK_KEYS) ? LTYPE_VOID : inst->block & MBLOCK_WHOLE ? LTYPE_I64 : LTYPE_I32;
}

/* An ifComplete that makes keys; one that makes them for one row. */
bool lower_makes_keys(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_IF_COMPLETE && (inst->block & MBLOCK_KEYS);
}
bool lower_makes_lone_keys(const MModule *m, const MInst *inst) { return lower_makes_keys(m, inst) && inst->span == 1; }

/* An ifComplete whose walks may take their tops at once (lower_tops), as far as its block decides. */
bool lower_takes_tops(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_IF_COMPLETE && (inst->block & MBLOCK_TOPS);
}

/* An ifComplete whose walks prefetch the rows of the next block (prefetch_next_rows). */
bool lower_keys_block(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_IF_COMPLETE && (inst->block & MBLOCK_NEXT);
}

/*
 * Where the cell `any` says some value of the rows' elements [first, end) is NaN, copy
 * them with NaN read as 0 (RepLayout.nan_reads_zero). The walks inside then read
 * l->block.zero_rows, indexed as the rows: the copy where it was made, the rows otherwise.
 */
static void zero_missing_rows(Lowering *l, const MInst *inst, uint32_t first, uint32_t end, uint32_t any)
{
	LType t = l->row_type;
	uint32_t copy = lower_rows_array(l, t, inst->span, l->f->num_features, LSPACE_PRIVATE), at, x, nan, moved;
	lir_begin(&l->b, LOP_IF, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), LIR_NONE, LIR_NONE);
	at = lir_begin(&l->b, LOP_FOR, first, end, const_i64(l, 1));
	x = emit2(l, LOP_LOAD, t, l->rows, at);
	nan = lir_cmp(&l->b, LOP_FCMP, LCMP_UNO, x, x);
	x = lir_emit(&l->b, LOP_SELECT, t, nan, lir_const_float(&l->b, t, 0.0), x);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, copy, emit2(l, LOP_SUB, LTYPE_I64, at, first), x);
	lir_end(&l->b);
	lir_end(&l->b);
	moved = lir_index(&l->b, copy, emit2(l, LOP_SUB, LTYPE_I64, const_i64(l, 0), first), t);
	l->block.zero_rows = lir_emit(&l->b, LOP_SELECT, LTYPE_PTR, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), moved, l->rows);
}

/* The key (i32) of element `at` from `from`, in l->block.key_rows. */
static uint32_t row_key_at(Lowering *l, uint32_t from, uint32_t at)
{
	uint32_t key = emit2(l, LOP_LOAD, l->block.key_type, from, at);
	return l->block.key_type == LTYPE_I64 ? rep_high_key(&l->b, key) : key;
}

/*
 * The keys of features [f0, f0 + TOP_LANES) (f0 i64) of a full tile's rows, whose keys
 * row by row start at `from`, into their tile at `to`: a vector of each row's keys
 * (their high halves where the keys are i64), transposed by four rounds of zips, each
 * pairing vector i with vector i + 8 (the rows' keys then lie by feature), and a vector
 * stored per feature.
 */
static void transpose_keys(Lowering *l, uint32_t from, uint32_t to, uint32_t f0)
{
	uint32_t v[TOP_LANES], w[TOP_LANES], shift = LIR_NONE;
	if (l->block.key_type == LTYPE_I64) {
		shift = lir_emit_vector(&l->b, LOP_CONST, LTYPE_I64, TOP_LANES, LIR_NONE, LIR_NONE, LIR_NONE);
		l->b.fn->insts[shift].imm = 32;
	}
	for (int64_t r = 0; r < TOP_LANES; r++) {
		uint32_t at = emit2(l, LOP_ADD, LTYPE_I64, f0, const_i64(l, r * l->layout.key_columns));
		v[r] = lir_emit_vector(&l->b, LOP_LOAD, l->block.key_type, TOP_LANES, from, at, LIR_NONE);
		if (shift != LIR_NONE) {
			v[r] = lir_emit_vector(&l->b, LOP_ASHR, LTYPE_I64, TOP_LANES, v[r], shift, LIR_NONE);
			v[r] = lir_cast(&l->b, LCAST_TRUNC, LTYPE_I32, v[r]);
		}
	}
	for (int k = 0; k < 4; k++) { /* log2(TOP_LANES) rounds */
		for (int i = 0; i < TOP_LANES / 2; i++) {
			w[2 * i] = lir_emit_vector(&l->b, LOP_ZIP, LTYPE_I32, TOP_LANES, v[i], v[i + TOP_LANES / 2], LIR_NONE);
			w[2 * i + 1] = lir_emit_vector(&l->b, LOP_ZIP, LTYPE_I32, TOP_LANES, v[i], v[i + TOP_LANES / 2], LIR_NONE);
			l->b.fn->insts[w[2 * i + 1]].sub = 1;
		}
		memcpy(v, w, sizeof v);
	}
	for (int64_t j = 0; j < TOP_LANES; j++) {
		uint32_t at = emit2(l, LOP_ADD, LTYPE_I64, f0, const_i64(l, j));
		at = emit2(l, LOP_MUL, LTYPE_I64, at, const_i64(l, TOP_LANES));
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, at, v[j]);
	}
}

/*
 * After the scan of a block of `rows` rows (keys row by row in l->block.key_rows): the keys
 * into `tiles` (RepLayout.key_lanes), TOP_LANES rows a tile, feature by feature, so that
 * the stores are consecutive (stored row by row in the scan, a row's keys were a line
 * apart each, and syn-year's scan took longer than its walks gained). A tile's rows are
 * a count LLVM does not know, the last tile's being fewer: it vectorises their loop,
 * where it unrolled a loop of 16 into a load and a store per key. Vectorised so, a key
 * still took a load and an insert, half the scan; where the tops take 512-bit vectors,
 * a full tile's features go 16 at a time by a transpose in registers (transpose_keys),
 * its region wide (LIR_IF_WIDE: split into 256-bit halves, the shuffles cost more than
 * the loads they saved). The rest go key by key (measured: docs/performance-notes.md,
 * Keys into tiles).
 */
static void tile_keys(Lowering *l, uint32_t rows, uint32_t tiles)
{
	int64_t width = l->layout.key_columns, transposed = width / TOP_LANES * TOP_LANES;
	uint32_t zero = const_i64(l, 0), one = const_i64(l, 1), lanes = const_i64(l, TOP_LANES), features = const_i64(l, width);
	uint32_t count, tile, from, to, f, r, at, key, first, rest = zero;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	count = emit2(l, LOP_ADD, LTYPE_I64, rows, const_i64(l, TOP_LANES - 1));
	count = emit2(l, LOP_SDIV, LTYPE_I64, count, lanes);
	tile = lir_begin(&l->b, LOP_FOR, zero, count, one);
	at = emit2(l, LOP_MUL, LTYPE_I64, tile, const_i64(l, TOP_LANES * width));
	first = emit2(l, LOP_MUL, LTYPE_I64, tile, lanes);
	count = emit2(l, LOP_SUB, LTYPE_I64, rows, first);
	count = emit2(l, LOP_MIN, LTYPE_I64, count, lanes); /* the tile's rows (a count LLVM does not know: it vectorises the loop) */
	from = lir_index(&l->b, l->block.key_rows, at, l->block.key_type);
	to = lir_index(&l->b, tiles, at, LTYPE_I32);
	if (l->m->vector_tops == MTOPS_WIDE && transposed) { /* a full tile's first features by blocks of 16 x 16, in registers */
		uint32_t full = lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, count, lanes);
		rest = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, full, const_i64(l, transposed), zero);
		uint32_t branch = lir_begin(&l->b, LOP_IF, full, LIR_NONE, LIR_NONE);
		l->b.fn->insts[branch].imm = LIR_IF_WIDE;
		f = lir_begin(&l->b, LOP_FOR, zero, const_i64(l, transposed), lanes);
		transpose_keys(l, from, to, f);
		lir_end(&l->b);
		lir_end(&l->b);
	}
	f = lir_begin(&l->b, LOP_FOR, rest, features, one);
	from = lir_index(&l->b, from, f, l->block.key_type);
	to = lir_index(&l->b, to, emit2(l, LOP_MUL, LTYPE_I64, f, lanes), LTYPE_I32);
	r = lir_begin(&l->b, LOP_FOR, zero, count, one);
	key = row_key_at(l, from, emit2(l, LOP_MUL, LTYPE_I64, r, features));
	if (l->layout.signed_tiles) /* (AVX2's: its tiles take this loop alone) */
		key = emit2(l, LOP_ADD, LTYPE_I32, key, lir_const_int(&l->b, LTYPE_I32, (int32_t)REP_KEY_BIAS));
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, r, key);
	lir_end(&l->b);
	lir_end(&l->b);
	lir_end(&l->b);
}

/*
 * The bins of the block's `rows` (i64) rows (RepLayout.byte_tops) from their tiles of
 * keys: feature by feature, a tile's TOP_LANES rows at a time (the representation's
 * bins_of), into BlockScope.bins in their order there, four rows at a time (an i32).
 */
static uint32_t make_bins(Lowering *l, uint32_t rows, uint32_t tiles, int64_t tile_rows)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	static const int64_t orders[2][4] = {{0, 16, 4, 20}, {0, 4, 8, 12}}; /* a tile's rows 4i to 4i + 3 in its half of 32 rows' bins */
	const int64_t *fours = orders[l->layout.bins_in_order];
	int64_t group = BYTE_TOP_LANES * (int64_t)l->f->num_features, groups = (tile_rows + BYTE_TOP_LANES - 1) / BYTE_TOP_LANES;
	uint32_t bins = lir_local_array(&l->b, LTYPE_I8, groups * group, LSPACE_PRIVATE), zero = const_i64(l, 0),
	         one = const_i64(l, 1), words = lir_local_array(&l->b, LTYPE_I32, 4, LSPACE_PRIVATE), count, tile, f, at, keys, to, x;
	l->b.fn->insts[bins].lanes = BYTE_TOP_LANES;
	count = emit2(l, LOP_ADD, LTYPE_I64, rows, const_i64(l, TOP_LANES - 1));
	count = emit2(l, LOP_SDIV, LTYPE_I64, count, const_i64(l, TOP_LANES));
	tile = lir_begin(&l->b, LOP_FOR, zero, count, one);
	f = lir_begin(&l->b, LOP_FOR, zero, const_i64(l, l->f->num_features), one);
	at = emit2(l, LOP_MUL, LTYPE_I64, tile, const_i64(l, TOP_LANES * (int64_t)l->layout.key_columns));
	at = emit2(l, LOP_ADD, LTYPE_I64, at, emit2(l, LOP_MUL, LTYPE_I64, f, const_i64(l, TOP_LANES)));
	keys = lir_emit_vector(&l->b, LOP_LOAD, LTYPE_I32, TOP_LANES, tiles, at, LIR_NONE);
	x = lir_cast(&l->b, LCAST_BITCAST, LTYPE_I32, l->rep->bins_of(&l->layout, &l->b, f, keys));
	l->b.fn->insts[x].lanes = 4;
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, words, zero, x);
	to = emit2(l, LOP_MUL, LTYPE_I64, f, const_i64(l, BYTE_TOP_LANES)); /* f's bins in the tile's pair's group, its half */
	at = emit2(l, LOP_ASHR, LTYPE_I64, tile, one);
	to = emit2(l, LOP_ADD, LTYPE_I64, to, emit2(l, LOP_MUL, LTYPE_I64, at, const_i64(l, group)));
	at = emit2(l, LOP_AND, LTYPE_I64, tile, one);
	to = emit2(l, LOP_ADD, LTYPE_I64, to, emit2(l, LOP_MUL, LTYPE_I64, at, const_i64(l, l->layout.bins_in_order ? 16 : 8)));
	for (int i = 0; i < 4; i++) {
		x = emit2(l, LOP_LOAD, LTYPE_I32, words, const_i64(l, i));
		at = emit2(l, LOP_ADD, LTYPE_I64, to, const_i64(l, fours[i]));
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, lir_index(&l->b, bins, at, LTYPE_I8), zero, x);
	}
	lir_end(&l->b);
	lir_end(&l->b);
	return bins;
}

/*
 * The keys (row by row, l->block.key_rows) of the block's rows past its `rows` (i64) to a
 * multiple of `lanes`: its first row's, so that the last lanes of rows side by side past
 * the rows walk like a row of the block (BlockScope.key_padded), where they are enough
 * for it (cost_pad_rows). Yields the rows with them.
 */
static uint32_t pad_key_rows(Lowering *l, uint32_t rows, int64_t lanes)
{
	uint32_t zero = const_i64(l, 0), one = const_i64(l, 1), columns = const_i64(l, l->layout.key_columns), end, r, c, at, key,
	         left, pays;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	left = emit2(l, LOP_AND, LTYPE_I64, rows, const_i64(l, lanes - 1)); /* (lanes divides TOP_LANES; rows >= 0) */
	pays = lir_cmp(&l->b, LOP_ICMP, LCMP_SGE, left, const_i64(l, l->pad_rows));
	end = emit2(l, LOP_ADD, LTYPE_I64, rows, const_i64(l, lanes - 1));
	end = emit2(l, LOP_SDIV, LTYPE_I64, end, const_i64(l, lanes));
	end = emit2(l, LOP_MUL, LTYPE_I64, end, const_i64(l, lanes));
	end = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, pays, end, rows);
	r = lir_begin(&l->b, LOP_FOR, rows, end, one);
	c = lir_begin(&l->b, LOP_FOR, zero, columns, one);
	key = emit2(l, LOP_LOAD, l->block.key_type, l->block.key_rows, c);
	at = emit2(l, LOP_MUL, LTYPE_I64, r, columns);
	at = emit2(l, LOP_ADD, LTYPE_I64, at, c);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.key_rows, at, key);
	lir_end(&l->b);
	lir_end(&l->b);
	return end;
}

bool lower_caches_trees(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_FOR && (inst->loop & MLOOP_TREES) && (inst->loop & MLOOP_CACHE);
}

/*
 * ifComplete: scan the rows it names for a missing value (NaN, and values within
 * HIR_ZERO_THRESHOLD of zero where some split counts them missing), then lower its body
 * twice: walks without missing-value tests where none is, the usual ones otherwise.
 * Where the compares decide missing values (RepLayout.missing_by_compare) the walks are
 * the same either way, and a lone row's gain nothing from the second copy: the body is
 * lowered once, after a scan that only makes keys.
 * Where NaN reads as 0 (RepLayout.nan_reads_zero) the body is lowered once too, after a
 * scan that makes keys (NaN's is 0's) and, where it finds a NaN, a copy of the rows.
 * So is a GPU thread's row where the block's threads take a row each together
 * (GpuScope.alike) around a cached tree loop: the block meets inside, which a branch on
 * the row would split.
 */
void lower_if_complete(Lowering *l, const MInst *inst)
{
	LType t = l->row_type;
	bool zero = l->layout.missing_rules & (1u << REP_MISSING_ZERO_RIGHT | 1u << REP_MISSING_ZERO_LEFT);
	uint32_t first = inst->row.num_terms ? lower_index(l, &inst->row, 0) : const_i64(l, 0), end = l->rows_end, width,
	         any = LIR_NONE, at, x, missing, branch, end_row, row = LIR_NONE, k = LIR_NONE;
	/* Keys of float rows, where the layout has a key copy and they fit on the stack (wider rows' walks read floats). */
	LType key = l->layout.keys && t == LTYPE_F32 ? key_type(inst) : LTYPE_VOID;
	/*
	 * Keys in tiles (RepLayout.key_lanes) for the tops of walks of TOP_LANES rows, and for
	 * the walks themselves where the key copy's words are for tiles (tile_words), but for
	 * a lone row's that reads its copy in blocks. The scan makes keys row by row, then
	 * tiles them. Where the tiles would not fit the stack, the walks take no tops, and
	 * those that read tiles read the rows instead.
	 */
	int64_t tile_rows = cost_tiled_rows(inst->span); /* (whether they fit: MBLOCK_TILES) */
	bool tiled = key != LTYPE_VOID && l->layout.tile_words && !(inst->span == 1 && l->layout.blocks);
	bool tops = key != LTYPE_VOID && (inst->block & MBLOCK_TOPS) && l->layout.top_levels >= 2;
	bool masks = key != LTYPE_VOID && (inst->block & MBLOCK_TOPS) && l->layout.leaf_masks; /* (lower_tile_walk) */
	if (tiled)
		key = inst->block & MBLOCK_TILES ? LTYPE_I32 : LTYPE_VOID;
	bool outer = l->complete, keys = key != LTYPE_VOID;
	/*
	 * The walks are the same either way (their keys' columns decide NaN too); or a lone
	 * row's on the host, as fast with the missing-value tests as without, but where splits
	 * test category sets: there a step's tests of NaN's key for the set and the threshold
	 * are a third of it, and a row without NaN walks a fifth faster without them (measured:
	 * docs/performance-notes.md, Lone rows of category forests).
	 */
	bool sets = l->layout.compares & 1u << HCMP_IN; /* splits test category sets */
	bool once = l->layout.missing_by_compare || l->layout.nan_reads_zero || (keys && l->layout.nan_columns) ||
	            (inst->span == 1 && !l->gpu.on && !sets) ||
	            (l->gpu.alike && mir_some(l->m, inst->body, lower_caches_trees));
	bool zero_rows = l->layout.nan_reads_zero && l->row_cache == LIR_NONE; /* (a row cache around made NaN 0 already) */
	bool scan_any = !once || zero_rows;
	/* Where rows walk side by side, their last lanes past the rows read the block's first row's keys (lower_lanes_run). */
	int64_t lanes = key != LTYPE_VOID && !l->gpu.on && inst->span > 1 ? lower_rows_lanes(l, inst->body) : 1;
	bool padded = lanes > 1;
	uint32_t first_row = first, tiles = LIR_NONE;
	BlockScope outer_block = l->block;
	bool outer_one_row = l->layout.one_row, one_row, columns;
	if (inst->span != MIR_ROWS_ALL) {
		l->block.first = first;
		l->block.span = inst->span;
		l->block.next = LIR_NONE;
	}
	if (key != LTYPE_VOID && (inst->block & MBLOCK_NEXT)) {
		/* the block of the thread's next iteration of the loop over blocks, or the one after this */
		bool loop = l->loop_stride != LIR_NONE && l->loop_rows == inst->span;
		l->block.next = emit2(l, LOP_ADD, LTYPE_I64, first, loop ? l->loop_stride : const_i64(l, inst->span));
	}
	if (l->rep->one_version) {
		lower_list(l, inst->body);
		l->block = outer_block;
		return;
	}
	if (keys || scan_any) {
		if (inst->span != MIR_ROWS_ALL)
			end = emit2(l, LOP_MIN, LTYPE_I64, emit2(l, LOP_ADD, LTYPE_I64, first, const_i64(l, inst->span)), l->rows_end);
		/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
		width = const_i64(l, l->f->num_features);
		if (scan_any)
			any = lir_emit(&l->b, LOP_VAR, LTYPE_I1, lir_const_int(&l->b, LTYPE_I1, 0), LIR_NONE, LIR_NONE);
		if (keys) { /* the rows' keys, which the scan writes, for the walks */
			l->layout.one_row = inst->span == 1;
			l->block.key_rows = lower_rows_array(l, key, (inst->span + lanes - 1) / lanes * lanes, l->layout.key_columns,
			                                     LSPACE_PRIVATE);
			l->block.key_first = first_row;
			l->block.key_index = &inst->row;
			l->block.key_type = key;
			l->block.key_tiled = false;
			l->block.key_padded = padded;
			l->block.key_tiles = l->block.mask_tiles = l->block.top_nodes = l->block.bins = LIR_NONE;
		}
		if (keys && (tiled || tops || masks)) {
			tiles = lir_local_array(&l->b, LTYPE_I32, tile_rows * l->layout.key_columns, LSPACE_PRIVATE);
			/*
			 * Vectors of tiles and tops start a cache line: at LLVM's 16 bytes the stack's place
			 * decided it, which Linux shifts by a multiple of 16 bytes from run to run, and a
			 * top's 64 bytes were stored and read across two lines in three runs of four
			 * (measured: docs/performance-notes.md, Aligned tiles and tops).
			 */
			l->b.fn->insts[tiles].lanes = TOP_LANES;
		}
		if (tops) {
			l->block.top_nodes = lir_local_array(&l->b, LTYPE_I32, TOP_SLOTS * tile_rows, LSPACE_PRIVATE);
			l->b.fn->insts[l->block.top_nodes].lanes = TOP_LANES;
			l->block.top_tags = lir_local_array(&l->b, LTYPE_I64, TOP_SLOTS * tile_rows / TOP_LANES, LSPACE_PRIVATE);
		}
		end_row = end;
		first = emit2(l, LOP_MUL, LTYPE_I64, first, width);
		end = emit2(l, LOP_MUL, LTYPE_I64, end, width);
		/*
		 * A block of one row on the host, where it has its row: a loop of a count LLVM knows,
		 * vectorised whole (measured: docs/performance-notes.md, A block of one row). Where
		 * the keys have columns of keys less one (RepLayout.nan_columns), a loop over the
		 * rows around one over their features, each key stored twice.
		 */
		one_row = inst->span == 1 && !l->gpu.on;
		columns = keys && l->layout.nan_columns;
		if (one_row) {
			lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, first, end), LIR_NONE, LIR_NONE);
		} else if (columns) { /* (the row within the block) */
			uint32_t rows = emit2(l, LOP_SUB, LTYPE_I64, end_row, first_row), from = const_i64(l, 0);
			row = lir_begin(&l->b, LOP_FOR, from, rows, const_i64(l, 1));
		}
		if (one_row || columns) {
			uint32_t from = first;
			if (row != LIR_NONE) { /* (one instruction a statement) */
				from = emit2(l, LOP_MUL, LTYPE_I64, row, width);
				from = emit2(l, LOP_ADD, LTYPE_I64, first, from);
			}
			k = const_i64(l, 0);
			k = lir_begin(&l->b, LOP_FOR, k, width, const_i64(l, 1));
			at = emit2(l, LOP_ADD, LTYPE_I64, from, k);
		} else {
			at = lir_begin(&l->b, LOP_FOR, first, end, const_i64(l, 1));
		}
		x = emit2(l, LOP_LOAD, t, l->rows, at);
		missing = lir_cmp(&l->b, LOP_FCMP, LCMP_UNO, x, x);
		if (keys) {
			uint32_t bits = emit2(l, LOP_LOAD, LTYPE_I32, l->rows, at);
			uint32_t row_key = rep_emit_row_key(&l->layout, &l->b, key, bits, missing), to;
			if (columns && row == LIR_NONE) { /* the row's keys, then its keys less one (NaN's wrapping to the greatest) */
				to = k;
			} else if (columns) {
				to = emit2(l, LOP_MUL, LTYPE_I64, row, const_i64(l, l->layout.key_columns));
				to = emit2(l, LOP_ADD, LTYPE_I64, to, k);
			} else {
				to = emit2(l, LOP_SUB, LTYPE_I64, at, first);
			}
			lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.key_rows, to, row_key);
			if (columns) {
				uint32_t one = lir_const_int(&l->b, key, key == LTYPE_I64 ? INT64_C(1) << 32 : 1), less;
				to = emit2(l, LOP_ADD, LTYPE_I64, to, width);
				less = emit2(l, LOP_SUB, key, row_key, one);
				lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.key_rows, to, less);
			}
		}
		if (zero) {
			uint32_t up = lir_cmp(&l->b, LOP_FCMP, LCMP_OLE, x, lir_const_float(&l->b, t, HIR_ZERO_THRESHOLD));
			uint32_t down = lir_cmp(&l->b, LOP_FCMP, LCMP_OGE, x, lir_const_float(&l->b, t, -HIR_ZERO_THRESHOLD));
			missing = emit2(l, LOP_OR, LTYPE_I1, missing, emit2(l, LOP_AND, LTYPE_I1, up, down));
		}
		if (scan_any)
			emit2(l, LOP_SET, LTYPE_VOID, any, emit2(l, LOP_OR, LTYPE_I1, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), missing));
		lir_end(&l->b);
		if (one_row || columns)
			lir_end(&l->b);
		if (keys && l->layout.category_keys)
			lower_category_keys(l, first, end);
		uint32_t rows = padded || tiles != LIR_NONE ? emit2(l, LOP_SUB, LTYPE_I64, end_row, first_row) : LIR_NONE;
		if (padded)
			rows = pad_key_rows(l, rows, lanes);
		if (tiles != LIR_NONE) {
			tile_keys(l, rows, tiles);
			l->block.key_tiles = tiles;
			if (tops && l->layout.byte_tops)
				l->block.bins = make_bins(l, rows, tiles, tile_rows);
			if (masks && (l->layout.signed_masks || (l->layout.mask_nan_keys && !l->layout.nan_columns)))
				l->block.mask_tiles = lower_mask_tiles(l, rows, tiles, tile_rows); /* (nan_columns: in the tiles) */
		}
		if (keys && tiled) {
			l->block.key_rows = tiles;
			l->block.key_type = LTYPE_I32;
			l->block.key_tiled = true;
		}
		if (tops) { /* no top taken yet */
			uint32_t none = const_i64(l, -1);
			at = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), const_i64(l, TOP_SLOTS * tile_rows / TOP_LANES), const_i64(l, 1));
			lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.top_tags, at, none);
			lir_end(&l->b);
		}
		if (zero_rows)
			zero_missing_rows(l, inst, first, end, any);
	}
	if (once) {
		l->walks_apart = true;
		lower_list(l, inst->body);
		l->walks_apart = false;
	} else {
		branch = lir_begin(&l->b, LOP_IF, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), LIR_NONE, LIR_NONE);
		l->b.fn->insts[branch].imm = LIR_IF_APART; /* the two versions are half the code each: they compile in parallel */
		lower_list(l, inst->body);
		lir_else(&l->b, branch);
		l->complete = true;
		lower_list(l, inst->body);
		l->complete = outer;
		lir_end(&l->b);
	}
	l->block = outer_block;
	l->layout.one_row = outer_one_row;
}
