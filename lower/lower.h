/*
 * Passes and lowerings. The pipeline (tools/grove.c) is:
 *
 *   model file --front--> HIR --lower_hir_to_mir--> MIR --lower_mir_to_lir(rep)--> LIR --target--> artifact
 *
 * Representations decide how the forest is laid out in memory; the MIR -> LIR
 * lowering reaches the layout only through the LRepresentation interface (rep.h).
 */
#ifndef GROVE_LOWER_LOWER_H
#define GROVE_LOWER_LOWER_H

#include "ir/hir.h"
#include "ir/lir.h"
#include "ir/mir.h"

/* HIR pass: pad every tree so that all leaves sit at the forest's largest depth (new splits send both ways to copies of the leaf). */
void hir_pad(HForest *f);
/* HIR: pad trees [first, end) so that no leaf is shallower than depth (the others are kept as they are). */
void hir_pad_trees(HForest *f, uint32_t first, uint32_t end, uint32_t depth);
/* HIR pass: for each loop v with unrollWalk(v, d), pad the trees v's walks reach so that no leaf is shallower than d (or their deepest leaf). */
void hir_pad_unrolled_walks(HForest *f);
/* Analysis: the number of nodes f would have after hir_pad. */
uint64_t hir_padded_nodes(const HForest *f);
/* Whether padding f pays: it lets walks run without leaf tests at a bounded memory cost. */
bool lower_padding_pays(const HForest *f);

/* hir_choose_schedule's tree_tile when the choice is left to it. */
#define HIR_TILE_AUTO UINT32_MAX
/*
 * HIR: give f the schedule it should have when the user gives none: the default nest
 * for models that fit in cache, row tiles walking tiles of trees for the others.
 * tree_tile: trees per tile, 0 for no tiling, HIR_TILE_AUTO to choose.
 */
void hir_choose_schedule(HForest *f, uint32_t tree_tile);

/*
 * MIR pass: set each walk's straight-line steps from the innermost loop around it:
 * peelWalk(v, n) and unrollWalk(v, d) take n (d) steps; other walks the steps no leaf
 * of the trees they reach can end. A walk whose steps reach every leaf of its trees
 * needs no loop after them (exact).
 */
void mir_unroll_walks(MModule *m);

/* The most rows or trees mir_interleave lets run together. */
#define MIR_MAX_INTERLEAVE 16
/*
 * MIR pass: let row loops whose rows include their own variable run `rows` rows
 * together, and tree loops that only walk their trees walk `trees` trees together
 * where rows run one at a time (unroll and jam).
 */
void mir_interleave(MModule *m, uint32_t rows, uint32_t trees);
/* MIR pass: interleave the walks of the loops the schedule marks interleave(v), all v's iterations together. */
void mir_interleave_directives(MModule *m);

/* Lower a verified forest to MIR under its schedule. Returns NULL and fills e if the schedule cannot be lowered. */
MModule *lower_hir_to_mir(const HForest *f, Error *e);

/* Names the representations lower_mir_to_lir accepts ("array", ...), NULL-terminated. */
extern const char *const lower_representation_names[];

/* Lower MIR to LIR laying the model out with the named representation (NULL = default). */
LModule *lower_mir_to_lir(const MModule *m, const char *representation, Error *e);

#endif
