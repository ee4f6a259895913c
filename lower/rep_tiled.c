/*
 * The tiled representation (Treebeard's tiles, ../shared/seeds/000_*.txt §4-§6): a walk
 * step evaluates a whole tile of the forest's tiling (hir_tile_trees) — up to L splits,
 * L the tile size — with one vector compare, and a lookup table of tile shapes turns the
 * compare's bits into the exit the row leaves the tile by. An untiled forest walks
 * tiles of one split (L = 1).
 *
 * Records live in one i32 buffer, each tree's in breadth-first order from its root; a
 * node is the i32 element where its record starts, relative to its tree's first (the
 * root is 0). A tile's record:
 *
 *   word       shape (bits 0-15: its row of the table) | nan_left << 16   (never negative)
 *   masks      lt | eq << 8 | nonzero << 16 | zero << 24
 *   thresholds L values (f32, or f64 where thresholds or leaves are double)
 *   features   L i32
 *   children   L + 1 i32: the node each exit leads to
 *
 * and a leaf's: word -1, then its value (after 4 more bytes for an f64). Lanes past a
 * tile's splits test feature 0 against 0, and the table ignores their bits.
 *
 * A step gathers the row's L features, compares them with the thresholds and makes an
 * L-bit mask c, bit i set when `x compare t` holds at lane i. The compare is one `<`
 * (or one `<=`) where the forest's splits all test < or >= (<= or >): a lane testing
 * the opposite is inverted in the shape's table. Forests that mix kinds compute `<` and
 * `==` and combine them with the per-lane masks lt and eq. The row goes left at lane i
 * when c_i differs from the shape's inversion bit; a missing x (NaN, which fails every
 * ordered compare, and zero where the lane's rule is LightGBM's zero) sets bit i to
 * nan_left_i, the bit that sends it where the split's default says. The exit is then
 * table[shape << L | c], and the next node children[exit].
 *
 * Category splits (IN) are not tiled: such forests take another representation.
 *
 * The array flavour (`tiled_array`, Treebeard's array layout of tiles) stores no
 * children: each tree is a complete (n+1)-ary tree of records in level order, n the
 * tile size, so exit e of the record in slot i leads to slot (n+1)i + 1 + e, and every
 * record — tile, leaf or unused — takes the same R elements (word, masks, thresholds,
 * features). A node is a slot number. A step saves the load of the child (a link in
 * the walk's chain of dependent loads) and pays room for trees that are not complete:
 * a tree d tiles deep takes ((n+1)^(d+1) - 1) / n slots.
 */
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

/* i32 elements before a tile's thresholds: its word and masks. */
#define HEAD 2

typedef struct TiledState {
	uint32_t node_buffer, offset_buffer, table_buffer;
	uint32_t nodes, offsets, table; /* their addresses in the function being built */
	uint32_t lanes;                 /* L */
	uint32_t record;                /* i32 elements of a tile's record */
	uint32_t features_at, children_at; /* where a record's features and children start (i32 elements) */
	uint8_t mode;                   /* how c is computed (Mode) */
	bool array;                     /* the array flavour: children computed, records of one size */
	uint32_t arity;                 /* a tile's exits at most (tile size + 1); array: slot i's children from arity * i + 1 */
} TiledState;

/* Slots of one tree in the array flavour, at most: deeper trees are refused. */
#define ARRAY_MAX_SLOTS (1u << 20)

/* How a step computes c: one compare for all lanes, or < and == combined by the lanes' masks. */
typedef enum Mode { MODE_LT, MODE_LE, MODE_MIXED } Mode;

/* The shapes met so far: key (structure | inversion << 16) -> row of the table, by open addressing. */
typedef struct Shapes {
	uint32_t *keys, *rows, cap, count;
	uint8_t *table; /* count rows of 2^L exits */
	size_t table_cap;
} Shapes;

/*
 * One tile being laid out: its splits in level order (members), and for each member's
 * two sides (left, right) the member it leads to, or -1 - exit.
 */
typedef struct Tile {
	uint32_t count, members[HIR_MAX_TILE];
	int32_t next[HIR_MAX_TILE][2];
	uint32_t exits;                 /* count + 1 */
	uint32_t exit_node[HIR_MAX_TILE + 1]; /* the node id each exit leads to */
} Tile;

