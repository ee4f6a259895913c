/*
 * The representation interface: how a forest is laid out in memory and how code
 * reaches its nodes. lower_mir_to_lir walks trees only through these hooks, so a new
 * layout (sparse, reorg, tiled, code-in-instructions) is a new LRepresentation and
 * an entry in lower/rep.c, with no change to the lowering.
 *
 * Values are LIR values (instruction indices) built with the LBuilder passed in. A
 * tree handle is whatever value the representation needs to find a tree (an offset,
 * a pointer); a node is an i64 value the representation defines.
 */
#ifndef GROVE_LOWER_REP_H
#define GROVE_LOWER_REP_H

#include "ir/hir.h"
#include "ir/mir.h"
#include "ir/lir.h"

/*
 * The node word (i32) both layouts store per slot:
 *
 *   bit 31      set on leaves (a leaf's word is -1)
 *   bits 29-30  the split's missing-value rule (RepMissing)
 *   bits 26-28  the split's comparison (HCompare)
 *   bits 0-25   the feature a split tests (so fewer than 2^26 features)
 *
 * The feature sits in the low bits so that a step reads it with one mask, the other
 * fields staying unread where a walk has no use for them (one comparison in the whole
 * forest, rows known to hold no missing value). Forests of at most 256 or 65536
 * features mask with 0xff or 0xffff (RepLayout.feature_mask): the step then loads the
 * feature as a byte or a half word, with no mask instruction. A split sends the row left when
 * `x compare threshold` holds, right otherwise; a missing feature follows the missing
 * rule. An IN split's value slot holds, instead of a threshold, the offset of its
 * category set in the layout's set buffer. Only rep.c reads the fields, so a new
 * comparison or missing rule is a change to rep.c, not to the walk lowering.
 */
#define REP_WORD_FEATURE_MASK 0x03ffffffu
#define REP_WORD_COMPARE_SHIFT 26
#define REP_WORD_COMPARE_MASK 7u
#define REP_WORD_MISSING_SHIFT 29
#define REP_WORD_MISSING_MASK 3u
#define REP_MAX_FEATURES (1u << 26)

/* What a split does with a missing value: bit 0 is "goes left", bit 1 "zero is missing too". */
typedef enum RepMissing {
	REP_MISSING_RIGHT,      /* NaN goes right */
	REP_MISSING_LEFT,       /* NaN goes left */
	REP_MISSING_ZERO_RIGHT, /* NaN and |x| <= HIR_ZERO_THRESHOLD go right */
	REP_MISSING_ZERO_LEFT,  /* ... go left */
} RepMissing;

/* The fields of a node the walk needs, as LIR values. */
typedef struct RepNode {
	uint32_t is_leaf;      /* i1; LIR_NONE where a leaf's record steps to itself (RepLayout.leaves_stay) */
	uint32_t feature;      /* i64: column of the row to test (meaningless on leaves) */
	uint32_t threshold;    /* RepLayout.threshold_type */
	uint32_t word;         /* i32: the node word, whose comparison and missing rule the step decodes */
	uint32_t record;       /* i64 where the walk reads keys: the key in the high half, the word in the low (else LIR_NONE) */
} RepNode;

/*
 * The row a walk is for: features row[start], row[start + feature_step], ... of the
 * buffer at base; the next row's (lanes of rows side by side) start row_step on.
 */
typedef struct RepRow {
	uint32_t base;         /* ptr */
	LType type;            /* of the features: f32 or f64, or i64 or i32 where they are keys (rep_emit_row_key) */
	uint32_t start;        /* i64: index of the row's first feature */
	int64_t feature_step;  /* 1; or, in a copy of rows column by column (Lowering.row_cache_rows), its rows: made
	                          only where rows walk side by side in vectors (RepLayout.lanes, walk_lanes: code) */
	int64_t row_step;      /* the features per row; or 1 column by column, or in a tile of keys */
	bool complete;         /* the row holds no missing value: steps skip the missing-value test */
} RepRow;

