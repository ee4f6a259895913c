/*
 * Walks of representations that keep trees in code (LRepresentation.walk): each lane's
 * walk whole, of a tree known at compile time; or, where the lanes are rows side by side
 * of one tree and the representation takes them so (walk_lanes), all of them at once, as
 * one vector of their leaves' values.
 */
#include "lower/lowering.h"

/*
 * Whether the walk of tree `tree` (its LIR handle) may be lowered as code here: its number
 * is known (every tree loop around specialized), and its splits fit in what the function
 * may still hold. Else records the error that says which.
 */
static bool code_fits(Lowering *l, uint32_t tree)
{
	uint64_t splits;
	if (l->b.fn->insts[tree].op != LOP_CONST) {
		/* The first tree loop around that is not specialized names the fix. */
		int32_t loop = HIR_NONE;
		for (uint32_t i = 0; i < l->scope.trees.num_terms && loop == HIR_NONE; i++)
			if (!l->is_const[l->scope.trees.terms[i]])
				loop = l->scope.trees.terms[i];
		lower_fail_at(l, loop, -1, "representation %s: the walks inside it take a tree chosen at run time, and this "
		                           "representation compiles each tree into code of its own: specialize it and every tree "
		                           "loop around it", l->rep->name);
		return false;
	}
	splits = hir_tree_splits(l->f, (uint32_t)l->b.fn->insts[tree].imm);
	if (splits > LOWER_CODE_FUNCTION_SPLITS) {
		lower_fail(l, "representation %s: tree %lld alone has %llu splits, more than the %d of code one function "
		              "may hold; use array or sparse", l->rep->name, (long long)l->b.fn->insts[tree].imm,
		           (unsigned long long)splits, LOWER_CODE_FUNCTION_SPLITS);
		return false;
	}
	if ((l->code_splits += splits) > LOWER_CODE_FUNCTION_SPLITS) {
		lower_fail(l, "representation %s: the walks the schedule puts in one function come to more than %d splits "
		              "of code, past which LLVM's time grows faster than the code; each iteration of the outermost "
		              "specialized tree loop is a function of its own (tile the trees in smaller tiles, and specialize "
		              "the tile loop), or use array or sparse", l->rep->name,
		           LOWER_CODE_FUNCTION_SPLITS);
		return false;
	}
	return true;
}

/*
 * The walks of the lanes, rows side by side of one tree, at once (walk_lanes): true where
 * the representation took them, their values then read lane by lane from its vector.
 */
static bool code_walk_lanes(Lowering *l, const MInst *walk, uint32_t id)
{
	uint32_t lanes = l->scope.lanes, tree = l->tree_index[lane_slot(walk->a, 0)], values, spill;
	/* Lanes of rows read them at a constant distance from lane 0's (lower_walk_row), or all lane 0's. */
	bool row_lanes = l->scope.lane_var != HIR_NONE && mir_index_has(&walk->row, l->scope.lane_var);
	int64_t stride;
	RepRow row;
	if (!l->rep->walk_lanes || lanes < 2 || l->scope.lanes_are_trees || l->b.fn->insts[tree].op != LOP_CONST ||
	    l->block.key_rows != LIR_NONE)
		return false;
	for (uint32_t r = 1; r < lanes; r++) {
		const LInst *other = &l->b.fn->insts[l->tree_index[lane_slot(walk->a, r)]];
		if (other->op != LOP_CONST || other->imm != l->b.fn->insts[tree].imm)
			return false;
	}
	row = lower_walk_row(l, walk, 0);
	stride = row_lanes ? l->scope.lane_step * row.row_step : 0;
	if (stride * lanes > INT32_MAX)
		return false;
	values = l->rep->walk_lanes(&l->layout, &l->b, l->value[lane_slot(walk->a, 0)], &row, lanes, (uint32_t)stride);
	if (values == LIR_NONE)
		return false;
	code_fits(l, tree); /* (where not, the error drops the module) */
	l->lanes_value[id] = values;
	spill = lir_local_array(&l->b, l->layout.leaf_type, lanes, LSPACE_PRIVATE);
	l->b.fn->insts[spill].lanes = (uint8_t)lanes;
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, spill, const_i64(l, 0), values);
	for (uint32_t r = 0; r < lanes; r++)
		l->value[lane_slot(id, r)] = emit2(l, LOP_LOAD, l->layout.leaf_type, spill, const_i64(l, r));
	return true;
}

void lower_code_walk(Lowering *l, uint32_t id)
{
	const MInst *walk = &l->m->insts[id];
	l->lanes_value[id] = LIR_NONE;
	if (code_walk_lanes(l, walk, id))
		return;
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		uint32_t tree = l->tree_index[lane_slot(walk->a, r)], value = LIR_NONE;
		RepRow row = lower_walk_row(l, walk, r); /* emits: instructions may move */
		if (code_fits(l, tree))
			value = l->rep->walk(&l->layout, &l->b, l->value[lane_slot(walk->a, r)], &row);
		l->value[lane_slot(id, r)] = value != LIR_NONE ? value : lir_const_float(&l->b, l->layout.leaf_type, 0.0);
	}
}