/* The splits of the tile rooted at `root` (at most lanes) and where each side leads. */
static void gather_tile(const HForest *f, const HNode *nodes, uint32_t root, uint32_t lanes, Tile *tile)
{
	tile->count = 1;
	tile->members[0] = root;
	tile->exits = 0;
	for (uint32_t i = 0; i < tile->count; i++) {
		const HNode *n = &nodes[tile->members[i]];
		uint32_t sides[2] = {n->left, n->right};
		for (int k = 0; k < 2; k++) {
			const HNode *c = &nodes[sides[k]];
			if (c->feature != HIR_LEAF && f->tile_size && !c->tile && tile->count < lanes) {
				tile->next[i][k] = (int32_t)tile->count;
				tile->members[tile->count++] = sides[k];
			} else {
				tile->next[i][k] = -1 - (int32_t)tile->exits;
				tile->exit_node[tile->exits++] = sides[k];
			}
		}
	}
}

/* The row of the table for tile's shape with lanes inverted as `invert` says; adds it where new. */
static uint32_t shape_row(Shapes *s, const Tile *tile, uint32_t invert, uint32_t lanes)
{
	uint32_t key = invert << 16, h;
	for (uint32_t i = 0; i < tile->count; i++)
		key |= (uint32_t)(tile->next[i][0] >= 0) << (2 * i) | (uint32_t)(tile->next[i][1] >= 0) << (2 * i + 1);
	if (2 * (s->count + 1) > s->cap) { /* rehash into twice the room */
		Shapes bigger = {.cap = s->cap ? 2 * s->cap : 64};
		bigger.keys = xmalloc(bigger.cap * sizeof *bigger.keys);
		bigger.rows = xmalloc(bigger.cap * sizeof *bigger.rows);
		memset(bigger.keys, 0xff, bigger.cap * sizeof *bigger.keys);
		for (uint32_t i = 0; i < s->cap; i++) {
			if (s->keys[i] == UINT32_MAX)
				continue;
			for (h = s->keys[i] * 2654435761u & (bigger.cap - 1); bigger.keys[h] != UINT32_MAX; h = (h + 1) & (bigger.cap - 1))
				;
			bigger.keys[h] = s->keys[i];
			bigger.rows[h] = s->rows[i];
		}
		free(s->keys);
		free(s->rows);
		s->keys = bigger.keys;
		s->rows = bigger.rows;
		s->cap = bigger.cap;
	}
	for (h = key * 2654435761u & (s->cap - 1); s->keys[h] != UINT32_MAX; h = (h + 1) & (s->cap - 1))
		if (s->keys[h] == key)
			return s->rows[h];
	s->keys[h] = key;
	s->rows[h] = s->count;
	GROW(s->table, ((size_t)s->count + 1) << lanes, s->table_cap);
	/* Follow the bits from the tile's root: lane i goes left when its bit differs from its inversion bit. */
	for (uint32_t c = 0; c < 1u << lanes; c++) {
		int32_t at = 0;
		while (at >= 0) {
			bool left = ((c ^ invert) >> at & 1) != 0;
			at = tile->next[at][left ? 0 : 1];
		}
		s->table[((size_t)s->count << lanes) + c] = (uint8_t)(-1 - at);
	}
	return s->count++;
}

/* Lane bits of split n's comparison: whether it reads < and ==, whether it is inverted (Mode). */
static void lane_kind(HCompare k, Mode mode, bool *lt, bool *eq, bool *invert)
{
	*lt = k == HCMP_LT || k == HCMP_LE || k == HCMP_GT || k == HCMP_GE;
	*eq = k == HCMP_LE || k == HCMP_GT || k == HCMP_EQ || k == HCMP_NE;
	switch (mode) {
	case MODE_LT: *invert = k == HCMP_GE; break;
	case MODE_LE: *invert = k == HCMP_GT; break;
	case MODE_MIXED: *invert = k == HCMP_GT || k == HCMP_GE || k == HCMP_NE; break;
	}
}