/* What a layout tells the lowering about itself. */
typedef struct RepLayout {
	void *state;           /* the representation's own data */
	LType threshold_type;  /* type of RepNode.threshold */
	LType leaf_type;       /* type of leaf values */
	uint8_t compares;      /* 1 << HCompare of every comparison some split makes */
	uint8_t missing_rules; /* 1 << RepMissing of every missing rule some split has */
	uint32_t feature_mask; /* the word's bits a feature can have set: 0xff, 0xffff or REP_WORD_FEATURE_MASK */
	HCategoryRule category_rule; /* how IN splits turn x into a category */
	uint32_t set_buffer;   /* module buffer of the category sets, LIR_NONE without IN splits: */
	                       /*   per set, its word count, then its words (i32); or, where set_stride, */
	                       /*   every set's words padded with zeros to set_stride words */
	uint32_t set_stride;   /* words of every set where they are padded, else 0 */
	uint64_t *set_offsets; /* where each of the forest's sets starts in it */
	uint32_t sets;         /* the set buffer's address in the function being built */
	uint32_t vector_buffer; /* module buffer of leaf vectors (leaf_type), LIR_NONE when every tree has width 1: */
	                       /*   then every leaf's value slot holds the index of its first value there */
	uint64_t *leaf_vectors; /* that index per node of the forest (leaves only) */
	uint32_t vectors;      /* the vector buffer's address in the function being built */
	/*
	 * Every split's compare decides a missing value as the split's rule says, so a step
	 * needs no missing-value test and rows no scan for them (ifComplete lowers its body once):
	 * one missing rule, NaN only, and one comparison, the form of it that reads the
	 * rule off the compare's flag (lower/hir_narrow.c): < or > where NaN goes left,
	 * <= or >= where it goes right. Representations whose steps decide with
	 * rep_goes_right have it set by rep_lay_out_forest; others clear it.
	 */
	bool missing_by_compare;
	/*
	 * Every split sends NaN where it sends 0 and counts only NaN missing (LightGBM's
	 * missing type None: NaN is compared as 0), and the lowering gives the walks rows
	 * whose NaN reads as 0 (keys of 0, a copy of the rows where some value is NaN): no
	 * step sees a missing value, and ifComplete lowers its body once. Asked for by the
	 * lowering, kept by rep_lay_out_forest where the splits allow it and it spares a
	 * test (there are splits, and their compare does not decide NaN already).
	 */
	bool nan_reads_zero;
	bool keys;             /* there is a key copy of the nodes (asked for by the lowering, kept by lay_out) */
	/*
	 * Every feature an IN split tests is tested by IN splits alone, and the sets are
	 * padded with a word past the widest: walks of keys read such a feature's key as its
	 * category (rep_emit_category_key), and an IN split's record holds its set's offset
	 * in place of a threshold key. Set by rep_lay_out_forest where keys are asked for.
	 */
	bool category_keys;
	bool lanes;            /* rows may walk side by side in vectors (walk_lanes; asked for by the lowering) */
	bool walk_keys;        /* the walk being lowered compares keys: load_node yields the copy's key as threshold */
	/*
	 * A leaf's key record reads feature 0 and a key no row's passes, and the leaf is its
	 * own left child: a step of keys from a leaf stays there with no test, and a walk of
	 * keys knows no leaf but by not moving (RepNode.is_leaf LIR_NONE). Set by lay_out
	 * where rep_keys_stay allows it (the sparse layout).
	 */
	bool leaves_stay;
	/*
	 * With keys, the key copy's split words hold the split's left child as an offset from
	 * the split's own slot, from this bit (the feature's width) up to REP_WORD_COMPARE_SHIFT:
	 * a step of keys then adds the offset from the record it has loaded, with no load of a
	 * child. Set by the sparse layout where every offset fits; 0: none.
	 */
	uint8_t child_shift;
	/*
	 * With keys, a second key copy for the walks of rows side by side (rep_walks_words),
	 * whose split words are the offset (32 bits, wrapping) from the split's slot to its
	 * left child, placed where the offset's low byte is the split's feature: a step takes
	 * the feature by a byte's zero extension and adds the whole word into its slot with
	 * one adc, where child_shift's steps also copy and shift it. Set by the sparse layout
	 * (rep_sparse.c, add_word_copy).
	 */
	bool child_word;
	bool blocks;           /* lone rows walk keys (one_row): the layout may copy them in an order of its own for those walks
	                          (asked for by the lowering, cleared by lay_out where it makes no such copy) */
	bool one_row;          /* the walks being lowered read the keys of a block of one row (at a fixed place: no base register) */
	int32_t step_level;    /* the level of the node the step being lowered leaves, where its walk knows it (peeled steps, the
	                          root at 0), else -1; set by the lowering for layouts whose steps differ by level */
	/*
	 * Every walk ends on a leaf at its tree's one leaf depth, none testing for a leaf
	 * (MInst.exact, all steps safe): the layout may keep leaves' values alone, without a
	 * record (no word to test). Asked for by the lowering, kept by lay_out where it does
	 * so (the array layout, every tree with all its leaves at one depth).
	 */
	bool packed_leaves;
	int32_t leaf_level;    /* with packed_leaves, the depth of the leaves of the walk being lowered (its steps); else -1 */
	uint8_t top_levels;    /* levels of every tree's top that top_nodes can take (all splits), 0: none; asked for by the
	                          lowering (not 0), kept by lay_out where the layout has keys and tops to take */
	bool top_in_place;     /* the top being lowered ends its walks and is taken in place, not a tree ahead (lower_tops) */
	/*
	 * Rows' keys in tiles of key_lanes rows (TOP_LANES), feature by feature: feature f of
	 * a tile's row r at element f * key_lanes + r of the tile, which the layout's tops
	 * (top_nodes) read. Asked for by the lowering with top_levels, kept by lay_out where
	 * it keeps them; 0: none.
	 */
	uint8_t key_lanes;
	/*
	 * With key_lanes, the walks of the key copy read rows' keys in tiles too, not row by
	 * row: its split words hold f * key_lanes in place of f (rep_tile_word), so that a
	 * step adds the word to its row's address as it did the feature. The copy that lone
	 * rows walk (blocks) keeps features as they are, and so do their keys. Asked for by
	 * the lowering, cleared by lay_out without key_lanes.
	 */
	bool tile_words;
	/*
	 * Walks of TOP_LANES rows side by side of a tree of few leaves may compare all its
	 * splits at once over the rows' tile of keys (key_lanes; lower/rep_masks.c, the
	 * representation's walk_tile). Asked for by the lowering with key_lanes, kept by
	 * lay_out where some tree fits.
	 */
	bool leaf_masks;
	/*
	 * With leaf_masks: some split's compare sends NaN's key (rep_nan_key) the other way
	 * than the split sends NaN, and the walks read a second tile of the same keys less one
	 * for such splits (lower/rep_masks.c). Set by lay_out.
	 */
	bool mask_nan_keys;
	/*
	 * With leaf_masks where the CPU compares vectors signed only (AVX2: MTOPS_PAIRS): the
	 * walks read their own copy of the tiles (BlockScope.mask_tiles), its keys biased by
	 * REP_KEY_BIAS, and a split's record holds the bound that decides its keys with one
	 * signed compare, unsigned taking two (measured: docs/performance-notes.md, Leaf
	 * masks: signed compares with AVX2). Set by lay_out.
	 */
	bool signed_masks;
	/*
	 * With signed_masks, where IN splits pick their set's word from tables (lower/rep_masks.c)
	 * and no set sends NaN's category left: the copy holds, past its keys
	 * (rep_mask_key_columns), two columns for each of the num_set_features features such
	 * splits test (module buffer set_features: each one's element in the tiles, feature x
	 * key_lanes). The first holds a row's category's word, c >> 5, with the bit that picks
	 * the second table copied to the sign, which the permutes and their select read as it
	 * is (REP_INDEX_SIGN); the second, the shift that brings the category's bit in its word
	 * to the sign (~c & 31), which the split's shift reads from memory. Such a split's
	 * record holds the first's element. Set by lay_out.
	 */
	uint32_t set_features, num_set_features;
	/*
	 * The lowering's: how the CPU's vectors take 16 rows (MModule.vector_tops). With
	 * top_levels and MTOPS_WIDE, the CPU has vector registers to keep a top's masks in
	 * across the loop around (AVX-512's 32), so top_nodes loads them from a buffer, which
	 * the loop's invariant loads leave in registers. Constants would each be a load
	 * folded into their AND, 15 loads a top beside the walks' (measured:
	 * docs/performance-notes.md, The tops' masks). With AVX2's 16 registers they are
	 * spilled, and cost more as loads. It also sizes the tables of gathers
	 * (rep_table_words).
	 */
	MTops vector_tops;
	/*
	 * The rows' tiles of keys (BlockScope.key_tiles) and the keys their vectors are compared
	 * with hold each key biased by 2^31 (REP_KEY_BIAS), compared signed: AVX2 compares
	 * vectors signed only, and an unsigned compare there takes two instructions and an
	 * inversion. Set by lay_out where no scalar walk reads the tiles (tile_words) and no
	 * split is IN (whose tiles hold categories, read as indices): the oblivious layout's,
	 * whose tops add the compares' masks into their nodes (measured: docs/performance-notes.md,
	 * Symmetric trees: signed compares with AVX2). Other layouts' tops AND and select by
	 * them, where LLVM folds the inversion: no fewer instructions signed. (Leaf masks bias
	 * their own copy: signed_masks.)
	 */
	bool signed_tiles;
	/*
	 * Walks of BYTE_TOP_LANES rows side by side of a symmetric tree read bins, not keys
	 * (walk_bins): a row's bin of a feature is how many of the forest's thresholds of the
	 * feature its key goes right of, less 128, a byte (bins_of); a level of a tree is then
	 * one compare of 32 bytes against the level's count, the rows' leaf indices bytes, and
	 * their leaves come from the tree's leaves in byte planes by table gathers of bytes
	 * (x86: pshufb; measured: docs/performance-notes.md, Symmetric trees with AVX2: leaves
	 * from byte planes). Asked for by the lowering where walks take that many rows, kept by
	 * lay_out where cost_byte_tops holds and the tops compare tiles signed. Inside a block
	 * that made bins (BlockScope.bins), its rows in groups of 32 from its first, each
	 * group's bins of feature f at f x 32 from the group's (groups num_features x 32 apart),
	 * a group's rows 4c to 4c + 3 at its bytes 4((c >> 1) + 4(c & 1)): in each half of the
	 * vector the even fours, then the odd, which zips in each half (walk_bins) undo. Trees
	 * too deep for planes (cost_leaf_planes) load their leaves one by one, by their index
	 * bytes (a GATHER), and their bins keep a group's rows in order (bins_in_order).
	 */
	bool byte_tops, bins_in_order;
	/*
	 * The splits send NaN either way, and every key walk's step decides by its compare
	 * alone: a split whose compare would send NaN's key (REP_KEY_MISSING, below all) the
	 * other way reads its feature's key less one, in column num_features + f of a row's
	 * keys, against its own key less one. NaN's key less one wraps to the greatest, and
	 * every other key decides as before. A row's keys are then key_columns wide, its
	 * keys and then its keys less one; the step is the one of bare words. Set by
	 * rep_lay_out_columns, which the sparse and array layouts' lay_out call.
	 */
	bool nan_columns;
	uint32_t key_columns;  /* the keys a row has: num_features, twice that with nan_columns (set by rep_lay_out_forest) */
} RepLayout;

