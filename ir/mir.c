/* MIR: building, verifying and printing loop nests. */
#include "ir/mir.h"

#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {
#define X(name, text) text,
	MIR_OPS(X)
#undef X
};

const char *mir_op_name(MOp op) { return op < COUNT_OF(op_names) ? op_names[op] : "?"; }

MReduceOp mir_reduce_op(const HForest *f)
{
	return f->aggregate == HAGGREGATE_MIN ? MREDUCE_MIN : f->aggregate == HAGGREGATE_MAX ? MREDUCE_MAX : MREDUCE_SUM;
}

/* How a reduction of operator op is printed. */
static const char *reduce_op_text(uint8_t op) { return op == MREDUCE_MIN ? "min=" : op == MREDUCE_MAX ? "max=" : "+="; }

MModule *mir_module_new(const HForest *f)
{
	MModule *m = xcalloc(1, sizeof *m);
	const HSchedule *s = &f->schedule;
	m->forest = f;
	m->body = MIR_NONE;
	m->loops = xcalloc(s->num_vars + 1, sizeof *m->loops);
	for (uint32_t v = 0; v < s->num_vars; v++) {
		if (s->vars[v].has_loop)
			hir_schedule_range(s, (int32_t)v, &m->loops[v].range);
		m->loops[v].rows = m->loops[v].range.step; /* (lower_hir_to_mir corrects a reordered tile's) */
		hir_schedule_tree_span(s, (int32_t)v, &m->loops[v].first_tree, &m->loops[v].end_tree);
	}
	return m;
}

void mir_module_free(MModule *m)
{
	if (!m)
		return;
	free(m->insts);
	free(m->buffers);
	free(m->loops);
	free(m);
}

void mir_loop_range(const MModule *m, int32_t var, HRange *r) { *r = m->loops[var].range; }

void mir_loop_trees(const MModule *m, int32_t var, uint32_t *first, uint32_t *end)
{
	*first = var == HIR_NONE ? 0 : m->loops[var].first_tree;
	*end = var == HIR_NONE ? m->forest->num_trees : m->loops[var].end_tree;
}

uint32_t mir_new(MModule *m, MOp op)
{
	uint32_t id = m->num_insts;
	MInst *inst;
	GROW(m->insts, (size_t)id + 1, m->insts_cap);
	inst = &m->insts[m->num_insts++];
	memset(inst, 0, sizeof *inst);
	inst->op = (uint8_t)op;
	inst->var = HIR_NONE;
	inst->a = inst->b = inst->buf = inst->src = inst->body = inst->next = MIR_NONE;
	return id;
}

void mir_link_after(MModule *m, uint32_t owner, uint32_t prev, uint32_t id)
{
	uint32_t *link = prev != MIR_NONE ? &m->insts[prev].next : owner != MIR_NONE ? &m->insts[owner].body : &m->body;
	m->insts[id].next = *link;
	*link = id;
}

uint32_t mir_buffer_add(MModule *m, const MBuffer *buffer)
{
	GROW(m->buffers, (size_t)m->num_buffers + 1, m->buffers_cap);
	m->buffers[m->num_buffers] = *buffer;
	return m->num_buffers++;
}

bool mir_index_has(const MIndex *index, int32_t var)
{
	for (uint32_t i = 0; i < index->num_terms; i++)
		if (index->terms[i] == var)
			return true;
	return false;
}

bool mir_walks(const MModule *m, uint32_t id)
{
	if (m->insts[id].op == MOP_WALK)
		return true;
	for (uint32_t c = m->insts[id].body; c != MIR_NONE; c = m->insts[c].next)
		if (mir_walks(m, c))
			return true;
	return false;
}

bool mir_some(const MModule *m, uint32_t id, bool (*holds)(const MModule *, const MInst *))
{
	for (; id != MIR_NONE; id = m->insts[id].next)
		if (holds(m, &m->insts[id]) || mir_some(m, m->insts[id].body, holds))
			return true;
	return false;
}

uint32_t mir_append(MModule *m, MList *l, MOp op)
{
	uint32_t id = mir_new(m, op);
	if (l->last == MIR_NONE)
		l->first = id;
	else
		m->insts[l->last].next = id;
	l->last = id;
	return id;
}

