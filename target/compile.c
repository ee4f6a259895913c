/* The pipeline from a model file to an artifact (compile.h), and libgrovec's entry point (rt/grove_compile.h). */
#include "target/compile.h"
#include "front/front.h"
#include "lower/cost.h"
#include "rt/grove_compile.h"
#include "target/target.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The passes dump_after can print the IR after (-d NAME), in pipeline order. */
#define PIPELINE_PASSES(X)                                                                                    \
	X(READ, "read") X(MIRROR, "mirror") X(SCHEDULE, "schedule") X(PAD, "pad") X(TILE, "tile")               \
	X(LOWER_MIR, "lower-mir") X(LEGALIZE, "legalize") X(UNROLL, "unroll") X(INTERLEAVE, "interleave")       \
	X(VERSION, "version") X(BLOCKS, "blocks") X(LOWER_LIR, "lower-lir")

typedef enum Pass {
#define X(name, text) PASS_##name,
	PIPELINE_PASSES(X)
#undef X
} Pass;

static const char *const pass_names[] = {
#define X(name, text) text,
	PIPELINE_PASSES(X)
#undef X
};

const char *pipeline_pass_name(size_t i) { return i < COUNT_OF(pass_names) ? pass_names[i] : NULL; }

/* Whether the k characters at p name pass (or "all"). */
static bool names(const char *p, size_t k, const char *pass)
{
	return (k == strlen(pass) && !strncmp(p, pass, k)) || (k == 3 && !strncmp(p, "all", 3));
}

bool pipeline_check_passes(const char *list, Error *e)
{
	for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',') {
		size_t k = strcspn(p, ","), i = 0;
		while (i < COUNT_OF(pass_names) && !names(p, k, pass_names[i]))
			i++;
		if (i == COUNT_OF(pass_names)) {
			char known[256];
			return error_set(e, "-d %.*s: unknown pass (expected %s, or all)", (int)k, p,
			                 names_join(known, sizeof known, pipeline_pass_name, ", ", NULL));
		}
	}
	return true;
}

/* Print c's newest level if o->dump_after names pass. */
static void dump_after(const PipelineOptions *o, Pass pass, const Compiled *c)
{
	bool wanted = false;
	for (const char *p = o->dump_after; p && *p; p += strcspn(p, ","), p += *p == ',')
		wanted |= names(p, strcspn(p, ","), pass_names[pass]);
	if (!wanted)
		return;
	fprintf(stderr, "# after %s\n", pass_names[pass]);
	if (c->lir)
		lir_print(stderr, c->lir);
	else if (c->mir)
		mir_print(stderr, c->mir);
	else
		hir_print(stderr, c->hir);
}

/* The contents of the schedule file at path (at most 1 MiB, malloc'ed), or NULL with e filled. */
static char *read_schedule_file(const char *path, Error *e)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t n;
	bool ok = true;
	if (!f) {
		error_set(e, "%s: %s", path, strerror(errno));
		return NULL;
	}
	text = xmalloc((1u << 20) + 1);
	n = fread(text, 1, 1u << 20, f);
	if (ferror(f) || (n == 1u << 20 && fgetc(f) != EOF))
		ok = error_set(e, "%s: %s", path, ferror(f) ? strerror(errno) : "a schedule file is at most 1 MiB");
	else if (memchr(text, 0, n))
		ok = error_set(e, "%s: a schedule is text, this file holds a NUL byte", path);
	fclose(f);
	if (!ok) {
		free(text);
		return NULL;
	}
	text[n] = 0;
	return text;
}

/*
 * Give c->hir the schedule the options ask for: the user's (file or text), or grove's
 * (the cost model's, which sets *learned, or the heuristic's).
 */