/*
 * Keys: a float's bits read as sign and magnitude, made an integer of the same order
 * (-0 and +0 alike), then moved up by 2^31 to compare unsigned (x86 reads an unsigned
 * compare off the carry flag: the child index is one adc). Keys of floats that are not
 * NaN lie in [2^31 - 0x7f800000, 2^31 + 0x7f800000]; NaN's key is REP_KEY_MISSING, below
 * them all, so a missing feature is one test (or above them all, where a > or <= compare
 * sends it the rule's way: RepLayout.missing_by_compare).
 *
 * Walks read their rows as keys (RepRow.type i64 or i32, converted once per block of
 * rows) and compare them with the keys of the thresholds, which a representation that can
 * (LRepresentation.keys) keeps in a copy of its nodes: load_node reads that copy while
 * RepLayout.walk_keys is set. An integer load and compare is a shorter chain than a
 * float's (x86 and AArch64 load floats into vector registers with a longer latency,
 * then compare them into flags with another), and that chain bounds the walks of a lone
 * row. Rows walked side by side are bound by the loads a step makes instead: the array
 * layout reads a record of keys with one 8-byte load (word and key), where a float step
 * makes three (word, threshold, feature) (measured: docs/performance-notes.md, Integer
 * keys). A row's key as an i64 (the key in the high half, as in the record) compares
 * with the record whole, without a shift to take the key out: a step is then a load, a
 * zero-extend of the feature byte, a compare from memory and an adc.
 */
#define REP_KEY_MISSING 0u
uint32_t rep_key(float x);
/* The key rows' NaN gets under layout: 0's where NaN reads as 0, else REP_KEY_MISSING or, where missing_by_compare asks, ~0. */
uint32_t rep_nan_key(const RepLayout *layout);
/*
 * The key a split of threshold t (not NaN) stores in a key copy: rep_key(t), less one
 * where the forest's one comparison is < and plus one where it is > (x < t is
 * key(t) - 1 < key(x), x > t is key(x) < key(t) + 1), so that the step's decision is the
 * carry of one unsigned compare whatever the comparison.
 */
uint32_t rep_threshold_key(const RepLayout *layout, float t);
/*
 * The key a key copy keeps for the split of word `word` and value slot `value`:
 * rep_threshold_key's (less one where it reads keys less one: rep_reads_less_one), or an
 * IN split's set offset.
 */