/* Write tile's record at rec; exit e leads to the node at child_at[e]. */
static void store_tile(const HForest *f, const HNode *nodes, const RepLayout *layout, const TiledState *st, Mode mode,
                       Shapes *shapes, const Tile *tile, int32_t *rec, const int32_t *child_at)
{
	uint32_t invert = 0, nan_left = 0, lt = 0, eq = 0, zero = 0, nonzero = (1u << st->lanes) - 1;
	void *thresholds = rec + HEAD;
	for (uint32_t i = 0; i < tile->count; i++) {
		const HNode *n = &nodes[tile->members[i]];
		bool l, q, inv;
		lane_kind((HCompare)n->compare, mode, &l, &q, &inv);
		lt |= (uint32_t)l << i;
		eq |= (uint32_t)q << i;
		invert |= (uint32_t)inv << i;
		nan_left |= (uint32_t)(n->default_left ^ inv) << i; /* the bit that reads as the default side */
		if (n->missing == HMISSING_ZERO) {
			zero |= 1u << i;
			nonzero &= ~(1u << i);
		}
		rep_store_value(thresholds, layout->threshold_type, i, rep_slot_value(layout, f, n));
		rec[st->features_at + i] = n->feature;
	}
	for (uint32_t e = 0; e < tile->exits && !st->array; e++)
		rec[st->children_at + e] = child_at[e];
	rec[0] = (int32_t)(shape_row(shapes, tile, invert, st->lanes) | nan_left << 16);
	rec[1] = (int32_t)(lt | eq << 8 | nonzero << 16 | zero << 24);
}

/* i32 elements of a leaf's record: its word, then its value (an f64 aligned to 8 bytes); the array flavour's slot size. */
static uint32_t leaf_record(const RepLayout *layout, const TiledState *st)
{
	return st->array ? st->record : layout->threshold_type == LTYPE_F64 ? 4 : 2;
}

/*
 * Lay tree t out at records (zeroed): breadth-first, each node's record where its
 * parent's names it (array: where its slot is). Returns the i32 elements the tree takes
 * (UINT64_MAX where an array tree would take more than ARRAY_MAX_SLOTS); with records
 * NULL, only counts them.
 */
static uint64_t store_tree(const HForest *f, uint32_t t, const RepLayout *layout, const TiledState *st, Mode mode,
                           Shapes *shapes, int32_t *records, uint32_t *queue, uint64_t *at)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint64_t end = nodes[0].feature == HIR_LEAF ? leaf_record(layout, st) : st->record;
	uint32_t head = 0, tail = 0;
	queue[tail] = 0;
	at[tail++] = 0;
	while (head < tail) {
		uint32_t id = queue[head];
		uint64_t slot = st->array ? at[head] / st->record : 0; /* array: records are slots */
		int32_t *rec = records ? records + at[head] : NULL, child_at[HIR_MAX_TILE + 1];
		Tile tile;
		head++;
		if (nodes[id].feature == HIR_LEAF) {
			if (rec) {
				rec[0] = -1;
				rep_store_value(rec, layout->threshold_type, 1, rep_slot_value(layout, f, &nodes[id]));
			}
			continue;
		}
		gather_tile(f, nodes, id, st->arity - 1, &tile);
		if (st->array && st->arity * slot + tile.exits >= ARRAY_MAX_SLOTS)
			return UINT64_MAX;
		for (uint32_t e = 0; e < tile.exits; e++) {
			queue[tail] = tile.exit_node[e];
			if (st->array) { /* child slots are computed, not stored */
				at[tail] = (st->arity * slot + 1 + e) * st->record;
				end = at[tail] + st->record > end ? at[tail] + st->record : end;
			} else {
				at[tail] = end;
				child_at[e] = (int32_t)end; /* the caller checked that the tree's elements fit */
				end += nodes[tile.exit_node[e]].feature == HIR_LEAF ? leaf_record(layout, st) : st->record;
			}
			tail++;
		}
		if (rec)
			store_tile(f, nodes, layout, st, mode, shapes, &tile, rec, child_at);
	}
	return end;
}