static bool schedule_model(const PipelineOptions *o, Compiled *c, bool *learned, Error *e)
{
	char *file = NULL;
	bool ok;
	if (o->scheduled)
		return true;
	if (!o->schedule_file && !o->schedule_text) {
		if (o->gpu)
			hir_choose_gpu_schedule(c->hir, o->representation);
		else if (!o->learned)
			return hir_choose_schedule(c->hir, o->tree_tile, o->interleave, o->interleave_trees, o->representation,
			                           o->vector_tops, e);
		else
			return cost_choose_schedule(c->hir, o->tree_tile, o->interleave, o->interleave_trees, o->representation,
			                            o->vector_tops, learned, e);
		return true;
	}
	hir_schedule_init(&c->hir->schedule, c->hir->num_trees);
	if (!hir_schedule_name_size(&c->hir->schedule, "N_f", c->hir->num_features, e) ||
	    !hir_schedule_name_size(&c->hir->schedule, "N_c", c->hir->num_outputs, e))
		return false;
	for (uint32_t i = 0; i < o->num_sizes; i++) {
		const char *eq = strchr(o->sizes[i], '='), *from = o->sizes_from ? o->sizes_from : "-D";
		char name[HIR_MAX_NAME], *end;
		long long value = eq ? strtoll(eq + 1, &end, 10) : 0;
		if (!eq || eq == o->sizes[i] || (size_t)(eq - o->sizes[i]) >= sizeof name || !eq[1] || *end)
			return error_set(e, "%s %s: expected NAME=NUMBER", from, o->sizes[i]);
		snprintf(name, sizeof name, "%.*s", (int)(eq - o->sizes[i]), o->sizes[i]);
		if (!hir_schedule_name_size(&c->hir->schedule, name, value, e)) {
			error_prefix(e, from);
			return false;
		}
	}
	if (o->schedule_file && !(file = read_schedule_file(o->schedule_file, e)))
		return false;
	ok = hir_schedule_parse(&c->hir->schedule, file ? file : o->schedule_text, file ? o->schedule_file : "--schedule-text", e);
	free(file);
	return ok;
}

bool pipeline_run(const char *path, Level stop, const PipelineOptions *o, Compiled *c, Error *e)
{
	FrontLimits limits = front_default_limits();
	memset(c, 0, sizeof *c);
	if ((o->limits && !front_limits_parse(&limits, o->limits, e)) || !(c->hir = front_read_model(path, o->format, &limits, e)))
		return false;
	phase_end(o->timer, "read");
	return pipeline_lower(path, stop, o, c, e);
}

/*
 * Notes for the directives padding changes: where the whole forest is padded to its depth
 * (it pays), a peelWalk's walks take every step straight, as unrollWalk's would.
 */
static void note_padded(Compiled *c)
{
	const HSchedule *s = &c->hir->schedule;
	uint32_t min, max;
	hir_leaf_depth_range(c->hir, &min, &max);
	for (uint32_t v = 0; v < s->num_vars; v++) {
		size_t n = strlen(c->notes);
		char where[700];
		if (!s->vars[v].has_loop || !s->vars[v].peel_walk || s->vars[v].peel_walk >= max)
			continue;
		snprintf(c->notes + n, sizeof c->notes - n,
		         "%s: the forest is padded to depth %u (padding pays): its walks take all %u steps straight, as unrollWalk(%s, %u) says\n",
		         hir_schedule_where(s, (int32_t)v, HDIR_PEEL_WALK, where, sizeof where), max, max, s->vars[v].name, max);
	}
}

/*
 * A note where the branch-free representation walks some trees as ifs: trees of more
 * than 64 leaves, or every tree where some leaves are vectors (lower/rep_code.c).
 */
static void note_branchfree(Compiled *c, const char *representation)
{
	const HForest *f = c->hir;
	uint32_t wide = 0, vectors = 0;
	size_t n = strlen(c->notes);
	if (!representation || strcmp(representation, "branchfree"))
		return;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		wide += (f->trees[t].num_nodes + 1) / 2 > LOWER_CODE_MASK_LEAVES;
		vectors += f->trees[t].width > 1;
	}
	if (vectors || wide)
		snprintf(c->notes + n, sizeof c->notes - n,
		         "representation branchfree: %u of %u trees walk as ifs (code's), %s %d leaves\n",
		         vectors ? f->num_trees : wide, f->num_trees,
		         vectors ? "the forest's leaves being vectors, not one value of at most" : "having more than",
		         LOWER_CODE_MASK_LEAVES);
}

