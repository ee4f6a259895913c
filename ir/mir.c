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

MModule *mir_module_new(const HForest *f)
{
	MModule *m = xcalloc(1, sizeof *m);
	m->forest = f;
	m->body = MIR_NONE;
	return m;
}

void mir_module_free(MModule *m)
{
	if (!m)
		return;
	free(m->insts);
	free(m);
}

uint32_t mir_append(MModule *m, MList *l, MOp op)
{
	uint32_t id = m->num_insts;
	MInst *inst;
	GROW(m->insts, (size_t)id + 1, m->insts_cap);
	inst = &m->insts[m->num_insts++];
	memset(inst, 0, sizeof *inst);
	inst->op = (uint8_t)op;
	inst->var = HIR_NONE;
	inst->a = inst->b = inst->body = inst->next = MIR_NONE;
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
	bool in_scope[HIR_MAX_VARS];   /* variable has an enclosing loop */
	Error *e;
} Verifier;

static bool verify_index(Verifier *v, uint32_t id, const MIndex *index, bool over_trees)
{
	const HSchedule *s = &v->m->forest->schedule;
	if (index->num_terms == 0 || index->num_terms > MIR_MAX_TERMS)
		return error_set(v->e, "mir: %%%u (%s): empty index", id, mir_op_name((MOp)v->m->insts[id].op));
	for (uint32_t i = 0; i < index->num_terms; i++) {
		int var = index->terms[i];
		if (var < 0 || (uint32_t)var >= s->num_vars || !v->in_scope[var])
			return error_set(v->e, "mir: %%%u (%s): index variable %d not in scope", id, mir_op_name((MOp)v->m->insts[id].op), var);
		if (s->vars[var].over_trees != over_trees)
			return error_set(v->e, "mir: %%%u: variable '%s' indexes the wrong dimension", id, s->vars[var].name);
	}
	return true;
}

static bool verify_operand(Verifier *v, uint32_t id, uint32_t operand, MOp expected)
{
	if (operand >= v->m->num_insts || !v->defined[operand] || v->m->insts[operand].op != expected)
		return error_set(v->e, "mir: %%%u (%s): operand %%%u is not a %s defined before it", id,
		                 mir_op_name((MOp)v->m->insts[id].op), operand, mir_op_name(expected));
	return true;
}

static bool verify_list(Verifier *v, uint32_t first)
{
	const HSchedule *s = &v->m->forest->schedule;
	for (uint32_t id = first; id != MIR_NONE; id = v->m->insts[id].next) {
		const MInst *inst;
		if (id >= v->m->num_insts || v->defined[id])
			return error_set(v->e, "mir: instruction list is malformed at %%%u", id);
		inst = &v->m->insts[id];
		switch ((MOp)inst->op) {
		case MOP_FOR:
			if (inst->var < 0 || (uint32_t)inst->var >= s->num_vars || v->in_scope[inst->var])
				return error_set(v->e, "mir: %%%u: loop over a bad or already bound variable", id);
			v->in_scope[inst->var] = true;
			if (!verify_list(v, inst->body))
				return false;
			v->in_scope[inst->var] = false;
			break;
		case MOP_INIT:
		case MOP_TRANSFORM:
			if (!verify_index(v, id, &inst->row, false))
				return false;
			break;
		case MOP_GET_TREE:
			if (!verify_index(v, id, &inst->tree, true))
				return false;
			break;
		case MOP_WALK:
			if (!verify_index(v, id, &inst->row, false) || !verify_operand(v, id, inst->a, MOP_GET_TREE))
				return false;
			break;
		case MOP_REDUCE:
			if (!verify_index(v, id, &inst->row, false) || !verify_operand(v, id, inst->a, MOP_GET_TREE) ||
			    !verify_operand(v, id, inst->b, MOP_WALK))
				return false;
			break;
		default:
			return error_set(v->e, "mir: %%%u: unknown operation %u", id, inst->op);
		}
		v->defined[id] = 1;
	}
	return true;
}

bool mir_verify(const MModule *m, Error *e)
{
	Verifier v = {.m = m, .e = e};
	bool ok;
	v.defined = xcalloc(m->num_insts ? m->num_insts : 1, 1);
	ok = verify_list(&v, m->body);
	free(v.defined);
	return ok;
}

/* --- printing --- */

static void print_index(FILE *out, const MModule *m, const MIndex *index)
{
	for (uint32_t i = 0; i < index->num_terms; i++)
		fprintf(out, "%s%s", i ? " + " : "", m->forest->schedule.vars[index->terms[i]].name);
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
	case HEXPR_SUB:
		print_expr(out, m, r, n->a);
		fputs(n->op == HEXPR_ADD ? " + " : " - ", out);
		print_expr(out, m, r, n->b);
		break;
	case HEXPR_MIN:
		fputs("min(", out);
		print_expr(out, m, r, n->a);
		fputs(", ", out);
		print_expr(out, m, r, n->b);
		fputc(')', out);
		break;
	}
}

/* The range of a loop over var, from its lineage (hir_schedule_range). */
static void print_range(FILE *out, const MModule *m, int32_t var)
{
	HRange r;
	hir_schedule_range(&m->forest->schedule, var, &r);
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
			fprintf(out, "%sfor %s in ", inst->parallel ? "parallel " : "", f->schedule.vars[inst->var].name);
			print_range(out, m, inst->var);
			if (inst->interleave > 1)
				fprintf(out, " interleave %u", inst->interleave);
			fputs(" {\n", out);
			print_list(out, m, inst->body, indent + 2);
			fprintf(out, "%*s}\n", indent, "");
			continue;
		case MOP_INIT:
			fputs("init result[", out);
			print_index(out, m, &inst->row);
			fputs("] = base_score\n", out);
			continue;
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
			fputs("reduce result[", out);
			print_index(out, m, &inst->row);
			fprintf(out, ", output(%%%u)] += %%%u", inst->a, inst->b);
			break;
		case MOP_TRANSFORM:
			fprintf(out, "transform %s result[", hir_transform_name(f->transform));
			print_index(out, m, &inst->row);
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
	fprintf(out, "func predict(rows: N x %u, out: N x %u) trees=%u outputs=%u {\n", f->num_features, f->num_outputs,
	        f->num_trees, f->num_outputs);
	print_list(out, m, m->body, 2);
	fputs("}\n", out);
}