static bool lay_out(const HForest *f, LModule *m, RepLayout *layout, bool array, Error *e)
{
	const char *name = array ? "tiled_array" : "tiled";
	uint32_t lanes = 1, max_nodes = 1, *queue;
	uint64_t total, value_elements;
	int32_t *offsets, *records;
	uint64_t *at;
	Shapes shapes = {0};
	TiledState *s;
	Mode mode;

	/* Lanes: the tile size up to a power of two (vectors of 3 or 7 lanes are legalized slowly). */
	while (lanes < f->tile_size)
		lanes *= 2;
	if (!rep_lay_out_forest(f, m, name, layout, e))
		return false;
	rep_tests_missing(layout); /* a tile's step tests for missing values with a vector compare of its own */
	if (layout->compares & 1u << HCMP_IN) {
		rep_free_state(layout);
		return error_set(e, "%s representation: category splits (in) are not evaluated in tiles; use the array or "
		                    "sparse representation", name);
	}
	mode = !(layout->compares & ~(1u << HCMP_LT | 1u << HCMP_GE)) ? MODE_LT
	     : !(layout->compares & ~(1u << HCMP_LE | 1u << HCMP_GT)) ? MODE_LE : MODE_MIXED;
	s = xcalloc(1, sizeof *s);
	s->lanes = lanes;
	s->mode = (uint8_t)mode;
	s->array = array;
	s->arity = (f->tile_size ? f->tile_size : 1) + 1;
	value_elements = lanes * (layout->threshold_type == LTYPE_F64 ? 2 : 1);
	s->features_at = HEAD + (uint32_t)value_elements;
	s->children_at = s->features_at + lanes;
	/* even: f64 values stay 8-byte aligned */
	s->record = ((array ? s->children_at : s->children_at + lanes + 1) + 1) & ~1u;

	/* Element 0 holds a tile of lane tests of feature 0 whose exits all stay: leaves step from it (leaf_stays). */
	for (uint32_t t = 0; t < f->num_trees; t++)
		max_nodes = f->trees[t].num_nodes > max_nodes ? f->trees[t].num_nodes : max_nodes;
	queue = xmalloc(max_nodes * sizeof *queue);
	at = xmalloc(max_nodes * sizeof *at);
	offsets = xmalloc(((size_t)f->num_trees + 1) * sizeof *offsets);
	total = s->record;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint64_t size = store_tree(f, t, layout, s, mode, NULL, NULL, queue, at);
		offsets[t] = (int32_t)total;
		total = size == UINT64_MAX ? size : total + size;
		if (total > INT32_MAX) {
			free(queue);
			free(at);
			free(offsets);
			free(s);
			rep_free_state(layout);
			if (size == UINT64_MAX)
				return error_set(e, "tiled_array representation: tree %u is too deep in tiles of %u (more than 2^20 "
				                    "slots); use the tiled representation", t, f->tile_size ? f->tile_size : 1);
			return error_set(e, "%s representation: the forest needs more than 2^31 i32 elements (at tree %u)", name, t);
		}
	}
	offsets[f->num_trees] = (int32_t)total;
	records = xcalloc(total, sizeof *records);
	for (uint64_t i = s->record; array && i < total; i += s->record)
		records[i] = -1; /* unused slots read as leaves */
	shapes.table = xcalloc((size_t)1 << lanes, 1); /* row 0, of no tile's shape: every bit pattern exits by 0 */
	shapes.table_cap = (size_t)1 << lanes;
	shapes.count = 1;
	for (uint32_t t = 0; t < f->num_trees; t++)
		store_tree(f, t, layout, s, mode, &shapes, records + offsets[t], queue, at);
	free(queue);
	free(at);
	free(shapes.keys);
	free(shapes.rows);
	s->node_buffer = lir_buffer_add(m, "tiled.nodes", LTYPE_I32, total, records);
	s->offset_buffer = lir_buffer_add(m, "tiled.tree_offsets", LTYPE_I32, f->num_trees + 1, offsets);
	s->table_buffer = lir_buffer_add(m, "tiled.shapes", LTYPE_I8, (uint64_t)shapes.count << lanes, shapes.table);
	layout->state = s;
	return true;
}

static bool tiled_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out(f, m, layout, false, e);
}

static bool tiled_array_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out(f, m, layout, true, e);
}

static void tiled_begin_function(RepLayout *layout, LBuilder *b)
{
	TiledState *s = layout->state;
	rep_begin_forest(layout, b);
	s->nodes = rep_buffer_address(b, s->node_buffer);
	s->offsets = rep_buffer_address(b, s->offset_buffer);
	s->table = rep_buffer_address(b, s->table_buffer);
}

