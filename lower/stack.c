/* The lowering's stack budget: buffers and a host function's arrays must fit on a thread's stack. */
#include "lower/lowering.h"

/* Bytes of stack a buffer of a bounded number of rows may take. */
#define MAX_STACK_BUFFER (1u << 20)

/* Buffers on the stack must fit there. */
bool lower_check_buffers(const MModule *m, Error *e)
{
	for (uint32_t b = 0; b < m->num_buffers; b++) {
		const MBuffer *buf = &m->buffers[b];
		uint64_t bytes = (uint64_t)buf->rows * buf->copies * buf->outputs * (buf->type == HTYPE_F64 ? 8 : 4);
		if (buf->type != m->forest->leaf_type)
			return error_set(e, "mir: buffer m%u holds %s, the margins accumulate in %s", b, hir_type_name((HType)buf->type),
			                 hir_type_name(m->forest->leaf_type)), false;
		if (buf->rows != MIR_ROWS_ALL && bytes > MAX_STACK_BUFFER)
			return error_set(e, "schedule: buffer m%u (%u copies of %lld rows x %u margins) takes %llu bytes, more than the %u a stack buffer may take; use smaller tiles",
			                 b, buf->copies, (long long)buf->rows, buf->outputs, (unsigned long long)bytes, MAX_STACK_BUFFER), false;
	}
	return true;
}

/*
 * Bytes of stack one host function's arrays may take together: buffers, their copy for
 * each row walked side by side, row copies, key tiles. Threads' stacks (OpenMP's
 * workers', a caller's) are a few MiB; past this a schedule (say, a parallel tree loop's
 * copy per iteration of every row's margins, for each of 16 interleaved rows) would
 * overflow them.
 */
#define LOWER_STACK_BYTES (4u << 20)

/* The arrays of each host function of m fit in LOWER_STACK_BYTES (counted as though all live at once). */
bool lower_check_stack(const LModule *m, Error *e)
{
	for (uint32_t f = 0; f < m->num_funcs; f++) {
		const LFunc *fn = m->funcs[f];
		uint64_t bytes = 0;
		for (uint32_t i = 0; i < fn->num_insts; i++)
			if (fn->insts[i].op == LOP_LOCAL_ARRAY)
				bytes += (uint64_t)fn->insts[i].imm * lir_type_size((LType)fn->insts[i].type);
		if (bytes > LOWER_STACK_BYTES)
			return error_set(e, "schedule: function %s would keep %llu bytes on the stack (its buffers, a copy of them for "
			                    "each row walked side by side, copies of rows), more than the %u a thread's stack may "
			                    "spare; use smaller tiles, fewer rows side by side, or no parallel tree loop",
			                 fn->name, (unsigned long long)bytes, LOWER_STACK_BYTES), false;
	}
	return true;
}
