/*
 * A GPU kernel's integers in 32 bits where they fit (lower_gpu_ints). The LIR computes
 * indices in i64, as a host's addresses want: a node's index, a tree's offset, the
 * column a split tests. On a GPU each 64-bit add, shift or or is two instructions on
 * two registers, at every step of every walk. The model's sizes are constants, so an
 * interval analysis bounds most of these values, and an i64 computation whose value
 * provably lies in i32's range is made an i32 one.
 *
 * The analysis: each scalar integer value's range [lo, hi], from the constants, the
 * kernel's place in the grid (GPU_INDEX: fewer than 1024 threads a block, fewer than
 * 2^32 blocks, which the runtimes clamp grids to), loops' bounds, VAR cells (the union
 * of what is set) and loads from the model's buffers (the least and greatest integer a
 * buffer holds: children's indices, trees' offsets), iterated to a fixed point; a value
 * that keeps growing, or an operation that may wrap, takes its type's whole range.
 * Parameters (rows, their count) and other loads are unbounded, so rows' offsets stay i64.
 *
 * The rewrite: an ADD, SUB, MUL, AND, OR, ADDC, SELECT or SHL (by less than 32) whose
 * value fits is made i32 where its operands are had in 32 bits at no cost (constants, the
 * grid's place, values made i32): it computes its low 32 bits from theirs, and is nsw
 * where they fit too. A truncated loop counter is not had so: a sum of it widened again
 * for an address costs more than the 64-bit sum. ASHR, MIN, SDIV and SHUFFLE are made
 * i32 where their operands fit as well; a VAR whose every value fits holds i32 and its
 * GETs read i32; a FOR whose bounds fit and whose counter cannot wrap past them counts
 * in i32; a ZEXT or SEXT of an i32 is its operand. A compare of two values that fit
 * compares in 32 bits (sign extension keeps signed and unsigned order). Addresses (LOAD,
 * STORE, INDEX, ATOMIC, PREFETCH) take an i32 index as it is; every other use of a value
 * made i32 takes it sign-extended back, so a value whose every use would (a loop's
 * bound) stays i64.
 */
#include "lower/lowering.h"

#include <stdlib.h>
#include <string.h>

/* Passes over a kernel before the analysis gives up (it leaves the kernel as it is). */
#define MAX_PASSES 64
/* Growths of a value's range before it takes its type's whole range (loops that count up). */
#define WIDEN_AFTER 4

/* Wide enough for a product of two i64s: ranges are computed exactly, then checked against their type. */
__extension__ typedef __int128 Wide;

typedef struct Range {
	int64_t lo, hi; /* lo > hi: empty (not yet reached) */
} Range;

/* How an instruction is rewritten. */
enum { KEEP, IN_PLACE, ALIAS /* a cast of an i32 to i64: narrow users read its operand */ };

typedef struct Ints {
	const LModule *m;
	LFunc *fn;
	uint32_t *order, n; /* the kernel's instructions in program order */
	uint32_t count;     /* instructions before the rewrite */
	Range *r;
	uint8_t *grown, *how;
	uint32_t *as32, *as64; /* conversions made so far, per instruction (LIR_NONE: none yet) */
	uint32_t *use_start, *uses; /* find_uses */
	Range *held;                /* per module buffer, the integers it holds (lazily: buffer_range) */
} Ints;


static const Range EMPTY = {1, 0};
static bool empty(Range a) { return a.lo > a.hi; }
static bool is_int(LType t) { return t == LTYPE_I1 || t == LTYPE_I8 || t == LTYPE_I32 || t == LTYPE_I64; }

static Range whole(LType t)
{
	switch (t) {
	case LTYPE_I1: return (Range){0, 1};
	case LTYPE_I8: return (Range){INT8_MIN, INT8_MAX};
	case LTYPE_I32: return (Range){INT32_MIN, INT32_MAX};
	default: return (Range){INT64_MIN, INT64_MAX};
	}
}

static bool within(Range a, Range b) { return empty(a) || (a.lo >= b.lo && a.hi <= b.hi); }
static bool fits32(Range a) { return within(a, whole(LTYPE_I32)); }