uint32_t rep_split_key(const RepLayout *layout, uint32_t word, float value);
/*
 * Emit a row's key, of type (i32 or i64), of the float whose bits are `bits` (i32):
 * NaN's key for layout where nan (i1; LIR_NONE: x is not NaN). An i64 has the key in
 * its high half, so that a step compares it with a node's record (RepNode.record) whole;
 * the low half is 0, or all ones where the row's key is the lesser side of the compare
 * (a tie must not hold whatever the record's word).
 */
uint32_t rep_emit_row_key(const RepLayout *layout, LBuilder *b, LType type, uint32_t bits, uint32_t nan);
/*
 * A key copy's records of n slots: per slot the key word of words[i] and the key of
 * thresholds[i] (i32 each; where words[i] is a leaf's, -1: -1 and 0, or with
 * layout->leaves_stay the record that stays, rep_keys_stay). Freed by the caller.
 */
int32_t *rep_key_records(const RepLayout *layout, const int32_t *words, const float *thresholds, uint64_t n);
/*
 * Whether a leaf's key record can keep every walk of keys where it is: feature 0 and,
 * for the splits' one carry form, the key that never goes right. Each step of keys then
 * decides by its compare alone (one comparison, bare key words, NaN decided by the
 * compare, read as 0 or decided by the key columns).
 */
bool rep_keys_stay(const RepLayout *layout);
/* The fields of the key copy's record `at` (i64) of `records`, read with one 8-byte load (RepNode.record). */
RepNode rep_load_record(const RepLayout *layout, LBuilder *b, uint32_t records, uint32_t at);
/*
 * Whether f's thresholds can be floats where rep_lay_out_forest made value slots of
 * doubles (its leaves are doubles): they are floats, and so is every set offset (below 2^24).
 */
bool rep_float_thresholds(const HForest *f, const RepLayout *layout);
/* A vector of `lanes` t, each imm (integers, i1) or fimm (floats). */
uint32_t rep_splat(LBuilder *b, LType t, uint32_t lanes, int64_t imm, double fimm);
/* A vector of `lanes` i32, each v. */
uint32_t rep_vector_const(LBuilder *b, uint32_t lanes, int32_t v);
/* The key (i32) in the high half of x (i64): a row's i64 key, or a key copy's record. */
uint32_t rep_high_key(LBuilder *b, uint32_t x);
/* Whether layout's splits can compare keys: f32 thresholds, category sets only with category_keys, no zero-as-missing rule. */
bool rep_keys_fit(const RepLayout *layout);
/*
 * A category feature's key (RepLayout.category_keys), of type (i32 or i64, the key in the
 * high half as rep_emit_row_key's) of x (the row's float): its category where the
 * forest's rule gives one below the sets' categories; else the one past them, in no set;
 * NaN the one after that, or where NaN reads as 0, category 0.
 */
uint32_t rep_emit_category_key(const RepLayout *layout, LBuilder *b, LType type, uint32_t x);
/*
 * Whether the key copy's split words are their features alone (rep_key_word): one
 * comparison, and one missing rule, or none that a step reads (nan_reads_zero), or NaN
 * decided by the key columns (nan_columns).
 */
bool rep_bare_key_words(const RepLayout *layout);
/*
 * Set layout's nan_columns, key_columns and, where the columns need more, its feature
 * mask: columns of keys less one where it keeps keys and its splits send NaN either way
 * (none reading it as 0), with one comparison but IN and twice f's features in a word.
 * The layouts whose walks of keys can take such columns call it once they know whether
 * they keep keys.
 */
void rep_lay_out_columns(const HForest *f, RepLayout *layout);
/*
 * Whether a split of word `word` (rep_split_word) reads its feature's key less one
 * (RepLayout.nan_columns): its compare would send NaN's key (REP_KEY_MISSING, below all)
 * the other way, left where the split's key is the lesser side, right elsewhere.
 */
bool rep_reads_less_one(const RepLayout *layout, uint32_t word);
/*
 * The word a key copy keeps for a split of word `word`: the feature alone where the
 * forest has one comparison and one missing rule, or rules that no step reads
 * (nan_reads_zero), or its column (nan_columns); else the word. Walks of keys then take the comparison and the rule
 * from the layout, and a step reads the feature as the record's low half, with no mask:
 * on x86 a move the register renamer does, where the mask was an instruction on the
 * walk's chain (measured: docs/performance-notes.md, Key words without a mask).
 */
uint32_t rep_key_word(const RepLayout *layout, uint32_t word);
/* The word of rep_key_word as the key copy keeps it where walks read rows' keys in tiles (RepLayout.tile_words): feature * key_lanes. */
uint32_t rep_tile_word(const RepLayout *layout, uint32_t word);
/*
 * Whether a step of a walk of keys for row decides by one compare of keys (the forest's
 * one carry form, and no missing value to test): rep_keys_go_right then decides as it.
 */
bool rep_keys_decide(const RepLayout *layout, const RepRow *row);
/* i1 (lanewise where x and t are vectors): where a row of key x goes right at a split of key t (i32), by rep_key_form. */
uint32_t rep_keys_go_right(const RepLayout *layout, LBuilder *b, uint32_t x, uint32_t t);
/* What RepLayout.signed_tiles adds to a key (mod 2^32): an unsigned order becomes the signed one. */
#define REP_KEY_BIAS 0x80000000u
/* A key of a threshold that a tile's vector meets, biased where RepLayout.signed_tiles. */
static inline uint32_t rep_tile_key(const RepLayout *layout, uint32_t key) { return layout->signed_tiles ? key ^ REP_KEY_BIAS : key; }

/* How a GPU copy is shared out: begin(ctx, n) opens a loop over [0, n) (i64) whose iterations the threads copying share; lir_end closes it. */
typedef struct RepSpread {
	uint32_t (*begin)(void *ctx, uint32_t n);
	void *ctx;
} RepSpread;

