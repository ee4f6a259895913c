/*
 * libFuzzer harness: the input as a schedule in the scheduling language, for a small
 * two-class forest; a schedule the parser accepts is lowered to MIR and LIR and
 * verified. The parser and the lowering may refuse a schedule (with a message), never
 * crash or build IR that does not verify.
 */
#include "tests/fuzz/fuzz.h"

/* Four trees of two outputs over three features, one of them deeper. */
static HForest *small_forest(void)
{
	HForest *f = hir_forest_new("fuzz", 3, 2);
	for (uint32_t t = 0; t < 4; t++) {
		HNode *n = hir_tree_add(f, t == 3 ? 7 : 3, t % 2);
		n[0] = (HNode){.value = 0.5 * t, .left = 1, .right = 2, .feature = t % 3, .default_left = t & 1};
		n[1] = (HNode){.value = 1.0 + t, .feature = HIR_LEAF};
		n[2] = (HNode){.value = -1.0 - t, .feature = HIR_LEAF};
		if (t == 3) {
			n[2] = (HNode){.value = 2.0, .left = 3, .right = 4, .feature = 1};
			n[3] = (HNode){.value = -0.5, .left = 5, .right = 6, .feature = 2};
			n[4] = (HNode){.value = 4.0, .feature = HIR_LEAF};
			n[5] = (HNode){.value = 5.0, .feature = HIR_LEAF};
			n[6] = (HNode){.value = 6.0, .feature = HIR_LEAF};
		}
	}
	f->transform = HTRANSFORM_SOFTMAX;
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PipelineOptions o = DEFAULT_PIPELINE;
	Compiled c = {0};
	Error e = {0};
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	c.hir = small_forest();
	hir_schedule_init(&c.hir->schedule, c.hir->num_trees);
	if (hir_schedule_parse(&c.hir->schedule, text, "fuzz", &e)) {
		o.scheduled = true;
		fuzz_lower(&c, &o, false);
	} else {
		compiled_free(&c);
	}
	free(text);
	return 0;
}