/* A note where a block's rows walk as floats, with none of the keys' compares, tops or leaf masks: its keys would not fit the stack. */
static void note_keyless(Compiled *c)
{
	uint32_t columns = 0;
	int64_t rows = mir_keyless_block(c->mir, &columns);
	size_t n = strlen(c->notes);
	if (rows)
		snprintf(c->notes + n, sizeof c->notes - n,
		         "schedule: a block of %lld rows walks them as floats, without keys, tops or leaf masks: their keys (%u a row, 4 bytes each) would take more than the %u bytes of stack a block's keys may (blocks of up to %lld rows get them)\n",
		         (long long)rows, columns, COST_KEYS_MAX_BYTES, (long long)cost_keys_max_rows(columns));
}

/* Whether d is a grid dimension. */
static bool grid_dim(uint8_t d) { return d >= HGPU_GRID_X && d <= HGPU_GRID_Z; }

/*
 * On a GPU the nesting of loops mapped to grid dimensions is immaterial (each pair of
 * their iterations is a block of its own). A tree loop so mapped, alone inside a batch
 * loop so mapped (Tahoe's shared partial forest as the seed writes it), would have the
 * rows' margins declared inside the batch loop and summed across blocks, which no kernel
 * can: it moves outside the batch loop, where the margins of all rows live in global
 * memory and each tree block's sums are folded by a kernel of their own. A note says so.
 */
static bool hoist_grid_trees(Compiled *c, Error *e)
{
	HSchedule *s = &c->hir->schedule;
	for (uint32_t v = 0; v < s->num_vars;) {
		const HIndexVar *x = &s->vars[v];
		int32_t p = x->loop_parent;
		char where[700];
		size_t n = strlen(c->notes);
		if (!x->has_loop || !x->over_trees || !grid_dim(x->gpu_dim) || p == HIR_NONE || s->vars[p].over_trees ||
		    !grid_dim(s->vars[p].gpu_dim) || s->vars[p].first_child != (int32_t)v || x->next_sibling != HIR_NONE) {
			v++;
			continue;
		}
		snprintf(c->notes + n, sizeof c->notes - n,
		         "%s: '%s' runs outside '%s' (loops over grid dimensions nest in any order), its rows' sums in global memory, folded by a kernel of their own\n",
		         hir_schedule_where(s, (int32_t)v, HDIR_GPU_DIMENSION, where, sizeof where), x->name, s->vars[p].name);
		if (!hir_schedule_reorder(s, (const char *const[]){x->name, s->vars[p].name}, 2, e))
			return false;
		v = 0; /* the loops moved: from the first again (the tree loop may now sit alone in another grid loop) */
	}
	return true;
}

/* A lowering's error about a place in the schedule (Error.place): the place before its message. */
static void place_error(const HSchedule *s, Error *e)
{
	char where[700];
	int32_t var = (int32_t)e->place - 1;
	if (!e->place || e->place > s->num_vars)
		return;
	if (e->place_directive >= 0)
		hir_schedule_where(s, var, (HDirectiveKind)e->place_directive, where, sizeof where);
	else
		snprintf(where, sizeof where, "schedule: loop %s", s->vars[var].name);
	error_prefix(e, where);
}

/* Directives a host target does not take (the GPU ones): an error naming the first one. */
static bool check_host(const HSchedule *s, Error *e)
{
	char where[700];
	for (uint32_t i = 0; i < s->num_vars; i++) {
		const HIndexVar *v = &s->vars[i];
		int32_t var = (int32_t)i;
		if (!v->has_loop)
			continue;
		if (v->gpu_dim)
			return error_set(e, "%s: the host target has no GPU grid or blocks (gpuDimension needs a GPU target)",
			                 hir_schedule_where(s, var, HDIR_GPU_DIMENSION, where, sizeof where));
		if (v->reduce == HREDUCE_SHARED)
			return error_set(e, "%s: the host target has no shared memory (sharedReduce needs a GPU target)",
			                 hir_schedule_where(s, var, HDIR_SHARED_REDUCE, where, sizeof where));
	}
	return true;
}