typedef struct LRepresentation {
	const char *name;
	/* Lay f out into buffers of m; fill layout. Returns false and fills e if f cannot be laid out this way. */
	bool (*lay_out)(const HForest *f, LModule *m, RepLayout *layout, Error *e);
	/* Free layout->state. */
	void (*free)(RepLayout *layout);
	/* Emit, at the start of the function, whatever the other hooks share (buffer addresses). */
	void (*begin_function)(RepLayout *layout, LBuilder *b);
	/*
	 * Emit code yielding the handle of tree number `tree` (i64): an i64 or a ptr, as the
	 * representation likes. side_by_side: the handle is one of several trees' whose walks
	 * are interleaved (consecutive numbers), so registers are scarce.
	 */
	uint32_t (*tree)(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side);
	/* Emit code yielding the root node of a tree. */
	uint32_t (*root)(RepLayout *layout, LBuilder *b, uint32_t tree);
	/* Emit code loading node's fields. */
	RepNode (*load_node)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node);
	/*
	 * Emit one step of a walk for row from node, whose fields are loaded: test the row's
	 * feature as the split says and yield the child it goes to. node must be a split
	 * unless leaf_stays, where a leaf yields itself (reading nothing out of bounds).
	 */
	uint32_t (*step)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
	                 const RepRow *row, bool leaf_stays);
	/* Emit code yielding the value of a leaf node (of layout->leaf_type). */
	uint32_t (*leaf_value)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node);
	/*
	 * Emit prefetches of tree number `tree` (i64) for cache(v) of a tree loop: of every
	 * node where `whole`, else of the line its walks read first (its root's; a lone row's
	 * walk then prefetches its path itself, prefetch_below).
	 */
	void (*prefetch_tree)(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole);
	/*
	 * Emit a prefetch of the nodes two levels below node, which a lone row's walk reads
	 * two steps on, where the representation keeps them together (NULL elsewhere);
	 * leaves: they are the walk's leaves, whose values leaf_value reads. node may be a
	 * leaf that the walk stays on: a prefetch never faults.
	 */
	void (*prefetch_below)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, bool leaves);
	/*
	 * cache(v) of a tree loop on a GPU; NULL where the representation cannot copy trees.
	 * cache_bytes: the memory a copy of any `count` consecutive trees takes, at most.
	 * cache_begin: emit the copy of trees [first, first + count) (first: i64; past the last
	 * tree, fewer) into LOCAL_ARRAYs of `space`, its elements shared out by spread; until
	 * cache_end, the tree hook yields handles into the copy (for the trees copied only)
	 * and the hooks given them read it.
	 */
	uint64_t (*cache_bytes)(const RepLayout *layout, uint32_t count);
	void (*cache_begin)(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count, LSpace space, const RepSpread *spread);
	void (*cache_end)(RepLayout *layout);
	/*
	 * Representations that keep trees in instructions rather than memory: emit the whole
	 * walk of the tree whose handle is `tree` for row, yielding its leaf's value (as
	 * leaf_value would): code of the tree's splits, which the lowering counts against
	 * what a function may hold (LOWER_CODE_FUNCTION_SPLITS). The tree's number must be a
	 * constant (the lowering refuses walks of other trees). NULL for the others, whose
	 * walks the lowering builds from root, load_node, step and leaf_value (which such
	 * representations leave NULL, with prefetch_tree).
	 */
	uint32_t (*walk)(RepLayout *layout, LBuilder *b, uint32_t tree, const RepRow *row);
	/*
	 * Where walk is set, and may be NULL: the walks of `lanes` rows of the tree whose
	 * handle is `tree` at once, as one vector of their leaves' values (leaf_type); lane r's
	 * row is row's, r x stride elements on (stride < 2^31 / lanes). LIR_NONE where it
	 * cannot take them (the lowering then walks each lane with walk).
	 */
	uint32_t (*walk_lanes)(RepLayout *layout, LBuilder *b, uint32_t tree, const RepRow *row, uint32_t lanes,
	                       uint32_t stride);
	/*
	 * Representations that walk a block of trees at once for one row (QuickScorer's),
	 * NULL for the others. Where a row's walks of trees first, first + 1, ...,
	 * first + count - 1 (first: i64) are lowered side by side, trees_apply emits an i1
	 * that holds where walk_trees can take them (LIR_NONE: never, for this count), and
	 * walk_trees emits those walks, setting values[k] to tree first + k's leaf value (as
	 * leaf_value would). Where it does not hold, the lowering walks the trees one by one
	 * with the node hooks, which such a representation has too.
	 */
	uint32_t (*trees_apply)(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count);
	void (*walk_trees)(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count, const RepRow *row, uint32_t *values);
	/*
	 * Representations whose walks of TOP_LANES rows side by side of one tree can take
	 * every split at once over the rows' tile of keys (RepLayout.leaf_masks), NULL for the
	 * others. tile_apply emits an i1 that holds where tree number `tree` (i64) can be
	 * walked so, or the constant true where every tree can; walk_tile emits those walks
	 * for the rows whose keys start at `tile` (as top_nodes reads them, and their keys less
	 * one after them where RepLayout.mask_nan_keys), yielding a vector of `lanes` leaf values (as leaf_value's), whether the rows hold missing values or not. Where tile_apply
	 * does not hold, the lowering walks node by node.
	 */
	uint32_t (*tile_apply)(RepLayout *layout, LBuilder *b, uint32_t tree);
	uint32_t (*walk_tile)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t lanes, uint32_t tile);
	/*
	 * With RepLayout.byte_tops (NULL in representations without): bins_of emits the bins
	 * (a vector of TOP_LANES i8) of the rows whose keys of feature `feature` (i64) are the
	 * vector `keys` (TOP_LANES i32, as a tile holds them); walk_bins the walks of tree
	 * number `tree` (i64) of BYTE_TOP_LANES rows whose bins start at `bins` (i8, a group
	 * of RepLayout.byte_tops), yielding a vector of their leaves'
	 * indices (i8), whether the rows hold missing values or not (the keys decide them);
	 * bin_leaves, from those indices, their leaves' values (element `output` of the
	 * leaves' vectors where trees have them, else 0), a vector of BYTE_TOP_LANES.
	 */
	uint32_t (*bins_of)(RepLayout *layout, LBuilder *b, uint32_t feature, uint32_t keys);
	uint32_t (*walk_bins)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t bins);
	uint32_t (*bin_leaves)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t leaves, uint32_t output);
	/*
	 * The first `levels` steps (at most layout->top_levels) of the walks of tree number
	 * `tree` (i64) for `lanes` consecutive rows, taken for all rows at once: every split
	 * of those levels compares the rows' keys with one vector compare, and the split's
	 * bit mask clears, where a row goes right, the nodes below its left child from that
	 * row's candidates; the lowest candidate left is where the row's walk goes
	 * (QuickScorer's exit leaf, in the top of one tree). Yields a vector of `lanes` i32:
	 * each row's node after those steps. Feature f of lane r's row is the key (i32) at
	 * element f * RepLayout.key_lanes + r of `tile`, the rows' tile of keys: a split's
	 * element is data, not a multiply. Only where rep_keys_decide holds for the walks'
	 * rows. NULL where the layout has no such top.
	 */
	uint32_t (*top_nodes)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes, uint32_t tile);
	/*
	 * Where a top of `levels` levels took every step of the walks of tree `tree` (its
	 * handle) for `lanes` rows, and leaf_tables allows: their leaves' values as one
	 * vector, from the top's nodes (2^levels + j, a vector of `lanes` i32), by permutes
	 * (rep_table_gather). `output` LIR_NONE: the leaves' own values (of trees with leaf
	 * vectors, their vectors' indices); else (i64) element `output` of their vectors.
	 * NULL where the layout has no such leaves.
	 */
	uint32_t (*leaf_values)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes, uint32_t nodes,
	                        uint32_t output);
	/* Whether the CPU's tables take the leaves of a top of `levels` levels (leaf_values): their own values, or (outputs) the elements of leaf vectors (RepLayout.vector_buffer). */
	bool (*leaf_tables)(const RepLayout *layout, uint32_t levels, bool outputs);
	/* Walks of rows without missing values are no cheaper: ifComplete lowers its body once, as written. */
	bool one_version;
	/* A step walks a tile of a tiled forest (HForest.tile_size); the others refuse tiled forests. */
	bool tiles;
	/* lay_out keeps a key copy of the nodes where RepLayout.keys and rep_keys_fit (it clears keys otherwise). */
	bool keys;
	/* A step reads the split of its level (RepLayout.step_level): every walk must be unrolled to its trees' depth. */
	bool levels;
	/* Taken where a schedule or --representation names it, never by a search (grove tune's, the GPU candidates'). */
	bool named_only;
} LRepresentation;

