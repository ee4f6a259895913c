/*
 * How the GPU back-ends (cuda.c, hsa.c) cut a call's host rows into chunks: copied to
 * the device a chunk at a time through pinned host memory, so that a chunk's copy in and
 * the last chunk's copy out run while the other chunk's kernels do.
 */
#include "rt/device.h"

#include <string.h>

/*
 * Host rows of calls of at least two chunks go in chunks of CHUNK_BYTES of rows, and at
 * least CHUNK_MIN_ROWS rows: the default GPU schedule's large batches' kernel
 * (lower/hir_gpu_schedule.c, GPU_FEW_ROWS).
 */
#define CHUNK_BYTES ((size_t)4 << 20)
#define CHUNK_MIN_ROWS 32768

void grove_chunk_plan(const DeviceCall *call, ChunkPlan *p)
{
	*p = (ChunkPlan){.rows = call->nrows, .chunks = 1};
	if (call->nrows > 0) {
		p->row_in = call->rows_bytes / (size_t)call->nrows;
		p->row_out = call->out_bytes / (size_t)call->nrows;
	}
	if (!call->resident) {
		int64_t rows = p->row_in && CHUNK_BYTES / p->row_in > CHUNK_MIN_ROWS ? (int64_t)(CHUNK_BYTES / p->row_in)
		                                                                       : CHUNK_MIN_ROWS;
		if (call->nrows >= 2 * rows) {
			p->rows = rows;
			p->chunks = (call->nrows + rows - 1) / rows;
		}
	}
	p->slot_bytes = (size_t)p->rows * (p->row_in + p->row_out);
}

int64_t grove_chunk_rows(const DeviceCall *call, const ChunkPlan *p, int64_t i)
{
	return call->nrows - i * p->rows < p->rows ? call->nrows - i * p->rows : p->rows;
}

char *grove_chunk_in(const DeviceCall *call, const ChunkPlan *p, int64_t i, void *pinned)
{
	char *slot = (char *)pinned + (size_t)(i & 1) * p->slot_bytes;
	memcpy(slot, (const char *)call->rows + grove_chunk_rows_at(p, i), (size_t)grove_chunk_rows(call, p, i) * p->row_in);
	return slot;
}

void grove_chunk_out(const DeviceCall *call, const ChunkPlan *p, int64_t i, const void *pinned)
{
	memcpy((char *)call->out + grove_chunk_out_at(p, i),
	       (const char *)pinned + (size_t)(i & 1) * p->slot_bytes + grove_chunk_rows_at(p, 1),
	       (size_t)grove_chunk_rows(call, p, i) * p->row_out);
}