/* The pipeline from a scheduled c->hir on. */
static bool lower_scheduled(const char *path, Level stop, const PipelineOptions *o, Compiled *c, Error *e)
{
	if (c->hir->schedule.tree_order == HORDER_DEPTH)
		hir_sort_trees(c->hir);
	if (o->gpu && !hoist_grid_trees(c, e))
		return false;
	dump_after(o, PASS_SCHEDULE, c);
	if (stop == LEVEL_HIR)
		return true;
	/*
	 * Sorted trees are padded per depth group, as the schedule's unrollWalks say; trees
	 * compiled into code walk only as deep as each leaf is, and padding would grow them;
	 * bit vectors hold a bit per leaf, which padding would multiply past 64.
	 */
	if (c->hir->schedule.tree_order == HORDER_MODEL && cost_padding_pays(c->hir) &&
	    !(lower_representation_named_traits(c->hir->schedule.representation[0] ? c->hir->schedule.representation
	                                                                           : o->representation) & (LREP_CODE | LREP_BLOCKS))) {
		hir_pad(c->hir);
		note_padded(c);
	}
	if (!hir_pad_unrolled_walks(c->hir, e))
		return false;
	note_branchfree(c, c->hir->schedule.representation[0] ? c->hir->schedule.representation : o->representation);
	dump_after(o, PASS_PAD, c);
	if (c->hir->schedule.tile_size) { /* last: a pass that rebuilt trees would drop the tiles */
		hir_tile_trees(c->hir, c->hir->schedule.tile_size, (HTiling)c->hir->schedule.tiling);
		dump_after(o, PASS_TILE, c);
	}
	/*
	 * CPU walks compare in the forms x86 decides from one flag (lower/hir_narrow.c): the
	 * forest gets them here, in place, not in a copy while lowering (a double forest for
	 * its double entry; its float twin, made while lowering, takes them too).
	 */
	if (!o->gpu)
		hir_float_forms(c->hir);
	phase_end(o->timer, "schedule");
	if (!(c->mir = lower_hir_to_mir(c->hir, o->representation, e)))
		goto failed;
	c->mir->vector_tops = o->gpu ? MTOPS_NONE : o->vector_tops;
	dump_after(o, PASS_LOWER_MIR, c);
	if (!mir_legalize_reductions(c->mir, e))
		goto failed;
	dump_after(o, PASS_LEGALIZE, c);
	/* Each MIR pass leaves MIR that mir_verify accepts (lower_hir_to_mir and legalize check their own). */
	mir_unroll_walks(c->mir);
	dump_after(o, PASS_UNROLL, c);
	if (!mir_verify(c->mir, e))
		goto failed;
	mir_interleave(c->mir);
	dump_after(o, PASS_INTERLEAVE, c);
	if (!mir_verify(c->mir, e))
		goto failed;
	mir_version_complete(c->mir);
	dump_after(o, PASS_VERSION, c);
	if (!mir_verify(c->mir, e))
		goto failed;
	mir_plan_blocks(c->mir, o->gpu);
	if (!o->gpu)
		note_keyless(c);
	dump_after(o, PASS_BLOCKS, c);
	if (!mir_verify(c->mir, e))
		goto failed;
	phase_end(o->timer, "lower-mir");
	if (stop == LEVEL_MIR)
		return true;
	if (!o->gpu && !check_host(&c->hir->schedule, e))
		goto failed;
	if (!(c->lir = o->gpu ? lower_mir_to_gpu(c->mir, e) : lower_mir_to_lir(c->mir, e))) {
		place_error(&c->hir->schedule, e);
		goto failed;
	}
	dump_after(o, PASS_LOWER_LIR, c);
	/* The LIR holds all that emission needs: free the forest and the loops before LLVM copies the buffers. */
	mir_module_free(c->mir);
	hir_forest_free(c->hir);
	c->mir = NULL;
	c->hir = NULL;
	phase_end(o->timer, "lower-lir");
	return true;
failed:
	error_prefix(e, path);
	return false;
}