/* A tree's handle: the address of its root's record. */
static uint32_t tiled_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	TiledState *s = layout->state;
	uint32_t offset = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->offsets, tree, LIR_NONE));
	(void)side_by_side;
	return lir_index(b, s->nodes, offset, LTYPE_I32);
}

static uint32_t tiled_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	(void)layout;
	(void)tree;
	return lir_const_int(b, LTYPE_I64, 0);
}

/* The address of node's record: node is an i32 element's index, or (array) a slot's. */
static uint32_t record_of(const TiledState *s, LBuilder *b, uint32_t tree, uint32_t node)
{
	if (s->array)
		node = lir_emit(b, LOP_MUL, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, s->record), LIR_NONE);
	return lir_index(b, tree, node, LTYPE_I32);
}

/* The node's record's address (RepNode.feature) and word (RepNode.word: negative on leaves). */
static RepNode tiled_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	RepNode n;
	n.feature = record_of(layout->state, b, tree, node);
	n.word = lir_emit(b, LOP_LOAD, LTYPE_I32, n.feature, lir_const_int(b, LTYPE_I64, 0), LIR_NONE);
	n.is_leaf = lir_cmp(b, LOP_ICMP, LCMP_SLT, n.word, lir_const_int(b, LTYPE_I32, 0));
	n.threshold = LIR_NONE;
	return n;
}

/* BITS of a lanewise compare of x with y. */
static uint32_t compare_bits(LBuilder *b, LCmp pred, uint32_t x, uint32_t y)
{
	return lir_emit(b, LOP_BITS, LTYPE_I32, lir_cmp(b, LOP_FCMP, pred, x, y), LIR_NONE, LIR_NONE);
}

static uint32_t and32(LBuilder *b, uint32_t x, uint32_t y) { return lir_emit(b, LOP_AND, LTYPE_I32, x, y, LIR_NONE); }
static uint32_t or32(LBuilder *b, uint32_t x, uint32_t y) { return lir_emit(b, LOP_OR, LTYPE_I32, x, y, LIR_NONE); }
/* Bits [shift, shift + 8) of word. */
static uint32_t byte_of(LBuilder *b, uint32_t word, int shift)
{
	uint32_t v = lir_emit(b, LOP_ASHR, LTYPE_I32, word, lir_const_int(b, LTYPE_I32, shift), LIR_NONE);
	return and32(b, v, lir_const_int(b, LTYPE_I32, 0xff));
}