/* --- verification --- */

typedef struct Verifier {
	const MModule *m;
	uint8_t *defined;              /* instruction has been seen (in scope or earlier) */
	uint8_t *declared;             /* buffer is declared in an enclosing list */
	bool in_scope[HIR_MAX_VARS];   /* variable has an enclosing loop */
	Error *e;
} Verifier;

static const char *op_of(const Verifier *v, uint32_t id) { return mir_op_name((MOp)v->m->insts[id].op); }

static bool verify_index(Verifier *v, uint32_t id, const MIndex *index, bool over_trees)
{
	const HSchedule *s = &v->m->forest->schedule;
	if (index->num_terms == 0 || index->num_terms > MIR_MAX_TERMS)
		return error_set(v->e, "mir: %%%u (%s): empty index", id, op_of(v, id));
	for (uint32_t i = 0; i < index->num_terms; i++) {
		int var = index->terms[i];
		if (var < 0 || (uint32_t)var >= s->num_vars || !v->in_scope[var])
			return error_set(v->e, "mir: %%%u (%s): index variable %d not in scope", id, op_of(v, id), var);
		if (s->vars[var].over_trees != over_trees)
			return error_set(v->e, "mir: %%%u: variable '%s' indexes the wrong dimension", id, s->vars[var].name);
	}
	return true;
}

static bool verify_operand(Verifier *v, uint32_t id, uint32_t operand, MOp expected)
{
	if (operand >= v->m->num_insts || !v->defined[operand] || v->m->insts[operand].op != expected)
		return error_set(v->e, "mir: %%%u (%s): operand %%%u is not a %s defined before it", id, op_of(v, id), operand,
		                 mir_op_name(expected));
	return true;
}

/* Whether every variable of part is one of whole's. */
static bool index_includes(const MIndex *whole, const MIndex *part)
{
	for (uint32_t i = 0; i < part->num_terms; i++)
		if (!mir_index_has(whole, part->terms[i]))
			return false;
	return true;
}

/*
 * Buffer b is declared around instruction id; one_copy: the operation touches the copy
 * of the current iteration, so the loop the buffer is privatised along encloses it;
 * with row, row includes the buffer's base.
 */
static bool verify_buffer(Verifier *v, uint32_t id, uint32_t b, bool one_copy, const MIndex *row)
{
	const MBuffer *buf;
	if (b >= v->m->num_buffers || !v->declared[b])
		return error_set(v->e, "mir: %%%u (%s): buffer %u is not declared around it", id, op_of(v, id), b);
	buf = &v->m->buffers[b];
	if (one_copy && buf->copy_var != HIR_NONE && !v->in_scope[buf->copy_var])
		return error_set(v->e, "mir: %%%u (%s): buffer m%u is privatised along '%s', whose loop does not enclose it", id,
		                 op_of(v, id), b, v->m->forest->schedule.vars[buf->copy_var].name);
	if (row && !index_includes(row, &buf->base))
		return error_set(v->e, "mir: %%%u (%s): its row does not include the row base of buffer m%u", id, op_of(v, id), b);
	return true;
}

