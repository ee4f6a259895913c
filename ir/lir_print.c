/* LIR: printing a module as stable text (golden tests, --emit lir, debugging). */
#include "ir/lir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Elements of a buffer shown before the hash. */
#define PRINT_ELEMENTS 4

/* 64-bit FNV-1a hash of n bytes. */
static uint64_t fnv1a(const unsigned char *p, uint64_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint64_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Element i of data (elements of type t), printed so that it reads back exactly. */
static void print_element(FILE *out, LType t, const void *data, uint64_t i)
{
	const unsigned char *p = (const unsigned char *)data + i * lir_type_size(t);
	int8_t i8;
	int32_t i32;
	int64_t i64;
	float f32;
	double f64;
	switch (t) {
	case LTYPE_I1:
	case LTYPE_I8: memcpy(&i8, p, 1); fprintf(out, "%d", i8); break;
	case LTYPE_I32: memcpy(&i32, p, 4); fprintf(out, "%" PRId32, i32); break;
	case LTYPE_I64: memcpy(&i64, p, 8); fprintf(out, "%" PRId64, i64); break;
	case LTYPE_F32: memcpy(&f32, p, 4); fprintf(out, "%.9g", f32); break;
	case LTYPE_F64: memcpy(&f64, p, 8); fprintf(out, "%.17g", f64); break;
	case LTYPE_PTR: memcpy(&i64, p, 8); fprintf(out, "0x%" PRIx64, (uint64_t)i64); break;
	case LTYPE_VOID: fputs("?", out); break;
	}
}

/* One line per buffer: index, name, element type and count, the first elements and a hash of the bytes. */
static void print_buffer(FILE *out, uint32_t index, const LBuffer *b)
{
	uint64_t shown = b->count < PRINT_ELEMENTS ? b->count : PRINT_ELEMENTS;
	bool known = b->elem != LTYPE_VOID && b->elem <= LTYPE_PTR && (b->data || !b->count);
	fprintf(out, "buffer %u %s %s x %" PRIu64, index, b->name, lir_type_name(b->elem), b->count);
	if (!known) {
		fputs(" (no data)\n", out);
		return;
	}
	fputs(" [", out);
	for (uint64_t i = 0; i < shown; i++) {
		fputs(i ? ", " : "", out);
		print_element(out, b->elem, b->data, i);
	}
	fprintf(out, "%s] fnv1a %016" PRIx64 "\n", b->count > shown ? ", ..." : "",
	        fnv1a(b->data, b->count * lir_type_size(b->elem)));
}

/* Printer.number of an instruction without a result: AFTER | the number printed before it, or AFTER_NONE. */
#define AFTER 0x80000000u
#define AFTER_NONE 0x7fffffffu

/* What printing one function needs: where, and each instruction's printed number. */
typedef struct Printer {
	FILE *out;
	const LModule *m;
	const LFunc *fn;
	uint32_t *number; /* per instruction: %N as printed; AFTER | N for one without a result printed after %N
	                     (AFTER | AFTER_NONE: before any); LIR_NONE: a constant, or in no region */
	uint64_t budget;  /* lines left: a corrupt `next` chain cannot loop forever */
} Printer;

/* A constant's value as an operand: a number, "{n}" for a vector of n in every lane, "{n x lane}" for n x i. */
static void print_constant(FILE *out, const LInst *in)
{
	fputs(in->lanes > 1 ? "{" : "", out);
	if (in->type == LTYPE_F32)
		fprintf(out, "%.9g", in->fimm);
	else if (in->type == LTYPE_F64)
		fprintf(out, "%.17g", in->fimm);
	else
		fprintf(out, "%" PRId64 "%s", in->imm, in->sub == LIR_CONST_STEPS ? " x lane" : "");
	fputs(in->lanes > 1 ? "}" : "", out);
}

/*
 * A value reference: %N, the value itself for a constant, or a marker for a missing or
 * out-of-range operand (or, %?ID, one no region holds). Constants print as values and the
 * others are numbered in the order they print, so the text does not depend on the order the
 * lowering made instructions in (which follows the C compiler's order of evaluating arguments).
 */
static void print_value(Printer *p, uint32_t x)
{
	if (x == LIR_NONE)
		fputs("%none", p->out);
	else if (x >= p->fn->num_insts)
		fprintf(p->out, "%%bad%u", x);
	else if (p->fn->insts[x].op == LOP_CONST)
		print_constant(p->out, &p->fn->insts[x]);
	else if (p->number[x] == LIR_NONE)
		fprintf(p->out, "%%?%u", x);
	else if (p->number[x] == (AFTER | AFTER_NONE))
		fputs("first", p->out);
	else if (p->number[x] & AFTER)
		fprintf(p->out, "after %%%u", p->number[x] & ~AFTER);
	else
		fprintf(p->out, "%%%u", p->number[x]);
}

/* Room for the longest type text, "<16 x ptr>". */
#define TYPE_TEXT 24

/* Type t with lanes lanes as text into buf: "f32", or "<8 x f32>" for a vector. Returns buf. */
static const char *type_text(char buf[TYPE_TEXT], LType t, unsigned lanes)
{
	if (lanes > 1)
		snprintf(buf, TYPE_TEXT, "<%u x %s>", lanes, lir_type_name(t));
	else
		snprintf(buf, TYPE_TEXT, "%s", lir_type_name(t));
	return buf;
}

/* The type of value x into buf, or "?" if x is not an instruction. LOCAL_ARRAY's value is a ptr. */
static const char *value_type_name(char buf[TYPE_TEXT], const Printer *p, uint32_t x)
{
	const LFunc *fn = p->fn;
	if (x >= fn->num_insts)
		return "?";
	if (fn->insts[x].op == LOP_LOCAL_ARRAY)
		return "ptr";
	return type_text(buf, (LType)fn->insts[x].type, fn->insts[x].lanes);
}

/* ptr[index] */
static void print_element_ref(Printer *p, uint32_t ptr, uint32_t index)
{
	print_value(p, ptr);
	fputc('[', p->out);
	print_value(p, index);
	fputc(']', p->out);
}

/* The operands a, b, c (first n of them) separated by commas. */
static void print_operands(Printer *p, const LInst *in, int n)
{
	const uint32_t ops[3] = {in->a, in->b, in->c};
	for (int k = 0; k < n; k++) {
		fputs(k ? ", " : " ", p->out);
		print_value(p, ops[k]);
	}
}

static void print_region(Printer *p, uint32_t first, int depth);

/* One tab per level of nesting. */
static void indent(FILE *out, int depth)
{
	for (int i = 0; i < depth; i++)
		fputc('\t', out);
}

/* A nested region between braces, then the closing brace at depth. */
static void print_body(Printer *p, uint32_t first, int depth)
{
	fputs(" {\n", p->out);
	print_region(p, first, depth + 1);
	indent(p->out, depth);
	fputc('}', p->out);
}

/* Instruction id (without indentation or newline), including its nested regions. */
static void print_inst(Printer *p, uint32_t id, int depth)
{
	FILE *out = p->out;
	const LModule *m = p->m;
	const LInst *in = &p->fn->insts[id];
	char type_buf[TYPE_TEXT], operand_buf[TYPE_TEXT];
	const char *type = type_text(type_buf, (LType)in->type, in->lanes);
	LOp op = (LOp)in->op;

	if (op >= LOP_COUNT || lir_op_has_result(op))
		fprintf(out, "%%%u = ", p->number[id]);
	if (op >= LOP_COUNT) {
		fprintf(out, "?op%u %s", in->op, type);
		print_operands(p, in, 3);
		return;
	}
	fputs(lir_op_name(op), out);
	switch (op) {
	case LOP_PARAM: fprintf(out, " %" PRId64 " %s", in->imm, type); break;
	case LOP_BUFFER:
		fprintf(out, " %" PRId64 " (%s)", in->imm,
		        in->imm >= 0 && in->imm < m->num_buffers ? m->buffers[in->imm].name : "?");
		break;
	case LOP_LOAD:
	case LOP_PREFETCH:
		fprintf(out, " %s ", type);
		print_element_ref(p, in->a, in->b);
		break;
	case LOP_INDEX:
		fputc(' ', out);
		print_value(p, in->a);
		fputs(" + ", out);
		print_value(p, in->b);
		fprintf(out, " x %" PRId64, in->imm);
		break;
	case LOP_STORE:
	case LOP_ATOMIC:
		fputc(' ', out);
		if (op == LOP_ATOMIC)
			fprintf(out, "%s ", lir_atomic_name((LAtomic)in->sub));
		print_element_ref(p, in->a, in->b);
		fputs(op == LOP_STORE ? " = " : in->sub == LATOMIC_ADD ? " += " : in->sub == LATOMIC_MIN ? " min= " : " max= ", out);
		print_value(p, in->c);
		break;
	case LOP_SET:
		fputc(' ', out);
		print_value(p, in->a);
		fputs(" = ", out);
		print_value(p, in->b);
		break;
	case LOP_ICMP:
	case LOP_FCMP:
		fprintf(out, " %s %s", lir_cmp_name((LCmp)in->sub), value_type_name(operand_buf, p, in->a));
		print_operands(p, in, 2);
		break;
	case LOP_CAST:
		fprintf(out, " %s %s ", lir_cast_name((LCast)in->sub), value_type_name(operand_buf, p, in->a));
		print_value(p, in->a);
		fprintf(out, " to %s", type);
		break;
	case LOP_LOCAL_ARRAY:
		if (in->sub != LSPACE_PRIVATE) /* private is the default and not shown */
			fprintf(out, " %s", lir_space_name((LSpace)in->sub));
		fprintf(out, " %s x %" PRId64, lir_type_name((LType)in->type), in->imm);
		if (in->lanes > 1)
			fprintf(out, " for %s", type);
		break;
	case LOP_FOR:
	case LOP_PARALLEL_FOR:
		print_operands(p, in, 3);
		if (op == LOP_PARALLEL_FOR)
			fprintf(out, " grain %" PRId64, in->imm);
		print_body(p, in->body, depth);
		break;
	case LOP_LOOP: print_body(p, in->body, depth); break;
	case LOP_GPU_INDEX: fprintf(out, " %s", lir_gpu_index_name((LGpuIndex)in->sub)); break;
	case LOP_BARRIER: break;
	case LOP_CALL:
		fprintf(out, " %s", in->imm >= 0 && in->imm < m->num_funcs ? m->funcs[in->imm]->name : "?");
		print_operands(p, in, 3);
		break;
	case LOP_BREAK_IF: print_operands(p, in, 1); break;
	case LOP_IF:
		print_operands(p, in, 1);
		if (in->imm == LIR_IF_APART)
			fputs(" apart", out);
		else if (in->imm == LIR_IF_APART_BODY)
			fputs(" apart(body)", out);
		else if (in->imm == LIR_IF_WIDE)
			fputs(" wide", out);
		print_body(p, in->body, depth);
		if (in->alt != LIR_NONE) {
			fputs(" else", out);
			print_body(p, in->alt, depth);
		}
		break;
	case LOP_GATHER:
		fprintf(out, " %s ", type);
		print_value(p, in->a);
		fputc('[', out);
		print_value(p, in->b);
		fprintf(out, " + %s ", value_type_name(operand_buf, p, in->c));
		print_value(p, in->c);
		fputc(']', out);
		if (in->imm)
			fprintf(out, " table %lld%s", (long long)in->imm, in->sub ? " low" : "");
		break;
	case LOP_BITS:
		fprintf(out, " %s ", value_type_name(operand_buf, p, in->a));
		print_value(p, in->a);
		break;
	case LOP_CTZ:
		fprintf(out, "%s %s", in->imm ? " nonzero" : "", type);
		print_operands(p, in, 1);
		break;
	case LOP_ADD:
	case LOP_SUB:
	case LOP_MUL:
	case LOP_SHL:
		fprintf(out, "%s %s", in->imm == LIR_NSW ? " nsw" : "", type);
		print_operands(p, in, 2);
		break;
	case LOP_FNEG:
	case LOP_SPLAT:
	case LOP_EXP:
	case LOP_VAR:
	case LOP_GET:
		fprintf(out, " %s", type);
		print_operands(p, in, 1);
		break;
	case LOP_SELECT:
		fprintf(out, " %s", type);
		print_operands(p, in, 3);
		break;
	case LOP_ZIP:
		fprintf(out, " %s", type);
		print_operands(p, in, 2);
		fputs(in->sub & 1 ? " high" : " low", out);
		if (in->sub > 1)
			fputs(" halves", out);
		break;
	default: /* binary arithmetic */
		fprintf(out, " %s", type);
		print_operands(p, in, 2);
		break;
	}
}

/*
 * The instructions of a region, one per line, indented by one tab per depth; constants
 * print where they are used (print_value). p->budget bounds the lines printed.
 */
static void print_region(Printer *p, uint32_t first, int depth)
{
	for (uint32_t id = first; id != LIR_NONE; id = p->fn->insts[id].next) {
		if (id >= p->fn->num_insts || p->budget == 0) {
			indent(p->out, depth);
			fprintf(p->out, "; malformed region at %%%u\n", id);
			return;
		}
		p->budget--;
		if (p->fn->insts[id].op == LOP_CONST)
			continue;
		indent(p->out, depth);
		print_inst(p, id, depth);
		fputc('\n', p->out);
	}
}

/* Number the instructions of the region from first (and those nested) that print with a result, in printing order. */
static void number_region(Printer *p, uint32_t first, uint32_t *next)
{
	for (uint32_t id = first; id < p->fn->num_insts && p->budget; id = p->fn->insts[id].next) {
		const LInst *in = &p->fn->insts[id];
		p->budget--;
		if (in->op != LOP_CONST && (in->op >= LOP_COUNT || lir_op_has_result((LOp)in->op)))
			p->number[id] = (*next)++;
		else if (in->op != LOP_CONST) /* named "after %N" in messages (lir_value_text) */
			p->number[id] = AFTER | (*next ? *next - 1 : AFTER_NONE);
		if (lir_op_nests((LOp)in->op))
			number_region(p, in->body, next);
		if (in->op == LOP_IF)
			number_region(p, in->alt, next);
	}
}

/* One launch extent: "256" or "N/256" (rows per block, rounded up). */
static void print_dim(FILE *out, const LDim *d, int k)
{
	if (d->rows_per)
		fprintf(out, "%sN/%" PRId64, k ? ", " : "", d->rows_per);
	else
		fprintf(out, "%s%" PRId64, k ? ", " : "", d->count);
}

/* A kernel's launch: " grid(N/256, 1, 1) block(256, 1, 1)". */
static void print_launch(FILE *out, const LFunc *fn)
{
	fputs(" grid(", out);
	for (int k = 0; k < 3; k++)
		print_dim(out, &fn->launch.grid[k], k);
	fputs(") block(", out);
	for (int k = 0; k < 3; k++)
		print_dim(out, &fn->launch.block[k], k);
	fputc(')', out);
	if (fn->entry)
		fputs(" f64", out);
}

/* Number the instructions of fn as printing does into p (its number array malloc'ed). */
static void number_func(Printer *p, const LFunc *fn)
{
	uint32_t next = 0;
	p->fn = fn;
	p->number = xmalloc((fn->num_insts + 1) * sizeof *p->number);
	memset(p->number, 0xff, (fn->num_insts + 1) * sizeof *p->number);
	p->budget = fn->num_insts;
	number_region(p, fn->body, &next);
	p->budget = fn->num_insts;
}

const char *lir_value_text(const LFunc *fn, uint32_t x, char *buf, size_t n)
{
	Printer p = {0};
	buf[0] = 0;
	number_func(&p, fn);
	p.out = fmemopen(buf, n, "w");
	if (p.out) {
		print_value(&p, x);
		fclose(p.out);
	}
	free(p.number);
	return buf;
}

/* A function: its signature (each parameter named by the first PARAM that reads it), then its body. */
static void print_func(FILE *out, const LModule *m, uint32_t index, const LFunc *fn)
{
	Printer p = {.out = out, .m = m};
	number_func(&p, fn);
	fprintf(out, "\n%s %s(", fn->kind == LFUNC_KERNEL ? "kernel" : "func", fn->name);
	for (uint32_t k = 0; k < fn->num_params && k < COUNT_OF(fn->params); k++) {
		fprintf(out, "%s%s", k ? ", " : "", lir_type_name(fn->params[k]));
		for (uint32_t id = 0; id < fn->num_insts; id++) {
			if (fn->insts[id].op == LOP_PARAM && fn->insts[id].imm == k) {
				fputc(' ', out);
				print_value(&p, id);
				break;
			}
		}
	}
	fputc(')', out);
	if (fn->kind == LFUNC_KERNEL)
		print_launch(out, fn);
	else if (index == m->predict || index == m->predict_f64)
		fputs(" entry", out);
	fputs(" {\n", out);
	print_region(&p, fn->body, 1);
	fputs("}\n", out);
	free(p.number);
}

void lir_print(FILE *out, const LModule *m)
{
	fprintf(out, "module features %u outputs %u margins %u transform %u", m->num_features, m->num_outputs, m->num_margins,
	        m->transform);
	if (m->workspace_fixed || m->workspace_per_row)
		fprintf(out, " workspace %" PRIu64 " + %" PRIu64 "/row", m->workspace_fixed, m->workspace_per_row);
	if (m->gpu)
		fputs(" gpu", out);
	fputc('\n', out);
	for (uint32_t i = 0; i < m->num_buffers; i++)
		print_buffer(out, i, &m->buffers[i]);
	for (uint32_t i = 0; i < m->num_funcs; i++)
		print_func(out, m, i, m->funcs[i]);
}