bool pipeline_lower(const char *path, Level stop, const PipelineOptions *o, Compiled *c, Error *e)
{
	bool learned = false, ok;
	HForest *plain;
	dump_after(o, PASS_READ, c);
	if (hir_fold_mirrored_margins(c->hir))
		dump_after(o, PASS_MIRROR, c);
	if (!schedule_model(o, c, &learned, e))
		return false;
	/* The cost model's schedule may be one the lowering refuses (say, a stack it would overflow): the heuristic's then. */
	plain = learned ? hir_forest_copy(c->hir) : NULL;
	ok = lower_scheduled(path, stop, o, c, e);
	if (!ok && plain) {
		PipelineOptions heuristic = *o;
		heuristic.learned = false;
		mir_module_free(c->mir);
		hir_forest_free(c->hir);
		*c = (Compiled){.hir = plain};
		plain = NULL;
		*e = (Error){.message = {0}};
		ok = schedule_model(&heuristic, c, &learned, e) && lower_scheduled(path, stop, &heuristic, c, e);
	}
	hir_forest_free(plain);
	return ok;
}

void compiled_free(Compiled *c)
{
	lir_module_free(c->lir);
	mir_module_free(c->mir);
	hir_forest_free(c->hir);
	memset(c, 0, sizeof *c);
}

/* The devices --target names, besides host triples. */
static const struct {
	const char *name;
	TargetDevice device;
} devices[] = {{"gpusim", TARGET_DEVICE_GPUSIM}, {"cuda", TARGET_DEVICE_CUDA}, {"rocm", TARGET_DEVICE_ROCM}};

const char *pipeline_device_name(size_t i) { return i < COUNT_OF(devices) ? devices[i].name : NULL; }

bool pipeline_target(const char *text, TargetOptions *t, PipelineOptions *p, Error *e)
{
	const char *colon = text ? strchr(text, ':') : NULL;
	size_t n = colon ? (size_t)(colon - text) : text ? strlen(text) : 0;
	t->device = TARGET_DEVICE_HOST;
	t->gpu_arch = NULL;
	t->triple = text;
	for (size_t k = 0; text && k < COUNT_OF(devices); k++) {
		if (strlen(devices[k].name) != n || strncmp(text, devices[k].name, n))
			continue;
		t->device = devices[k].device;
		t->triple = NULL;
		t->gpu_arch = colon ? colon + 1 : NULL;
		if (colon && devices[k].device == TARGET_DEVICE_GPUSIM)
			return error_set(e, "target %s: the simulator has no architectures", text);
	}
	p->gpu = t->device != TARGET_DEVICE_HOST;
	return true;
}

/* libgrovec */

void grove_compile_options_init(GroveCompileOptions *o)
{
	memset(o, 0, sizeof *o);
	o->opt_level = 3;
	o->interleave = DEFAULT_INTERLEAVE;
	o->interleave_trees = DEFAULT_INTERLEAVE_TREES;
	o->tile_trees = HIR_TILE_AUTO;
}

/* Fill err (if not NULL) with status and e's message; returns status. */
static GroveStatus report(GroveError *err, GroveStatus status, const Error *e)
{
	if (err) {
		size_t n = strnlen(e->message, sizeof err->message - 1); /* a longer message is cut */
		err->status = status;
		memcpy(err->message, e->message, n);
		err->message[n] = 0;
	}
	return status;
}

