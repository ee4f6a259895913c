/*
 * The schedule's text form: NAME(ARG, ...) directives, one per line or separated by ';',
 * '#' comments to the end of the line, blank lines and empty statements. A directive
 * may not span lines. Syntax errors read "SOURCE:LINE:COL: what is wrong", the column
 * counted in bytes from 1 where the problem is; hir_schedule_apply reports the rest.
 */
#include "ir/schedule.h"

#include <string.h>

/* Most arguments remembered for one directive; more are only counted (and rejected). */
#define MAX_ARGS (HIR_MAX_ARGS + 1)

/* Where the parser is in the text, and where its messages go. */
typedef struct Parser {
	const char *p;          /* the next character */
	const char *line_start; /* the first character of the current line */
	uint32_t line;
	const char *source;     /* for messages */
	Error *e;
} Parser;

/* One argument as written: its text [start, start + len) and column. */
typedef struct Arg {
	const char *start;
	size_t len;
	uint32_t column;
} Arg;

/* The 1-based column of at, which lies on the current line. */
static uint32_t column_of(const Parser *P, const char *at) { return (uint32_t)(at - P->line_start) + 1; }

/* Fill e with "SOURCE:LINE:COL: message" for a problem at column; returns false. */
__attribute__((format(printf, 3, 4))) static bool fail(const Parser *P, uint32_t column, const char *fmt, ...)
{
	char where[320];
	va_list ap;
	if (!P->e)
		return false;
	va_start(ap, fmt);
	vsnprintf(P->e->message, sizeof P->e->message, fmt, ap);
	va_end(ap);
	snprintf(where, sizeof where, "%s:%u:%u", P->source, P->line, column);
	error_prefix(P->e, where);
	return false;
}

/* Spaces and tabs (and the '\r' of CRLF line ends) separate tokens. */
static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
/* ASCII letters only: names are ASCII. */
static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/* Decimal digits. */
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
/* Characters that end an argument or a directive name. */
static bool ends_token(char c)
{
	return !c || c == '\n' || is_space(c) || c == ',' || c == '(' || c == ')' || c == ';' || c == '#';
}

/* Whether c is an operator of a size's expression (parse_number). */
static bool is_operator(char c)
{
	return c == '*' || c == '/' || c == '+' || c == '-';
}

/* Move P past spaces and tabs (never past the end of the line). */
static void skip_spaces(Parser *P)
{
	while (is_space(*P->p))
		P->p++;
}