static bool verify_list(Verifier *v, uint32_t first)
{
	const MModule *m = v->m;
	const HSchedule *s = &m->forest->schedule;
	bool ok = true;
	uint32_t id;
	for (id = first; ok && id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst;
		if (id >= m->num_insts || v->defined[id])
			return error_set(v->e, "mir: instruction list is malformed at %%%u", id);
		inst = &m->insts[id];
		switch ((MOp)inst->op) {
		case MOP_FOR:
			if (inst->var < 0 || (uint32_t)inst->var >= s->num_vars || v->in_scope[inst->var])
				return error_set(v->e, "mir: %%%u: loop over a bad or already bound variable", id);
			if (!(inst->loop & MLOOP_TREES) != !s->vars[inst->var].over_trees)
				return error_set(v->e, "mir: %%%u: loop over %s marked as over %s", id, s->vars[inst->var].name,
				                 inst->loop & MLOOP_TREES ? "trees" : "rows");
			if ((inst->loop & MLOOP_PREFETCH) && !(inst->loop & MLOOP_CACHE))
				return error_set(v->e, "mir: %%%u: loop prefetched but not cached", id);
			v->in_scope[inst->var] = true;
			ok = verify_list(v, inst->body);
			v->in_scope[inst->var] = false;
			break;
		case MOP_BUFFER:
			if (inst->buf >= m->num_buffers || v->declared[inst->buf])
				return error_set(v->e, "mir: %%%u: buffer %u is unknown or declared twice", id, inst->buf);
			v->declared[inst->buf] = 1;
			break;
		case MOP_INIT:
			ok = verify_buffer(v, id, inst->buf, false, NULL);
			break;
		case MOP_GET_TREE:
			ok = verify_index(v, id, &inst->tree, true);
			break;
		case MOP_WALK:
			ok = verify_index(v, id, &inst->row, false) && verify_operand(v, id, inst->a, MOP_GET_TREE);
			break;
		case MOP_REDUCE:
			ok = verify_index(v, id, &inst->row, false) && verify_operand(v, id, inst->a, MOP_GET_TREE) &&
			     verify_operand(v, id, inst->b, MOP_WALK) && verify_buffer(v, id, inst->buf, true, &inst->row);
			break;
		case MOP_REDUCE_DIM:
			ok = verify_buffer(v, id, inst->buf, true, NULL) && verify_buffer(v, id, inst->src, false, NULL);
			if (ok && m->buffers[inst->src].of != inst->buf)
				return error_set(v->e, "mir: %%%u: m%u is not a privatised copy of m%u", id, inst->src, inst->buf);
			if (ok && !index_includes(&m->buffers[inst->src].base, &m->buffers[inst->buf].base) &&
			    !index_includes(&m->buffers[inst->buf].base, &m->buffers[inst->src].base))
				return error_set(v->e, "mir: %%%u: the rows of m%u and of its copy m%u do not nest", id, inst->buf, inst->src);
			break;
		case MOP_TRANSFORM:
			ok = verify_index(v, id, &inst->row, false) && verify_buffer(v, id, inst->buf, true, &inst->row);
			if (ok && m->buffers[inst->buf].copy_var != HIR_NONE)
				return error_set(v->e, "mir: %%%u: transform of the privatised buffer m%u", id, inst->buf);
			break;
		case MOP_IF_COMPLETE:
			if (inst->span != MIR_ROWS_ALL && inst->span < 1)
				return error_set(v->e, "mir: %%%u: ifComplete over %lld rows", id, (long long)inst->span);
			ok = (inst->row.num_terms == 0 || verify_index(v, id, &inst->row, false)) && verify_list(v, inst->body);
			break;
		default:
			return error_set(v->e, "mir: %%%u: unknown operation %u", id, inst->op);
		}
		v->defined[id] = 1;
	}
	/* The buffers declared in this list end with it. */
	for (id = first; id != MIR_NONE && id < m->num_insts; id = m->insts[id].next)
		if (m->insts[id].op == MOP_BUFFER && m->insts[id].buf < m->num_buffers)
			v->declared[m->insts[id].buf] = 0;
	return ok;
}

bool mir_verify(const MModule *m, Error *e)
{
	Verifier v = {.m = m, .e = e};
	bool ok;
	v.defined = xcalloc(m->num_insts ? m->num_insts : 1, 1);
	v.declared = xcalloc(m->num_buffers ? m->num_buffers : 1, 1);
	ok = verify_list(&v, m->body);
	free(v.defined);
	free(v.declared);
	return ok;
}

/* --- printing --- */

static void print_index(FILE *out, const MModule *m, const MIndex *index)
{
	for (uint32_t i = 0; i < index->num_terms; i++)
		fprintf(out, "%s%s", i ? " + " : "", m->forest->schedule.vars[index->terms[i]].name);
}

/* The terms of row that are not in buffer b's base: its row within the buffer ("0" if none). */
static void print_buffer_row(FILE *out, const MModule *m, uint32_t b, const MIndex *row)
{
	const MBuffer *buf = &m->buffers[b];
	MIndex rest = {0};
	for (uint32_t i = 0; i < row->num_terms; i++)
		if (!mir_index_has(&buf->base, row->terms[i]))
			rest.terms[rest.num_terms++] = row->terms[i];
	if (rest.num_terms)
		print_index(out, m, &rest);
	else
		fputc('0', out);
}