/* The API's sizes, "NAME=N,NAME=N", into p->sizes, which point into *copy (the caller frees it). */
static bool split_sizes(const char *text, char **copy, PipelineOptions *p, Error *e)
{
	char *save = NULL;
	p->sizes_from = "sizes";
	for (char *item = strtok_r(*copy = xstrdup(text), ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (p->num_sizes == HIR_MAX_SIZE_NAMES)
			return error_set(e, "sizes %s: at most %d sizes", text, HIR_MAX_SIZE_NAMES);
		p->sizes[p->num_sizes++] = item;
	}
	return true;
}

/* The TargetEmit named by name (NULL: a shared library); false if it names none. */
static bool emit_kind(const char *name, TargetEmit *emit)
{
	static const char *const kinds[] = {[TARGET_EMIT_SHARED] = "so", [TARGET_EMIT_OBJ] = "obj", [TARGET_EMIT_ASM] = "asm",
	                                    [TARGET_EMIT_LLVM] = "llvm", [TARGET_EMIT_PTX] = "ptx", [TARGET_EMIT_HSACO] = "hsaco"};
	for (size_t k = 0; k < COUNT_OF(kinds); k++)
		if (!name || !strcmp(name, kinds[k])) {
			*emit = (TargetEmit)k;
			return true;
		}
	return false;
}

GroveStatus pipeline_compile(const char *model_path, const HForest *forest, const char *out_path,
                             const GroveCompileOptions *options, GroveError *err)
{
	GroveCompileOptions defaults;
	FrontLimits limits = front_default_limits();
	PipelineOptions p = DEFAULT_PIPELINE;
	TargetOptions t = {0};
	Compiled c = {0};
	Error e = {0};
	GroveStatus status = GROVE_OK;
	const char *name = forest ? "the forest" : model_path;
	char *cache, *sizes = NULL;

	if (!options)
		grove_compile_options_init(&defaults), options = &defaults;
	if ((!model_path && !forest) || !out_path)
		error_set(&e, "grove_compile_file: %s is NULL", out_path ? "model_path" : "out_path");
	else if (!emit_kind(options->emit, &t.emit))
		error_set(&e, "emit %s: expected so, obj, asm, llvm, ptx or hsaco", options->emit);
	else if (options->format && !front_format_known(options->format))
		error_set(&e, "format %s: unknown format (expected %s)", options->format, front_format_names());
	else if (options->interleave < 1 || options->interleave > MIR_MAX_INTERLEAVE ||
	         options->interleave_trees < 1 || options->interleave_trees > MIR_MAX_INTERLEAVE)
		error_set(&e, "interleave %u, interleave_trees %u: each must be 1 to %d", options->interleave,
		          options->interleave_trees, MIR_MAX_INTERLEAVE);
	else if (options->limits)
		front_limits_parse(&limits, options->limits, &e);
	if (!e.message[0] && options->sizes)
		split_sizes(options->sizes, &sizes, &p, &e);
	if (e.message[0]) {
		free(sizes);
		return report(err, GROVE_ERROR_ARGUMENT, &e);
	}
	t.cpu = options->cpu;
	t.prefix = options->prefix;
	t.opt_level = options->opt_level;
	if (!pipeline_target(options->target, &t, &p, &e) || !target_check(&t, &e)) {
		free(sizes);
		return report(err, GROVE_ERROR_ARGUMENT, &e);
	}
	t.cache_dir = cache = target_cache_dir(options->cache_dir);
	p.vector_tops = target_vector_tops(t.triple, t.cpu);

	p.format = options->format;
	p.limits = options->limits;
	p.representation = options->representation;
	p.schedule_text = options->schedule;
	p.interleave = options->interleave;
	p.interleave_trees = options->interleave_trees;
	p.tree_tile = options->tile_trees;
	if (forest) { /* a built forest: checked whole (each tree was as it came), then lowered from a copy */
		c.hir = hir_forest_copy(forest);
		if (!hir_verify(c.hir, &e) || !front_check_limits(c.hir, limits, name, &e))
			status = GROVE_ERROR_FORMAT;
		else if (!pipeline_lower(name, LEVEL_LIR, &p, &c, &e))
			status = GROVE_ERROR_ARGUMENT;
	} else if (!pipeline_run(model_path, LEVEL_LIR, &p, &c, &e)) {
		/* A model that cannot be opened is an I/O error; one that can, a bad model or schedule. */
		status = !c.hir ? (access(model_path, R_OK) != 0 ? GROVE_ERROR_IO : GROVE_ERROR_FORMAT) : GROVE_ERROR_ARGUMENT;
	}
	if (status == GROVE_OK && !target_emit(c.lir, &t, out_path, &e))
		status = GROVE_ERROR_IO;
	compiled_free(&c);
	free(cache);
	free(sizes);
	return status == GROVE_OK ? GROVE_OK : report(err, status, &e);
}

GroveStatus grove_compile_file(const char *model_path, const char *out_path, const GroveCompileOptions *options,
                               GroveError *err)
{
	return pipeline_compile(model_path, NULL, out_path, options, err);
}