static uint32_t tiled_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                           const RepRow *row, bool leaf_stays)
{
	TiledState *s = layout->state;
	LType t = layout->threshold_type;
	uint8_t lanes = (uint8_t)s->lanes;
	uint32_t rec = fields->feature, word = fields->word, masks, thresholds, features, x, c, exit, child;
	(void)tree;
	if (leaf_stays) /* a leaf steps through the tile at element 0, which reads feature 0 */
		rec = lir_emit(b, LOP_SELECT, LTYPE_PTR, fields->is_leaf, s->nodes, rec);
	if (leaf_stays)
		word = lir_emit(b, LOP_LOAD, LTYPE_I32, rec, lir_const_int(b, LTYPE_I64, 0), LIR_NONE);
	masks = lir_emit(b, LOP_LOAD, LTYPE_I32, rec, lir_const_int(b, LTYPE_I64, 1), LIR_NONE);
	thresholds = lir_index(b, rec, lir_const_int(b, LTYPE_I64, HEAD), LTYPE_I32);
	thresholds = lir_emit_vector(b, LOP_LOAD, t, lanes, thresholds, lir_const_int(b, LTYPE_I64, 0), LIR_NONE);
	features = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, lanes, rec, lir_const_int(b, LTYPE_I64, s->features_at), LIR_NONE);
	x = lir_emit_vector(b, LOP_GATHER, row->type, lanes, row->base, row->start, features);
	if (row->type != t)
		x = lir_cast(b, row->type == LTYPE_F32 ? LCAST_FPEXT : LCAST_FPTRUNC, t, x);
	switch ((Mode)s->mode) {
	case MODE_LT: c = compare_bits(b, LCMP_OLT, x, thresholds); break;
	case MODE_LE: c = compare_bits(b, LCMP_OLE, x, thresholds); break;
	case MODE_MIXED:
	default: { /* one instruction per statement: the LIR's numbering must not follow the C compiler's argument order */
		uint32_t lt = compare_bits(b, LCMP_OLT, x, thresholds), eq;
		lt = and32(b, lt, byte_of(b, masks, 0));
		eq = compare_bits(b, LCMP_OEQ, x, thresholds);
		c = or32(b, lt, and32(b, eq, byte_of(b, masks, 8)));
		break;
	}
	}
	if (!row->complete) {
		/* Ordered compares fail on NaN, so c's missing lanes are 0 and take their default bit by an or. */
		uint32_t missing = compare_bits(b, LCMP_UNO, x, x);
		if (layout->missing_rules & (1u << REP_MISSING_ZERO_RIGHT | 1u << REP_MISSING_ZERO_LEFT)) {
			uint32_t up = rep_splat(b, t, lanes, 0, HIR_ZERO_THRESHOLD), down = rep_splat(b, t, lanes, 0, -HIR_ZERO_THRESHOLD);
			uint32_t below = compare_bits(b, LCMP_OLE, x, up), above = compare_bits(b, LCMP_OGE, x, down);
			uint32_t small = and32(b, below, above), keep = compare_bits(b, LCMP_OGT, x, up);
			keep = or32(b, keep, compare_bits(b, LCMP_OLT, x, down));
			keep = or32(b, keep, byte_of(b, masks, 16));
			c = and32(b, c, keep);
			missing = or32(b, missing, and32(b, small, byte_of(b, masks, 24)));
		}
		c = or32(b, c, and32(b, missing, byte_of(b, word, 16)));
	}
	exit = and32(b, word, lir_const_int(b, LTYPE_I32, 0xffff));
	exit = lir_emit(b, LOP_SHL, LTYPE_I32, exit, lir_const_int(b, LTYPE_I32, lanes), LIR_NONE);
	exit = lir_cast(b, LCAST_ZEXT, LTYPE_I64, or32(b, exit, c));
	exit = lir_cast(b, LCAST_ZEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I8, s->table, exit, LIR_NONE));
	if (s->array) { /* slot (n+1)i + 1 + exit */
		child = lir_emit(b, LOP_MUL, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, s->arity), LIR_NONE);
		child = lir_emit(b, LOP_ADD, LTYPE_I64, child, lir_const_int(b, LTYPE_I64, 1), LIR_NONE);
		child = lir_emit(b, LOP_ADD, LTYPE_I64, child, exit, LIR_NONE);
	} else {
		exit = lir_emit(b, LOP_ADD, LTYPE_I64, exit, lir_const_int(b, LTYPE_I64, s->children_at), LIR_NONE);
		child = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, rec, exit, LIR_NONE));
	}
	return rep_step_result(b, fields, node, child, leaf_stays);
}

static uint32_t tiled_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	uint32_t rec = record_of(layout->state, b, tree, node);
	return rep_load_leaf(layout, b, rec, lir_const_int(b, LTYPE_I64, 1));
}

static void tiled_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole)
{
	TiledState *s = layout->state;
	uint32_t buffers[] = {s->nodes};
	LType types[] = {LTYPE_I32};
	rep_prefetch_slots(b, s->offsets, tree, buffers, types, COUNT_OF(buffers), whole);
}

/* The two layouts share every hook but the layout's. */
#define TILED(NAME, LAY_OUT) { \
	.name = NAME, \
	.lay_out = LAY_OUT, \
	.free = rep_free_state, \
	.begin_function = tiled_begin_function, \
	.tree = tiled_tree, \
	.root = tiled_root, \
	.load_node = tiled_load_node, \
	.step = tiled_step, \
	.prefetch_tree = tiled_prefetch_tree, \
	.leaf_value = tiled_leaf_value, \
	.tiles = true, \
}

const LRepresentation rep_tiled = TILED("tiled", tiled_lay_out);
const LRepresentation rep_tiled_array = TILED("tiled_array", tiled_array_lay_out);