/* "m2[" with the copy index of a privatised buffer. */
static void print_buffer_open(FILE *out, const MModule *m, uint32_t b)
{
	fprintf(out, "m%u[", b);
	if (m->buffers[b].copy_var != HIR_NONE)
		fprintf(out, "copy(%s), ", m->forest->schedule.vars[m->buffers[b].copy_var].name);
}

static void print_buffer(FILE *out, const MModule *m, uint32_t b)
{
	static const char *const spaces[] = {"local", "shared", "workspace"};
	const MBuffer *buf = &m->buffers[b];
	fprintf(out, "buffer m%u: ", b);
	if (buf->copy_var != HIR_NONE)
		fprintf(out, "%u copies along %s x ", buf->copies, m->forest->schedule.vars[buf->copy_var].name);
	if (buf->rows == MIR_ROWS_ALL)
		fputs("N", out);
	else
		fprintf(out, "%lld", (long long)buf->rows);
	fprintf(out, " rows x %u %s, %s", buf->outputs, hir_type_name((HType)buf->type), spaces[buf->space]);
	if (buf->base.num_terms) {
		fputs(", row 0 = ", out);
		print_index(out, m, &buf->base);
	}
	if (buf->of != MIR_NONE)
		fprintf(out, ", privatises m%u", buf->of);
}
/* Print node x of a range expression. */
static void print_expr(FILE *out, const MModule *m, const HRange *r, uint8_t x)
{
	const HExpr *n = &r->nodes[x];
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: fprintf(out, "%lld", (long long)n->value); break;
	case HEXPR_ROWS: fputs("N", out); break;
	case HEXPR_VAR: fputs(m->forest->schedule.vars[n->var].name, out); break;
	case HEXPR_ADD:
	case HEXPR_SUB: {
		/* a - (b + c): a sum or difference subtracted needs its parentheses */
		bool grouped = n->op == HEXPR_SUB && (r->nodes[n->b].op == HEXPR_ADD || r->nodes[n->b].op == HEXPR_SUB);
		print_expr(out, m, r, n->a);
		fputs(n->op == HEXPR_ADD ? " + " : grouped ? " - (" : " - ", out);
		print_expr(out, m, r, n->b);
		if (grouped)
			fputc(')', out);
		break;
	}
	case HEXPR_MIN:
	case HEXPR_BELOW:
		fputs(n->op == HEXPR_MIN ? "min(" : "below(", out);
		print_expr(out, m, r, n->a);
		fputs(", ", out);
		print_expr(out, m, r, n->b);
		fputc(')', out);
		break;
	}
}

/* The range of a loop over var. */
static void print_range(FILE *out, const MModule *m, int32_t var)
{
	HRange r;
	mir_loop_range(m, var, &r);
	fputc('[', out);
	print_expr(out, m, &r, r.begin);
	fputs(", ", out);
	print_expr(out, m, &r, r.end);
	fputc(')', out);
	if (r.step != 1)
		fprintf(out, " step %lld", (long long)r.step);
}