/* Whether [text, text + len) is a variable name: a letter or '_', then letters, digits, '_' and '.'. */
static bool is_name(const char *text, size_t len)
{
	if (!len || !(is_letter(text[0]) || text[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(is_letter(text[i]) || is_digit(text[i]) || text[i] == '_' || text[i] == '.'))
			return false;
	return true;
}

/* [text, text + len) quoted for a message: at most 40 characters, others than printable ASCII as \xNN. */
static const char *quote(const char *text, size_t len, char *buf, size_t size)
{
	size_t n = 0;
	n += (size_t)snprintf(buf + n, size - n, "'");
	for (size_t i = 0; i < len && i < 40 && n < size; i++) {
		unsigned char c = (unsigned char)text[i];
		n += (size_t)(c >= 32 && c < 127 ? snprintf(buf + n, size - n, "%c", c) : snprintf(buf + n, size - n, "\\x%02x", c));
	}
	if (n < size)
		snprintf(buf + n, size - n, "%s'", len > 40 ? "..." : "");
	return buf;
}

/* What stands at p, for "got ...": the end of the line or text, a punctuation character, or the token there. */
static const char *describe(const char *p, char *buf, size_t size)
{
	size_t len = 0;
	if (!*p)
		return "the end of the text";
	if (*p == '\n')
		return "the end of the line";
	if (*p == '#')
		return "a comment";
	while (!ends_token(p[len]))
		len++;
	return quote(p, len ? len : 1, buf, size);
}

/* "3 variables and 1 number": what directive k takes. */
static void describe_arity(HDirectiveKind k, char *buf, size_t size)
{
	int names, optional, ints;
	hir_directive_arity((HDirectiveKind)k, &names, &optional, &ints);
	if (k == HDIR_GPU_DIMENSION)
		snprintf(buf, size, "a variable and a GPU dimension");
	else if (k == HDIR_REPRESENTATION)
		snprintf(buf, size, "a representation's name");
	else if (k == HDIR_SORT_TREES)
		snprintf(buf, size, "an order (depth)");
	else if (k == HDIR_TILE_TREES)
		snprintf(buf, size, "a tiling (uniform or probability) and a tile size");
	else if (k == HDIR_CACHE)
		snprintf(buf, size, "a variable, and prefetch or nothing");
	else if (names < 0)
		snprintf(buf, size, "one to %d variables", HIR_MAX_ARGS);
	else
		snprintf(buf, size, "%d variable%s%s", names, names == 1 ? "" : "s", ints ? " and 1 number" : "");
}

/* The directive named [name, name + len), or HDIR_COUNT. */
static HDirectiveKind find_directive(const char *name, size_t len)
{
	for (int k = 0; k < HDIR_COUNT; k++)
		if (strlen(hir_directive_name((HDirectiveKind)k)) == len && !memcmp(hir_directive_name((HDirectiveKind)k), name, len))
			return (HDirectiveKind)k;
	return HDIR_COUNT;
}

/* Check argument a as a variable name (or, for gpuDimension's second, a dimension) and copy it into out. */
static bool parse_name(const Parser *P, const Arg *a, bool gpu_dim, char out[HIR_MAX_NAME], const char *after)
{
	char buf[200];
	if (!a->len)
		return fail(P, a->column, "expected a %s before %s", gpu_dim ? "GPU dimension" : "variable name", after);
	if (gpu_dim && (!is_name(a->start, a->len) || a->len > HIR_MAX_NAME - 2)) {
		char list[100];
		size_t n = 0;
		for (size_t d = 1; d < (size_t)(HGPU_BLOCK_Z + 1) && n < sizeof list; d++)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", d == 1 ? "" : d + 1 == (size_t)(HGPU_BLOCK_Z + 1) ? " or " : ", ", hir_gpu_dim_name((HGpuDim)d));
		return fail(P, a->column, "%s is not a GPU dimension (expected %s)", quote(a->start, a->len, buf, sizeof buf), list);
	}
	if (!is_name(a->start, a->len))
		return fail(P, a->column, "%s is not a variable name (names are letters, digits, '_' and '.', starting with a letter or '_')",
		            quote(a->start, a->len, buf, sizeof buf));
	if (a->len > HIR_MAX_NAME - 2)
		return fail(P, a->column, "%s is longer than %d characters", quote(a->start, a->len, buf, sizeof buf), HIR_MAX_NAME - 2);
	memcpy(out, a->start, a->len);
	out[a->len] = 0;
	return true;
}

/* The value of the size named [start, start + len): N_t (the trees) or one of s->size_names; false where none is. */
static bool size_named(const HSchedule *s, const char *start, size_t len, int64_t *value)
{
	if (len == 3 && !strncmp(start, "N_t", 3)) {
		*value = s->num_trees;
		return true;
	}
	for (uint32_t i = 0; i < s->num_size_names; i++)
		if (strlen(s->size_names[i].name) == len && !strncmp(s->size_names[i].name, start, len)) {
			*value = s->size_names[i].value;
			return true;
		}
	return false;
}

/* The names size_named knows, for messages. */
static const char *size_names(const HSchedule *s, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "N_t");
	for (uint32_t i = 0; i < s->num_size_names && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, ", %s", s->size_names[i].name);
	return buf;
}

/*
 * Argument a as a size from 0 to 2^31 - 1: a decimal number, or an expression of numbers
 * and sizes (size_named) with * / + -, * and / before + and -, left to right.
 */
static bool parse_number(const Parser *P, const HSchedule *s, const Arg *a, int64_t *value, const char *after)
{
	char buf[200], names[300];
	const char *p = a->start, *end = a->start + a->len;
	int64_t sum = 0, term = 1;
	char add = '+', mul = '*';
	if (!a->len)
		return fail(P, a->column, "expected a number before %s", after);
	if (a->start[0] == '-' && a->len > 1 && is_digit(a->start[1]))
		return fail(P, a->column, "%s is negative (expected a number from 0 to %d)", quote(a->start, a->len, buf, sizeof buf), INT32_MAX);
	for (;;) {
		const char *factor;
		int64_t x = 0;
		while (p < end && is_space(*p))
			p++;
		factor = p;
		if (p < end && is_digit(*p)) {
			for (; p < end && is_digit(*p); p++)
				x = x <= INT32_MAX ? x * 10 + (*p - '0') : x;
			if (x > INT32_MAX)
				return fail(P, a->column, "%s is too large (at most %d)", quote(a->start, a->len, buf, sizeof buf), INT32_MAX);
		} else if (p < end && (is_letter(*p) || *p == '_')) {
			while (p < end && (is_letter(*p) || is_digit(*p) || *p == '_'))
				p++;
			if (!size_named(s, factor, (size_t)(p - factor), &x))
				return fail(P, a->column, "%s is not a number, nor a size the schedule knows (%s, or a parameter given with -D)",
				            quote(a->start, a->len, buf, sizeof buf), size_names(s, names, sizeof names));
		}
		while (p > factor && p < end && is_space(*p))
			p++;
		if (p == factor || (p < end && !is_operator(*p)))
			return fail(P, a->column, "%s is not a number", quote(a->start, a->len, buf, sizeof buf));
		if (mul == '/' && !x)
			return fail(P, a->column, "%s divides by zero", quote(a->start, a->len, buf, sizeof buf));
		if (mul == '*' ? __builtin_mul_overflow(term, x, &term) : (term /= x, false))
			return fail(P, a->column, "%s is too large (at most %d)", quote(a->start, a->len, buf, sizeof buf), INT32_MAX);
		if (p < end && (*p == '*' || *p == '/')) {
			mul = *p++;
			continue;
		}
		if (add == '+' ? __builtin_add_overflow(sum, term, &sum) : __builtin_sub_overflow(sum, term, &sum))
			return fail(P, a->column, "%s is too large (at most %d)", quote(a->start, a->len, buf, sizeof buf), INT32_MAX);
		if (p == end)
			break;
		add = *p++;
		term = 1;
		mul = '*';
	}
	if (sum < 0 || sum > INT32_MAX)
		return fail(P, a->column, "%s is %lld (expected a number from 0 to %d)", quote(a->start, a->len, buf, sizeof buf), (long long)sum,
		            INT32_MAX);
	*value = sum;
	return true;
}

/* Parse the directive at P->p (a name's first character) and apply it to s; P->p ends at the end of its statement. */
static bool parse_directive(Parser *P, HSchedule *s)
{
	const char *name = P->p;
	uint32_t column = column_of(P, name), close_column;
	HDirectiveKind k;
	Arg args[MAX_ARGS];
	size_t len = 0, num_args = 0;
	char buf[200], got[200], arity[80];
	HDirective d;
	int names, optional, ints;

	if (!is_letter(*name) && *name != '_')
		return fail(P, column, "expected a directive name, got %s", describe(name, buf, sizeof buf));
	while (!ends_token(name[len]))
		len++;
	k = find_directive(name, len);
	if (k == HDIR_COUNT) {
		char list[300];
		size_t n = 0;
		for (int i = 0; i < HDIR_COUNT && n < sizeof list; i++)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i == 0 ? "" : i + 1 == HDIR_COUNT ? " or " : ", ", hir_directive_name((HDirectiveKind)i));
		return fail(P, column, "unknown directive %s (expected %s)", quote(name, len, buf, sizeof buf), list);
	}
	P->p = name + len;
	skip_spaces(P);
	if (*P->p != '(')
		return fail(P, column_of(P, P->p), "expected '(' after %s, got %s", hir_directive_name((HDirectiveKind)k), describe(P->p, buf, sizeof buf));
	P->p++;

	/* The arguments: tokens separated by ',' up to ')', all on this line. */
	for (;;) {
		Arg a;
		skip_spaces(P);
		a.start = P->p;
		a.column = column_of(P, P->p);
		for (;;) { /* a size's expression may space its operators (N_t / 2): one argument */
			const char *q;
			while (!ends_token(*P->p))
				P->p++;
			for (q = P->p; is_space(*q); q++)
				;
			if (P->p == a.start || q == P->p || !(is_operator(*q) || is_operator(P->p[-1])))
				break;
			P->p = q;
		}
		a.len = (size_t)(P->p - a.start);
		if (num_args < MAX_ARGS)
			args[num_args] = a;
		num_args++;
		skip_spaces(P);
		if (*P->p == ',') {
			P->p++;
			continue;
		}
		if (*P->p == ')')
			break;
		if (!*P->p || *P->p == '\n' || *P->p == ';' || *P->p == '#')
			return fail(P, column_of(P, P->p), "expected ')' after the arguments of %s", hir_directive_name((HDirectiveKind)k));
		if (!a.len)
			return fail(P, column_of(P, P->p), "expected an argument of %s, got %s", hir_directive_name((HDirectiveKind)k), describe(P->p, buf, sizeof buf));
		return fail(P, column_of(P, P->p), "expected ',' or ')' after %s, got %s", quote(a.start, a.len, buf, sizeof buf),
		            describe(P->p, got, sizeof got));
	}
	close_column = column_of(P, P->p);
	P->p++;
	if (num_args == 1 && !args[0].len)
		num_args = 0; /* "parallel()" */

	/* Only the end of the statement may follow. */
	skip_spaces(P);
	if (*P->p && *P->p != '\n' && *P->p != ';' && *P->p != '#')
		return fail(P, column_of(P, P->p), "unexpected %s after the ')' of %s (put directives on separate lines or separate them with ';')",
		            describe(P->p, buf, sizeof buf), hir_directive_name((HDirectiveKind)k));

	/* The number of arguments, then each one. */
	hir_directive_arity((HDirectiveKind)k, &names, &optional, &ints);
	describe_arity(k, arity, sizeof arity);
	if (names >= 0 && num_args >= (size_t)(names - optional + ints) && num_args < (size_t)(names + ints))
		names = (int)num_args - ints; /* names left out at the end: cache(v) */
	if (names < 0 ? num_args < 1 || num_args > HIR_MAX_ARGS : num_args != (size_t)(names + ints)) {
		size_t want = names < 0 ? HIR_MAX_ARGS : (size_t)(names + ints);
		/* "parallel(batch, )": the empty argument, not the count, is the mistake to show. */
		for (size_t i = 0; i < num_args && i < MAX_ARGS; i++)
			if (!args[i].len)
				return fail(P, args[i].column, "expected an argument before %s", i + 1 < num_args ? "','" : "')'");
		return fail(P, num_args > want ? args[want].column : close_column, "%s takes %s, got %zu argument%s", hir_directive_name((HDirectiveKind)k), arity,
		            num_args, num_args == 1 ? "" : "s");
	}
	memset(&d, 0, sizeof d);
	d.kind = (uint8_t)k;
	d.num_names = (uint8_t)(names < 0 ? num_args : (size_t)names);
	for (size_t i = 0; i < num_args; i++) {
		const char *after = i + 1 < num_args ? "','" : "')'";
		if (i < d.num_names ? !parse_name(P, &args[i], k == HDIR_GPU_DIMENSION && i == 1, d.names[i], after)
		                    : !parse_number(P, s, &args[i], &d.value, after))
			return false;
	}
	d.pos = (HSourcePos){P->line, column};
	return hir_schedule_apply(s, &d, P->e);
}

bool hir_schedule_parse(HSchedule *s, const char *text, const char *source, Error *e)
{
	Parser P = {.p = text, .line_start = text, .line = 1, .e = e};
	snprintf(s->source, sizeof s->source, "%s", source ? source : "");
	P.source = s->source[0] ? s->source : "schedule";
	if (!strncmp(P.p, "\xef\xbb\xbf", 3))
		P.p = P.line_start = text + 3; /* a UTF-8 byte-order mark */
	for (;;) {
		skip_spaces(&P);
		switch (*P.p) {
		case 0:
			return hir_schedule_check(s, e);
		case '\n':
			P.line_start = ++P.p;
			P.line++;
			break;
		case ';':
			P.p++;
			break;
		case '#':
			while (*P.p && *P.p != '\n')
				P.p++;
			break;
		default:
			if (!parse_directive(&P, s))
				return false;
		}
	}
}