/*
 * Leaf masks (lower/rep_masks.c), for representations' walk_tile: per tree of at most
 * 32 leaves, its splits' records (the feature's element in a tile of keys, the key, the
 * leaves a right turn keeps) and its leaves left to right.
 */
typedef struct RepMasks {
	uint32_t tree_buffer, split_buffer, leaf_buffer; /* LIR_NONE: none (layout->leaf_masks cleared) */
	uint32_t trees, splits, leaves;                  /* their addresses in the function being built */
	bool all;                                        /* every tree fits */
	uint8_t groups;                                  /* bit g: some tree has splits of group g (lower/rep_masks.c) */
	bool nan_sets;                                   /* some IN split sends NaN's category left */
} RepMasks;
/* Lay out f's leaf masks into m where layout->leaf_masks, with the layout's keys; clears leaf_masks where no tree fits. */
void rep_masks_lay_out(const HForest *f, LModule *m, RepLayout *layout, RepMasks *s);
/* The columns of the leaf masks' copy of the tiles before its set columns: the keys, then their keys less one where the tiles lack them. */
uint32_t rep_mask_key_columns(const RepLayout *layout);
/* The buffers' addresses (begin_function). */
void rep_masks_begin(RepMasks *s, LBuilder *b);
/*
 * Whether layout's splits but IN compare keys with one carry form (or there are none):
 * *t_below where the split's key is the lesser side of "goes right" (< and <=), else the
 * row's (> and >=).
 */
bool rep_key_form(const RepLayout *layout, bool *t_below);
/*
 * The nodes of tree t that a walk reaches, depth first, left before right, into order
 * (2 x leaves - 1 of them); into first, each of them its first leaf in that order among
 * the tree's leaves (both arrays of the tree's size; first is scratch for the rest).
 * Returns the tree's leaves. (lower/rep_code.c)
 */
uint32_t rep_depth_first(const HForest *f, uint32_t t, uint32_t *order, uint32_t *first);
/* The tile_apply and walk_tile hooks' work. */
uint32_t rep_masks_apply(const RepMasks *s, LBuilder *b, uint32_t tree);
uint32_t rep_masks_walk(const RepMasks *s, const RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t lanes,
                        uint32_t tile);

/*
 * Tops from a buffer (lower/rep_tops.c), for representations' top_nodes: per tree, the
 * 2^RepLayout.top_levels - 1 splits of its top in level order from slot 1 (slot s's
 * children at 2s and 2s + 1), each as its feature's element in the rows' tile of keys
 * (RepLayout.key_lanes times the feature) and its key (i32 each).
 */
#define REP_TOP_LEVELS 4 /* at most: with 16 rows a vector four are as fast as three, five slower (docs/performance-notes.md, Levels of the tops) */
/*
 * The levels a top of layout takes where the trees' splits reach `depth` levels: at most
 * REP_TOP_LEVELS where a vector compares 16 rows, three where it takes two (AVX2's
 * MTOPS_PAIRS: a fourth level's 16 compares cost more than the step they save; measured:
 * docs/performance-notes.md, Levels of the tops).
 */
static inline uint8_t rep_top_levels(const RepLayout *layout, uint32_t depth)
{
	uint8_t most = layout->vector_tops == MTOPS_PAIRS ? 3 : REP_TOP_LEVELS;
	return (uint8_t)(depth < most ? depth : most);
}
typedef struct RepTops {
	uint32_t top_buffer, mask_buffer; /* mask_buffer: RepLayout.vector_tops MTOPS_WIDE's masks, else LIR_NONE */
	uint32_t tops, masks;             /* their addresses in the function being built */
	uint32_t per;                     /* splits per tree */
} RepTops;
/* Add the buffers PREFIX.tops (of `tops`, which it takes) and PREFIX.top_masks to m, for layout->top_levels levels. */
void rep_tops_lay_out(LModule *m, const RepLayout *layout, RepTops *t, const char *prefix, uint32_t num_trees, int32_t *tops);
/* The buffers' addresses (begin_function). */
void rep_tops_begin(RepTops *t, LBuilder *b);
/* top_nodes's work: a vector of `lanes` i32, each row's slot after `levels` levels, 2^levels + j, numbered as above. */
uint32_t rep_tops_take(const RepTops *t, RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes,
                       uint32_t tile);