static void print_list(FILE *out, const MModule *m, uint32_t first, int indent)
{
	const HForest *f = m->forest;
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		fprintf(out, "%*s", indent, "");
		switch ((MOp)inst->op) {
		case MOP_FOR:
			fprintf(out, "%sfor %s in ", inst->parallel && !inst->gpu_dim ? "parallel " : "", f->schedule.vars[inst->var].name);
			print_range(out, m, inst->var);
			if (inst->interleave > 1)
				fprintf(out, " interleave %u", inst->interleave);
			if (inst->gpu_dim)
				fprintf(out, " on %s", hir_gpu_dim_name((HGpuDim)inst->gpu_dim));
			if (inst->loop & MLOOP_CACHE)
				fputs(inst->loop & MLOOP_PREFETCH ? " cache prefetch" : " cache", out);
			if (inst->loop & MLOOP_SPECIALIZE)
				fputs(" specialized", out);
			if (inst->loop & MLOOP_FEW_ROWS)
				fputs(" few-rows", out);
			fputs(" {\n", out);
			print_list(out, m, inst->body, indent + 2);
			fprintf(out, "%*s}\n", indent, "");
			continue;
		case MOP_BUFFER:
			print_buffer(out, m, inst->buf);
			break;
		case MOP_INIT:
			/* Sums start from the base scores; the other aggregates add them when the margins are finished. */
			fprintf(out, "init m%u = %s", inst->buf,
			        f->aggregate != HAGGREGATE_SUM ? "identity" : m->buffers[inst->buf].zero ? "0" : "base_score");
			break;
		case MOP_GET_TREE:
			fprintf(out, "%%%u = getTree ", id);
			print_index(out, m, &inst->tree);
			break;
		case MOP_WALK:
			fprintf(out, "%%%u = walk %%%u, rows[", id, inst->a);
			print_index(out, m, &inst->row);
			fputc(']', out);
			if (inst->exact)
				fprintf(out, " unroll %u", inst->peel);
			else if (inst->peel)
				fprintf(out, " peel %u", inst->peel);
			if (inst->peel_safe < inst->peel)
				fprintf(out, " (leaves possible after step %u)", inst->peel_safe);
			break;
		case MOP_REDUCE:
			fprintf(out, "reduce%s ", inst->strategy == MSTRATEGY_ATOMIC ? " atomic" : "");
			print_buffer_open(out, m, inst->buf);
			print_buffer_row(out, m, inst->buf, &inst->row);
			fprintf(out, ", output(%%%u)] %s %%%u", inst->a, reduce_op_text(inst->reduce_op), inst->b);
			break;
		case MOP_REDUCE_DIM:
			fprintf(out, "reduceDimension m%u", inst->buf);
			if (m->buffers[inst->buf].copy_var != HIR_NONE)
				fprintf(out, "[copy(%s)]", f->schedule.vars[m->buffers[inst->buf].copy_var].name);
			fprintf(out, " %s m%u", reduce_op_text(inst->reduce_op), inst->src);
			if (m->buffers[inst->src].copy_var != HIR_NONE)
				fprintf(out, " over %s", f->schedule.vars[m->buffers[inst->src].copy_var].name);
			if (inst->strategy == MSTRATEGY_VECTOR)
				fprintf(out, " vector %u", inst->vector);
			else if (inst->strategy == MSTRATEGY_SHUFFLE)
				fputs(" shuffles", out);
			break;
		case MOP_IF_COMPLETE:
			fputs("ifComplete rows[", out);
			if (inst->row.num_terms)
				print_index(out, m, &inst->row);
			else
				fputc('0', out);
			if (inst->span == MIR_ROWS_ALL)
				fputs(", N)", out);
			else
				fprintf(out, ", +%lld)", (long long)inst->span);
			if (inst->block & MBLOCK_KEYS)
				fprintf(out, " keys=%s", inst->block & MBLOCK_WHOLE ? "i64" : "i32");
			fprintf(out, "%s%s%s {\n", inst->block & MBLOCK_TILES ? " tiles" : "", inst->block & MBLOCK_TOPS ? " tops" : "",
			        inst->block & MBLOCK_NEXT ? " next" : "");
			print_list(out, m, inst->body, indent + 2);
			fprintf(out, "%*s}\n", indent, "");
			continue;
		case MOP_TRANSFORM:
			fprintf(out, "transform %s m%u[", hir_transform_name(f->transform), inst->buf);
			print_buffer_row(out, m, inst->buf, &inst->row);
			fputs("] -> out[", out);
			print_index(out, m, &inst->row);
			fputc(']', out);
			break;
		}
		fputc('\n', out);
	}
}

void mir_print(FILE *out, const MModule *m)
{
	const HForest *f = m->forest;
	fprintf(out, "func predict(rows: N x %u, out: N x %u) trees=%u outputs=%u representation=%s", f->num_features,
	        f->num_outputs, f->num_trees, f->num_outputs, m->representation ? m->representation : "none");
	if (m->nan_as_zero)
		fprintf(out, " nanAsZero=%s%s%s", m->nan_as_zero & MZERO_FLOATS ? "f32" : "",
		        m->nan_as_zero == (MZERO_FLOATS | MZERO_DOUBLES) ? "," : "", m->nan_as_zero & MZERO_DOUBLES ? "f64" : "");
	fputs(" {\n", out);
	print_list(out, m, m->body, 2);
	fputs("}\n", out);
}
