/* The artifact descriptor (rt/artifact.h's GroveArtifact) as a constant in the LLVM module, for host and GPU artifacts. */
#include "target/llvm.h"

#include <stdlib.h>
#include <string.h>

/* n strings as a constant array of pointers to NUL-terminated strings; a NULL pointer for NULL. */
static LLVMValueRef emit_strings(Emitter *em, char *const *strings, uint32_t n)
{
	LLVMTypeRef ptr = em->types[LTYPE_PTR];
	LLVMValueRef *items, array;
	if (!strings)
		return LLVMConstPointerNull(ptr);
	items = xcalloc(n + 1, sizeof *items);
	for (uint32_t k = 0; k < n; k++) {
		LLVMValueRef s = LLVMConstStringInContext(em->ctx, strings[k], (unsigned)strlen(strings[k]), 0);
		items[k] = llvm_constant_global(em, LLVMTypeOf(s), s);
	}
	array = llvm_constant_global(em, LLVMArrayType(ptr, n), LLVMConstArray(ptr, items, n));
	free(items);
	return array;
}

/* The module's int64 labels as a constant array; a NULL pointer where it has none. */
static LLVMValueRef emit_label_ints(Emitter *em)
{
	const LModule *m = em->m;
	LLVMTypeRef i64 = em->types[LTYPE_I64];
	LLVMValueRef *items, array;
	if (!m->label_ints)
		return LLVMConstPointerNull(em->types[LTYPE_PTR]);
	items = xcalloc(m->num_labels + 1, sizeof *items);
	for (uint32_t k = 0; k < m->num_labels; k++)
		items[k] = LLVMConstInt(i64, (unsigned long long)m->label_ints[k], 1);
	array = llvm_constant_global(em, LLVMArrayType(i64, m->num_labels), LLVMConstArray(i64, items, m->num_labels));
	free(items);
	return array;
}

/* The module's category counts as a constant array of i32; a NULL pointer where no column has values. */
static LLVMValueRef emit_category_counts(Emitter *em)
{
	const LModule *m = em->m;
	LLVMTypeRef i32 = em->types[LTYPE_I32];
	LLVMValueRef *items, array;
	if (!m->category_values.counts)
		return LLVMConstPointerNull(em->types[LTYPE_PTR]);
	items = xcalloc(m->num_features + 1, sizeof *items);
	for (uint32_t k = 0; k < m->num_features; k++)
		items[k] = LLVMConstInt(i32, m->category_values.counts[k], 0);
	array = llvm_constant_global(em, LLVMArrayType(i32, m->num_features), LLVMConstArray(i32, items, m->num_features));
	free(items);
	return array;
}

/*
 * A constant GroveArtifact (version 6) named symbol: six i32 fields, the two i64
 * workspace sizes, the predict and predict_f64 pointers (NULL where the artifact has no
 * such entry), the labels, the feature names, the device (NULL: a host artifact) and
 * the category values.
 */
void llvm_emit_descriptor(Emitter *em, LLVMValueRef predict, LLVMValueRef predict_f64, LLVMValueRef device, const char *symbol)
{
	LLVMTypeRef i32 = em->types[LTYPE_I32], i64 = em->types[LTYPE_I64], ptr = em->types[LTYPE_PTR];
	LLVMTypeRef fields[18] = {i32, i32, i32, i32, i32, i32, i64, i64, ptr, ptr, i32, ptr, ptr, ptr, ptr, i32, ptr, ptr};
	LLVMTypeRef type = LLVMStructTypeInContext(em->ctx, fields, 18, 0);
	uint32_t ints[6] = {GROVE_ARTIFACT_MAGIC, GROVE_ARTIFACT_VERSION, em->m->num_features, em->m->num_outputs,
	                    em->m->num_margins, em->m->transform};
	const CategoryValues *c = &em->m->category_values;
	LLVMValueRef init[18], global;
	for (int i = 0; i < 6; i++)
		init[i] = LLVMConstInt(i32, ints[i], 0);
	init[6] = LLVMConstInt(i64, em->m->workspace_fixed, 0);
	init[7] = LLVMConstInt(i64, em->m->workspace_per_row, 0);
	init[8] = predict ? predict : LLVMConstPointerNull(ptr);
	init[9] = predict_f64 ? predict_f64 : LLVMConstPointerNull(ptr);
	init[10] = LLVMConstInt(i32, em->m->num_labels, 0);
	init[11] = emit_label_ints(em);
	init[12] = emit_strings(em, em->m->label_strings, em->m->num_labels);
	init[13] = emit_strings(em, em->m->feature_names, em->m->num_features);
	init[14] = device ? device : LLVMConstPointerNull(ptr);
	init[15] = LLVMConstInt(i32, c->unseen_missing ? GROVE_UNSEEN_MISSING : GROVE_UNSEEN_REFUSED, 0);
	init[16] = emit_category_counts(em);
	init[17] = emit_strings(em, c->values, (uint32_t)category_values_total(c, em->m->num_features));
	global = LLVMAddGlobal(em->mod, type, symbol);
	LLVMSetInitializer(global, LLVMConstNamedStruct(type, init, 18));
	LLVMSetGlobalConstant(global, 1);
}