static Range join(Range a, Range b)
{
	if (empty(a))
		return b;
	if (empty(b))
		return a;
	return (Range){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}

/* [lo, hi] as a value of type t: its whole range where the operation may wrap. */
static Range fit(LType t, Wide lo, Wide hi)
{
	Range w = whole(t);
	return lo >= w.lo && hi <= w.hi ? (Range){(int64_t)lo, (int64_t)hi} : w;
}

/* The least and greatest of four corners (an operation monotone in each operand). */
static Range corners(LType t, const Wide v[4])
{
	Wide lo = v[0], hi = v[0];
	for (int i = 1; i < 4; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return fit(t, lo, hi);
}

/* The smallest 2^k - 1 at least x (x >= 0). */
static int64_t ones(int64_t x)
{
	uint64_t m = 0;
	while (m < (uint64_t)x)
		m = m << 1 | 1;
	return (int64_t)m;
}

static Range gpu_index_range(LGpuIndex g)
{
	if (g <= LGPU_THREAD_Z)
		return (Range){0, 1023};
	if (g <= LGPU_BLOCK_Z)
		return (Range){0, (int64_t)UINT32_MAX - 1};
	return g <= LGPU_BLOCK_DIM_Z ? (Range){1, 1024} : (Range){1, UINT32_MAX};
}

/* The integers module buffer k holds (its type's whole range for others). */
static Range buffer_range(Ints *s, uint32_t k)
{
	const LBuffer *buf = &s->m->buffers[k];
	if (empty(s->held[k])) {
		Range r = whole(buf->elem);
		if (buf->elem == LTYPE_I8 || buf->elem == LTYPE_I32 || buf->elem == LTYPE_I64) {
			r = EMPTY;
			for (uint64_t i = 0; i < buf->count; i++) {
				int64_t v = buf->elem == LTYPE_I8 ? ((const int8_t *)buf->data)[i]
				          : buf->elem == LTYPE_I32 ? ((const int32_t *)buf->data)[i] : ((const int64_t *)buf->data)[i];
				r = join(r, (Range){v, v});
			}
		}
		s->held[k] = empty(r) ? (Range){0, 0} : r;
	}
	return s->held[k];
}

/* The module buffer that address ptr lies in (a BUFFER, or an INDEX into one), else LIR_NONE. */
static uint32_t buffer_of(const LFunc *fn, uint32_t ptr)
{
	while (fn->insts[ptr].op == LOP_INDEX)
		ptr = fn->insts[ptr].a;
	return fn->insts[ptr].op == LOP_BUFFER ? (uint32_t)fn->insts[ptr].imm : LIR_NONE;
}

/* The range of instruction id's value from its operands' (empty while one of them is). */
static Range eval(Ints *s, uint32_t id)
{
	const LInst *in = &s->fn->insts[id];
	LType t = (LType)in->type;
	Range a = in->a != LIR_NONE ? s->r[in->a] : EMPTY, b = in->b != LIR_NONE ? s->r[in->b] : EMPTY;
	if (in->lanes > 1 || !is_int(t))
		return whole(t);
	if (lir_op_operands((LOp)in->op) >= 1 && in->op != LOP_SELECT && empty(a))
		return EMPTY;
	if (lir_op_operands((LOp)in->op) >= 2 && in->op != LOP_SELECT && empty(b))
		return EMPTY;
	switch ((LOp)in->op) {
	case LOP_CONST: return (Range){in->imm, in->imm};
	case LOP_ADD: return fit(t, (Wide)a.lo + b.lo, (Wide)a.hi + b.hi);
	case LOP_ADDC: return fit(t, (Wide)a.lo + b.lo, (Wide)a.hi + b.hi + 1);
	case LOP_SUB: return fit(t, (Wide)a.lo - b.hi, (Wide)a.hi - b.lo);
	case LOP_MUL: {
		Wide v[4] = {(Wide)a.lo * b.lo, (Wide)a.lo * b.hi, (Wide)a.hi * b.lo, (Wide)a.hi * b.hi};
		return corners(t, v);
	}
	case LOP_SHL: {
		if (b.lo < 0 || b.hi > 62)
			return whole(t);
		Wide low = (Wide)1 << b.lo, high = (Wide)1 << b.hi;
		Wide v[4] = {a.lo * low, a.lo * high, a.hi * low, a.hi * high};
		return corners(t, v);
	}
	case LOP_ASHR: {
		if (b.lo < 0 || b.hi > 63)
			return whole(t);
		Wide v[4] = {a.lo >> b.lo, a.lo >> b.hi, a.hi >> b.lo, a.hi >> b.hi};
		return corners(t, v);
	}
	case LOP_SDIV: {
		if (b.lo <= 0)
			return whole(t);
		Wide v[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
		return corners(t, v);
	}
	case LOP_AND:
		if (a.lo >= 0 || b.lo >= 0)
			return (Range){0, a.lo >= 0 && b.lo >= 0 ? (a.hi < b.hi ? a.hi : b.hi) : a.lo >= 0 ? a.hi : b.hi};
		return whole(t);
	case LOP_OR:
		if (a.lo >= 0 && b.lo >= 0)
			return (Range){a.lo > b.lo ? a.lo : b.lo, ones(a.hi > b.hi ? a.hi : b.hi)};
		return whole(t);
	case LOP_MIN: return (Range){a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
	case LOP_SELECT: return join(b, s->r[in->c]);
	case LOP_SHUFFLE: return a;
	case LOP_CTZ: return (Range){0, (int64_t)lir_type_size(t) * 8};
	case LOP_ICMP: case LOP_FCMP: return whole(LTYPE_I1);
	case LOP_CAST: {
		LType from = lir_type(s->fn, in->a);
		if (!is_int(from))
			return whole(t);
		if (in->sub == LCAST_ZEXT && a.lo < 0) /* the operand's bits, unsigned */
			return from == LTYPE_I64 ? whole(t) : (Range){0, from == LTYPE_I1 ? 1 : from == LTYPE_I8 ? UINT8_MAX : UINT32_MAX};
		if (in->sub == LCAST_ZEXT)
			return a;
		if (in->sub == LCAST_SEXT)
			return from == LTYPE_I1 ? (Range){-a.hi, -a.lo} : a;
		return in->sub == LCAST_TRUNC && within(a, whole(t)) ? a : whole(t);
	}
	case LOP_GET: return a;                      /* the cell's range */
	case LOP_VAR: return join(s->r[id], a);      /* its SETs join theirs in */
	case LOP_FOR:
	case LOP_PARALLEL_FOR:
		if (empty(s->r[in->c]) || s->r[in->c].lo <= 0)
			return whole(t);
		return (Range){a.lo, b.hi > a.lo ? b.hi - 1 : a.lo}; /* v < b: at most b - 1, where the loop runs */
	case LOP_GPU_INDEX: return gpu_index_range((LGpuIndex)in->sub);
	case LOP_LOAD: { /* from the model's data, what it holds: a child's index, a tree's offset */
		uint32_t k = buffer_of(s->fn, in->a);
		return k != LIR_NONE && s->m->buffers[k].elem == t ? buffer_range(s, k) : whole(t);
	}
	default: return whole(t);
	}
}

/* Widen cell id's range to take r; whether it grew. */
static bool grow(Ints *s, uint32_t id, Range r)
{
	Range now = join(s->r[id], r);
	if (now.lo == s->r[id].lo && now.hi == s->r[id].hi)
		return false;
	s->r[id] = ++s->grown[id] > WIDEN_AFTER ? whole((LType)s->fn->insts[id].type) : now;
	return true;
}

/* Every value's range, to a fixed point; false where it takes too many passes. */
static bool analyse(Ints *s)
{
	for (int pass = 0; pass < MAX_PASSES; pass++) {
		bool changed = false;
		for (uint32_t k = 0; k < s->n; k++) {
			uint32_t id = s->order[k];
			const LInst *in = &s->fn->insts[id];
			if (in->op == LOP_SET)
				changed |= !empty(s->r[in->b]) && grow(s, in->a, s->r[in->b]);
			else if (lir_op_has_result((LOp)in->op))
				changed |= grow(s, id, eval(s, id));
		}
		if (!changed)
			return true;
	}
	return false;
}

/* The instructions of region first and those nested in it, in program order. */
static void collect(Ints *s, uint32_t first)
{
	for (uint32_t id = first; id != LIR_NONE; id = s->fn->insts[id].next) {
		s->order[s->n++] = id;
		if (lir_op_nests((LOp)s->fn->insts[id].op)) {
			collect(s, s->fn->insts[id].body);
			collect(s, s->fn->insts[id].alt);
		}
	}
}

/*
 * Whether operand x is had in 32 bits at no cost: made so itself, a constant, or the
 * grid's place (an i32 the code generator zero-extended). Any other i64 would be
 * truncated, and a sum of it sign-extended back for an address costs more than the
 * 64-bit sum (a loop's counter: LLVM cannot tell that it fits).
 */
static bool had_in_32(const Ints *s, uint32_t x)
{
	return s->how[x] != KEEP || s->fn->insts[x].op == LOP_CONST || s->fn->insts[x].op == LOP_GPU_INDEX;
}

/* Whether i64 instruction id is computed in i32 (how: IN_PLACE or ALIAS), else KEEP. */
static uint8_t decide(const Ints *s, uint32_t id)
{
	const LInst *in = &s->fn->insts[id];
	Range a = in->a != LIR_NONE ? s->r[in->a] : EMPTY, b = in->b != LIR_NONE ? s->r[in->b] : EMPTY;
	if (in->type != LTYPE_I64 || in->lanes > 1 || !fits32(s->r[id]))
		return KEEP;
	switch ((LOp)in->op) {
	case LOP_ADD: case LOP_SUB: case LOP_MUL: case LOP_AND: case LOP_OR: case LOP_ADDC: /* (ADDC's c: an i1) */
		return had_in_32(s, in->a) && had_in_32(s, in->b) ? IN_PLACE : KEEP;
	case LOP_SELECT: return had_in_32(s, in->b) && had_in_32(s, in->c) ? IN_PLACE : KEEP;
	case LOP_VAR: return IN_PLACE;
	case LOP_FOR: /* counts in i32 where its bounds are had so and v + c cannot wrap */
		return fits32(a) && fits32(b) && fits32(s->r[in->c]) && had_in_32(s, in->a) && had_in_32(s, in->b) &&
		               had_in_32(s, in->c) && (Wide)b.hi - 1 + s->r[in->c].hi <= INT32_MAX
		           ? IN_PLACE : KEEP;
	case LOP_SHL: return within(b, (Range){0, 31}) && had_in_32(s, in->a) && had_in_32(s, in->b) ? IN_PLACE : KEEP;
	case LOP_ASHR: case LOP_MIN: case LOP_SDIV:
		return fits32(a) && fits32(b) && had_in_32(s, in->a) && had_in_32(s, in->b) ? IN_PLACE : KEEP;
	case LOP_SHUFFLE: return fits32(a) && had_in_32(s, in->a) ? IN_PLACE : KEEP;
	case LOP_GET: return s->how[in->a] == IN_PLACE ? IN_PLACE : KEEP;
	case LOP_CAST:
		if (in->sub != LCAST_ZEXT && in->sub != LCAST_SEXT)
			return KEEP;
		return lir_type(s->fn, in->a) == LTYPE_I32 ? ALIAS : IN_PLACE; /* from i1 or i8: to i32 instead */
	default: return KEEP;
	}
}

/* A new instruction after instruction at (or first in its body, into_body), with operand x. */
static uint32_t insert(LFunc *fn, uint32_t at, bool into_body, LOp op, LType type, uint8_t sub, uint32_t x, int64_t imm)
{
	uint32_t id = fn->num_insts, *link;
	LInst *in;
	GROW(fn->insts, (size_t)id + 1, fn->insts_cap);
	fn->num_insts++;
	in = &fn->insts[id];
	*in = (LInst){.op = (uint16_t)op, .type = (uint8_t)type, .sub = sub, .a = x, .b = LIR_NONE, .c = LIR_NONE,
	              .body = LIR_NONE, .alt = LIR_NONE, .imm = imm};
	link = into_body ? &fn->insts[at].body : &fn->insts[at].next;
	in->next = *link;
	*link = id;
	return id;
}

/* Whether instruction x is a loop whose value is its counter (conversions of it go first in its body). */
static bool counter(const Ints *s, uint32_t x) { return s->fn->insts[x].op == LOP_FOR || s->fn->insts[x].op == LOP_PARALLEL_FOR; }

/* Original i64 value x as an i32. */
static uint32_t as32(Ints *s, uint32_t x)
{
	const LInst *in = &s->fn->insts[x];
	if (s->how[x] == IN_PLACE)
		return x;
	if (s->how[x] == ALIAS)
		return in->a;
	if (s->as32[x] == LIR_NONE)
		s->as32[x] = in->op == LOP_CONST ? insert(s->fn, x, false, LOP_CONST, LTYPE_I32, 0, LIR_NONE, (int32_t)in->imm)
		                                 : insert(s->fn, x, counter(s, x), LOP_CAST, LTYPE_I32, LCAST_TRUNC, x, 0);
	return s->as32[x];
}

/* Value x, made i32 in place, as the i64 it was. */
static uint32_t as64(Ints *s, uint32_t x)
{
	if (s->as64[x] == LIR_NONE)
		s->as64[x] = insert(s->fn, x, counter(s, x), LOP_CAST, LTYPE_I64, LCAST_SEXT, x, 0);
	return s->as64[x];
}

/* Whether operand slot k of instruction id (not made i32) takes its value as i32 or as i64 alike: an address's index. */
static bool takes_either(const LInst *in, int k)
{
	return k == 1 && (in->op == LOP_LOAD || in->op == LOP_STORE || in->op == LOP_INDEX || in->op == LOP_ATOMIC ||
	                  in->op == LOP_PREFETCH);
}

/* Whether operand slot k of instruction id, made i32 in place, holds a value of its type (not a cell or a condition). */
static bool slot_of_type(const LInst *in, int k)
{
	switch ((LOp)in->op) {
	case LOP_SELECT: return k != 0;
	case LOP_ADDC: return k != 2;
	case LOP_SHUFFLE: case LOP_VAR: return k == 0;
	case LOP_GET: case LOP_CAST: return false;
	default: return true;
	}
}

/* Whether ICMP id compares in 32 bits: both operands fit and are had so, one of them made i32. */
static bool compares32(const Ints *s, uint32_t id)
{
	const LInst *in = &s->fn->insts[id];
	return in->op == LOP_ICMP && in->lanes <= 1 && lir_type(s->fn, in->a) == LTYPE_I64 && fits32(s->r[in->a]) &&
	       fits32(s->r[in->b]) && had_in_32(s, in->a) && had_in_32(s, in->b) &&
	       (s->how[in->a] != KEEP || s->how[in->b] != KEEP);
}

/* Whether operand slot k of instruction id holds a cell (of a GET or SET), not a value. */
static bool cell_slot(const LInst *in, int k) { return k == 0 && (in->op == LOP_GET || in->op == LOP_SET); }

/* Whether instruction id takes the value in its operand slot k as an i32 (compare32: compares32's answer). */
static bool takes32(const Ints *s, uint32_t id, int k, bool compare32)
{
	const LInst *in = &s->fn->insts[id];
	return (s->how[id] == IN_PLACE && slot_of_type(in, k)) || compare32 ||
	       (in->op == LOP_SET && k == 1 && s->how[in->a] == IN_PLACE);
}

/* Whether value x in 32 bits spares some use of it a conversion: one that takes an i32, or an address. */
static bool pays(const Ints *s, uint32_t x)
{
	for (uint32_t u = s->use_start[x]; u < s->use_start[x + 1]; u++) {
		uint32_t user = s->uses[u] >> 2;
		int k = (int)(s->uses[u] & 3);
		if (takes32(s, user, k, compares32(s, user)) || takes_either(&s->fn->insts[user], k))
			return true;
	}
	return false;
}

/*
 * Keep in i64 the values whose 32 bits would spare nothing (every use would widen them
 * again: a loop's bounds), users before their operands so that the undoing runs back
 * through a computation. A VAR's GETs follow it: made i32 with it, or not at all.
 */
static void keep_where_nothing_pays(Ints *s)
{
	for (uint32_t k = s->n; k-- > 0;) {
		uint32_t x = s->order[k];
		bool some = false;
		if (s->how[x] == KEEP || s->fn->insts[x].op == LOP_GET)
			continue;
		if (s->fn->insts[x].op != LOP_VAR) {
			s->how[x] = pays(s, x) ? s->how[x] : KEEP;
			continue;
		}
		for (uint32_t u = s->use_start[x]; u < s->use_start[x + 1]; u++)
			some |= s->fn->insts[s->uses[u] >> 2].op == LOP_GET && pays(s, s->uses[u] >> 2);
		for (uint32_t u = s->use_start[x]; u < s->use_start[x + 1] && !some; u++)
			s->how[s->uses[u] >> 2] = KEEP; /* the GETs (SETs stay KEEP) */
		s->how[x] = some ? IN_PLACE : KEEP;
	}
}

/* Every use of each instruction as (user << 2 | slot), grouped by the value used (uses from use_start[x]). */
static void find_uses(Ints *s)
{
	uint32_t total = 0;
	s->use_start = xcalloc(s->count + 2, sizeof *s->use_start);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < s->n; k++) {
			const LInst *in = &s->fn->insts[s->order[k]];
			for (int j = 0; j < (int)lir_op_operands((LOp)in->op); j++) {
				uint32_t x = j == 0 ? in->a : j == 1 ? in->b : in->c;
				if (x == LIR_NONE || x >= s->count)
					continue;
				if (pass == 0)
					s->use_start[x + 2]++;
				else
					s->uses[s->use_start[x + 1]++] = s->order[k] << 2 | (uint32_t)j;
			}
		}
		if (pass == 0) {
			for (uint32_t x = 0; x < s->count; x++)
				s->use_start[x + 2] += s->use_start[x + 1];
			total = s->use_start[s->count + 1];
			s->uses = xmalloc((total + 1) * sizeof *s->uses);
		}
	}
}

/*
 * An ADD, SUB, MUL or SHL made i32 whose operands fit as well never wraps there (its
 * value fits): nsw, so that an address may take a sum's constant apart. (An operand
 * truncated from beyond i32's range, a block's number past 2^31, may wrap on its way to
 * a value that fits.) Before the operands are rewritten: their ranges are the analysis'.
 */
static void mark_nsw(Ints *s, uint32_t id)
{
	LInst *in = &s->fn->insts[id];
	if ((in->op == LOP_ADD || in->op == LOP_SUB || in->op == LOP_MUL || in->op == LOP_SHL) && s->how[id] == IN_PLACE &&
	    fits32(s->r[in->a]) && fits32(s->r[in->b]))
		in->imm = LIR_NSW;
}

/* Rewrite operand slot k of instruction id for the values made i32 (compare32: compares32's answer before any). */
static void rewrite_operand(Ints *s, uint32_t id, int k, bool compare32)
{
	const LInst *in = &s->fn->insts[id];
	uint32_t x = k == 0 ? in->a : k == 1 ? in->b : in->c, y = x;
	if (x == LIR_NONE || x >= s->count || cell_slot(in, k))
		return;
	if (takes32(s, id, k, compare32)) {
		if (s->how[x] != KEEP || lir_type(s->fn, x) == LTYPE_I64)
			y = as32(s, x);
	} else if (s->how[x] == IN_PLACE && !takes_either(in, k))
		y = as64(s, x);
	/* a conversion may have moved the instructions: the slot is found again */
	*(k == 0 ? &s->fn->insts[id].a : k == 1 ? &s->fn->insts[id].b : &s->fn->insts[id].c) = y;
}

void lower_gpu_ints(const LModule *m, LFunc *fn)
{
	Ints s = {.m = m, .fn = fn, .count = fn->num_insts};
	s.order = xmalloc((s.count + 1) * sizeof *s.order);
	s.r = xmalloc((s.count + 1) * sizeof *s.r);
	s.grown = xcalloc(s.count + 1, 1);
	s.how = xcalloc(s.count + 1, 1);
	s.as32 = xmalloc((s.count + 1) * sizeof *s.as32);
	s.as64 = xmalloc((s.count + 1) * sizeof *s.as64);
	s.held = xmalloc((m->num_buffers + 1) * sizeof *s.held);
	for (uint32_t k = 0; k < m->num_buffers; k++)
		s.held[k] = EMPTY;
	for (uint32_t i = 0; i < s.count; i++) {
		s.r[i] = EMPTY;
		s.as32[i] = s.as64[i] = LIR_NONE;
	}
	collect(&s, fn->body);
	if (analyse(&s)) {
		for (uint32_t k = 0; k < s.n; k++)
			s.how[s.order[k]] = decide(&s, s.order[k]);
		find_uses(&s);
		keep_where_nothing_pays(&s);
		for (uint32_t k = 0; k < s.n; k++) {
			bool compare32 = compares32(&s, s.order[k]);
			mark_nsw(&s, s.order[k]);
			for (int j = 0; j < (int)lir_op_operands((LOp)fn->insts[s.order[k]].op); j++)
				rewrite_operand(&s, s.order[k], j, compare32);
		}
		for (uint32_t k = 0; k < s.n; k++)
			if (s.how[s.order[k]] == IN_PLACE)
				fn->insts[s.order[k]].type = LTYPE_I32;
	}
	free(s.order);
	free(s.r);
	free(s.grown);
	free(s.how);
	free(s.as32);
	free(s.as64);
	free(s.use_start);
	free(s.uses);
	free(s.held);
}