/* The array representation: each tree a complete binary tree in level order from slot 1, children at 2i, 2i+1. */
extern const LRepresentation rep_array;
/* The sparse representation: nodes stored once each, a split holding the index of its left child. */
extern const LRepresentation rep_sparse;
/* sparse's records breadth first tree by tree, or layered (FIL's orders: every root, then every second level, ...). */
extern const LRepresentation rep_breadth_first;
extern const LRepresentation rep_layered;
/* The reorg representation: complete trees interleaved node-major, slot i of tree t at i * num_trees + t. */
extern const LRepresentation rep_reorg;

/* The tiled representation: a step evaluates a tile of splits with one vector compare and a table of tile shapes. */
extern const LRepresentation rep_tiled;
/* Its array flavour: each tree a complete tree of tiles, children computed rather than stored. */
extern const LRepresentation rep_tiled_array;

/* The bit-vector representation: QuickScorer's feature-ordered scan over blocks of trees, the array layout elsewhere. */
extern const LRepresentation rep_bitvector;

/* The oblivious representation: symmetric trees as a split per level and their leaves (walks unrolled to the depth). */
extern const LRepresentation rep_oblivious;

/* The code representation: each tree a nest of ifs with its thresholds in the instructions (trees known at compile time). */
extern const LRepresentation rep_code;
/* The branch-free form: every split of a tree of at most 64 leaves tested, its leaf found by a mask (lower/rep_code.c). */
extern const LRepresentation rep_branchfree;

/* The representation named name, or NULL. */
const LRepresentation *rep_find(const char *name);
/* The representation to use for f when none is asked for. */
const LRepresentation *rep_choose(const HForest *f);
/* The representation f is lowered with (lower_hir_to_mir says which); an error says why none. */
const LRepresentation *rep_for(const HForest *f, const char *representation, Error *e);

/* Helpers shared by representations. */

/*
 * What every lay_out hook does first: check that f fits a node word, fill layout's
 * types and what the splits use, and add the buffers every layout shares (the category
 * sets). rep_name is for messages.
 */
bool rep_lay_out_forest(const HForest *f, LModule *m, const char *rep_name, RepLayout *layout, Error *e);
/*
 * rep_lay_out_forest's category sets (lower/rep_sets.c), in one i32 buffer. Where it
 * costs little room, every set takes as many words as the widest (layout->set_stride):
 * the word of category c is at the set's offset + c / 32 for every c below 32 x that
 * many, and a step loads no count. Else each set's words follow its word count. Offsets
 * stay below limit. Where layout->category_keys, sets take a word more than the widest
 * (the categories of rep_emit_category_key past the sets'), padded; or category_keys is
 * cleared.
 */
void rep_lay_out_sets(const HForest *f, LModule *m, RepLayout *layout, uint64_t limit);
/*
 * The most words of a set that rep_set_words reads without a gather: two tables of a
 * GATHER (ir/lir.h) the CPU permutes i32 lanes from (layout->vector_tops: AVX2's 8
 * words, AVX-512's 16), one where the set's words fit one; 0: none. Where it is not 0,
 * the sets' buffer ends in REP_SET_TABLE_WORDS zero words, so that the tables from any
 * set's first word stay in it.
 */
uint32_t rep_table_words(const RepLayout *layout);
#define REP_SET_TABLE_WORDS 32
/*
 * How the table gathers of rep_set_words, rep_table_gather and rep_gather_tables read
 * their index: whole (each below the span); by its bits below the tables' elements
 * (rounded up to a power of 2) alone, which are below the span, the bits above anything;
 * or by those in a table and its sign, set where it picks the second of at most two
 * tables.
 */
typedef enum { REP_INDEX_WHOLE, REP_INDEX_LOW, REP_INDEX_SIGN } RepIndex;
/*
 * i32 lanes: the words of the set at `offset` (i64) of word index `index` (i32 lanes),
 * where every index is below `span` (0: not known): from tables where span is at most
 * rep_table_words, else loaded lane by lane.
 */
uint32_t rep_set_words(const RepLayout *layout, LBuilder *b, uint8_t lanes, uint32_t offset, uint32_t index, uint32_t span,
                       RepIndex form);
/*
 * `lanes` elements of `type` at offset (i64) + index (i32 lanes, each below span) of
 * `buffer` (ptr), from at most `most` tables of a GATHER the CPU permutes lanes from
 * (layout->vector_tops: 32 or 64 bytes), picked by the index's high bits; LIR_NONE where
 * the CPU has none or span takes more (most at most REP_TABLES_MOST). Tables read whole:
 * the buffer must hold a table past offset + span. With AVX-512, where a table is the
 * lanes' vector, two tables are one GATHER (a two-vector permute). The index's `form`
 * says which of its bits to read.
 */
#define REP_TABLES_MOST 16
uint32_t rep_table_gather(const RepLayout *layout, LBuilder *b, LType type, uint8_t lanes, uint32_t buffer, uint32_t offset,
                          uint32_t index, uint32_t span, uint32_t most, RepIndex form);
/*
 * rep_table_gather's work, and the oblivious layout's byte planes': `type` lanes `index`
 * (a vector of i32 or of i8) from `tables` (at most REP_TABLES_MOST) tables of `per`
 * elements each (a power of 2) at offset (i64) in buffer, one GATHER a table and a tree of
 * selects by the index's bits above a table's (or its sign, REP_INDEX_SIGN). Each GATHER
 * reads the index's low bits (sub 1, ir/lir.h) where there are several tables or the
 * index is not REP_INDEX_WHOLE.
 */
