/*
 * MIR: the loop nest the schedule asks for, independent of target and of how the
 * model is laid out in memory.
 *
 * A function is a tree of operations stored in one array and named by 32-bit index:
 * loops over index variables (sequential or parallel) whose bodies are lists of
 * operations, tree walks, and explicit reductions into the result. An index variable's
 * value is an absolute offset, so the row of an iteration is the sum of the values of
 * the enclosing batch variables, and the tree the sum of the tree variables.
 */
#ifndef GROVE_IR_MIR_H
#define GROVE_IR_MIR_H

#include "ir/hir.h"

#define MIR_NONE UINT32_MAX

/* Columns: name, printed text. */
#define MIR_OPS(X)                                                                     \
	X(FOR, "for")             /* loop over index variable `var`; body */           \
	X(INIT, "init")           /* result[row, :] = base scores */                    \
	X(GET_TREE, "getTree")    /* the tree at index `tree` */                        \
	X(WALK, "walk")           /* leaf value of tree `a` for row `row` */            \
	X(REDUCE, "reduce")       /* result[row, output(tree a)] += value b */          \
	X(TRANSFORM, "transform") /* out[row, :] = transform(result[row, :]) */

typedef enum MOp {
#define X(name, text) MOP_##name,
	MIR_OPS(X)
#undef X
} MOp;

/* A sum of index variables (HSchedule.vars indices): a row or a tree number. */
#define MIR_MAX_TERMS 8
typedef struct MIndex {
	uint8_t num_terms;
	int8_t terms[MIR_MAX_TERMS];
} MIndex;

typedef struct MInst {
	uint8_t op;          /* MOp */
	uint8_t parallel;    /* FOR: iterations may run concurrently */
	uint8_t exact;       /* WALK: the peeled steps always end on a leaf, no loop follows them */
	uint8_t interleave;  /* FOR: this many consecutive rows (or trees) run together, their walks interleaved (0, 1 = off) */
	uint16_t peel;       /* WALK: steps taken in straight-line code before the first leaf test */
	uint16_t peel_safe;  /* WALK: how many of them no leaf can end; a later peeled step from a leaf stays on it */
	int32_t var;         /* FOR: the index variable */
	MIndex row;          /* INIT, WALK, REDUCE, TRANSFORM: the row */
	MIndex tree;         /* GET_TREE: the tree */
	uint32_t a, b;       /* operands: values of earlier instructions */
	uint32_t body;       /* FOR: first instruction of the body */
	uint32_t next;       /* next instruction in the same list */
} MInst;

/*
 * The predict function over a forest. Loop ranges follow from the variables'
 * lineage in `forest->schedule` (hir_schedule_range).
 */
typedef struct MModule {
	const HForest *forest;
	MInst *insts;
	uint32_t num_insts;
	size_t insts_cap;
	uint32_t body;       /* first instruction */
} MModule;

/* A new empty module over forest f (which must outlive it). */
MModule *mir_module_new(const HForest *f);
/* Free a module. */
void mir_module_free(MModule *m);
/* A list of instructions being built: its first and last elements (MIR_NONE when empty). */
typedef struct MList {
	uint32_t first, last;
} MList;

/* Append a new instruction of kind op to list l (all fields MIR_NONE or zero); returns it. */
uint32_t mir_append(MModule *m, MList *l, MOp op);

/* Check the module: variables in scope, operands defined before use, every reduce inside its tree loops. */
bool mir_verify(const MModule *m, Error *e);
/* Print the module as text (stable; used for golden tests). */
void mir_print(FILE *out, const MModule *m);

const char *mir_op_name(MOp op);

#endif