uint32_t rep_gather_tables(LBuilder *b, LType type, uint8_t lanes, uint32_t buffer, uint32_t offset, uint32_t index,
                           uint32_t tables, uint32_t per, RepIndex form);
/* The tables rep_table_gather reads for span elements of type (0: the CPU has none). */
uint32_t rep_tables(const RepLayout *layout, LType type, uint32_t span);
/* i1: whether x (layout's threshold type) is a category below end by the forest's rule; *c: it (i64), or 0 (zero: 0.0). */
uint32_t rep_category_of(const RepLayout *layout, LBuilder *b, uint32_t x, double end, uint32_t zero, uint32_t *c);
/* i1: where x is missing, whether the row goes right at n. */
uint32_t rep_missing_right(const RepLayout *layout, LBuilder *b, const RepNode *n);
/*
 * i1: where a row of category key c (i32, rep_emit_category_key) goes right at IN split
 * n, whose record's key t is its set's offset: its category's bit is clear, or c is
 * NaN's and n sends missing values right (nan_free: no NaN comes). Where is_in does not
 * hold, t and c are no set's and category, and the set word read is the buffer's first.
 */
uint32_t rep_key_category_right(const RepLayout *layout, LBuilder *b, const RepNode *n, uint32_t c, uint32_t t,
                                uint32_t is_in, bool nan_free);
/* For a representation whose walks test for missing values without rep_goes_right: clear missing_by_compare and nan_reads_zero. */
void rep_tests_missing(RepLayout *layout);
/* What every begin_function hook does first: the shared buffers' addresses. */
void rep_begin_forest(RepLayout *layout, LBuilder *b);
/* The node word of a split (leaves store -1). */
int32_t rep_split_word(const HNode *n);
/* What node n of f holds in its value slot: its threshold or leaf value, an IN split's set offset, or a leaf's vector index. */
double rep_slot_value(const RepLayout *layout, const HForest *f, const HNode *n);
/* The type of a buffer holding both f's thresholds and leaf values. */
LType rep_value_type(const HForest *f);
/* values[at] = v, values being of type (F32 or F64). */
void rep_store_value(void *values, LType type, uint64_t at, double v);
/* Emit the load of the leaf value at values[slot], converted to layout->leaf_type. */
uint32_t rep_load_leaf(const RepLayout *layout, LBuilder *b, uint32_t values, uint32_t slot);
/* The free hook of representations whose state is one malloc'ed block (it frees the shared parts too). */
void rep_free_state(RepLayout *layout);
/* Emit the address of module buffer number index. */
uint32_t rep_buffer_address(LBuilder *b, uint32_t index);
/* Bytes of a cache line: prefetches are issued one per line. */
#define REP_CACHE_LINE 64
/*
 * Emit prefetches of slots [starts[tree], starts[tree + 1]) (starts: an i32 buffer) of
 * each of the n buffers, whose elements have the given types: one per cache line; of
 * slot starts[tree] alone where not `whole`.
 */
void rep_prefetch_slots(LBuilder *b, uint32_t starts, uint32_t tree, const uint32_t *buffers, const LType *types, uint32_t n,
                        bool whole);
/* Emit the decoding of a node word into n's is_leaf, feature and word. */
void rep_decode_word(const RepLayout *layout, LBuilder *b, uint32_t word, RepNode *n);
/*
 * Emit the decision of a step: i1, true when the row goes right at split n. Where
 * leaf_stays, n may be a leaf, whose feature is then read as 0 (any answer will do).
 */
uint32_t rep_goes_right(const RepLayout *layout, LBuilder *b, const RepNode *n, const RepRow *row, bool leaf_stays);
/*
 * The same for split n of f known at compile time (the code representation's): only the
 * test n makes, its threshold an immediate, its category set a bit mask where it fits
 * in 64 bits, and the missing-value test only where NaN can reach it and its compare
 * does not send NaN its way already.
 */
uint32_t rep_split_goes_right(const RepLayout *layout, LBuilder *b, const HForest *f, const HNode *n, const RepRow *row);
/* i64: where feature `feature` (i64, or a constant where `known`) of row lies in its buffer (RepRow.feature_step). */
uint32_t rep_row_at(LBuilder *b, const RepRow *row, uint32_t feature, bool known);
/* The float compare that holds where x goes right at a split of that comparison (x not NaN, or NaN going right where nan_right); LCMP_COUNT: none decides NaN. */
LCmp rep_right_compare(HCompare compare, bool nan_right);
/* Whether the walk being lowered reads child_word's copy: a walk of keys that is not one_row's, where the layout has it. */
static inline bool rep_walks_words(const RepLayout *layout)
{
	return layout->child_word && layout->walk_keys && !layout->one_row;
}
/*
 * i1: whether n is a leaf: RepNode.is_leaf, or, read from a key copy whose leaves stay
 * (is_leaf LIR_NONE), its word's test where it tells (RepLayout.child_shift, child_word: a
 * split's word holds a nonzero offset, a leaf's is 0); else LIR_NONE, and only a step that
 * stays tells.
 */
uint32_t rep_leaf_test(const RepLayout *layout, LBuilder *b, const RepNode *n);
/* Emit the end of a step: child, or node itself where leaf_stays and node is a leaf. */
uint32_t rep_step_result(LBuilder *b, const RepNode *n, uint32_t node, uint32_t child, bool leaf_stays);
/*
 * Emit node + addend + (1 where the row goes right at split fields), of node's type (i64 or
 * i32): a complete tree's child of slot node where addend is node (one adc on x86).
 */
uint32_t rep_step_sum(RepLayout *layout, LBuilder *b, uint32_t node, uint32_t addend, const RepNode *fields,
                      const RepRow *row, bool leaf_stays);
/*
 * The step hook of layouts that keep trees complete (array, reorg): the root is slot 1,
 * the children of slot i are 2i and 2i+1 (a leaf's lie outside the tree: it stays where
 * leaf_stays).
 */
uint32_t rep_complete_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                           const RepRow *row, bool leaf_stays);

#endif
