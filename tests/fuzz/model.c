/*
 * libFuzzer harness: the model reader of FUZZ_FORMAT (xgboost, xgboost-ubj, lightgbm,
 * onnx or catboost; configure.py builds one harness per format) on the input, then, for a model it
 * accepts, the whole pipeline that needs no LLVM: verify, schedule, lower to MIR and LIR,
 * verify each. A reader must refuse bad input with a message, never crash; a model it
 * accepts must lower under the default schedule.
 */
#include "front/front.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PipelineOptions o = DEFAULT_PIPELINE;
	Compiled c = {0};
	Error e = {0};
	if (!(c.hir = front_read_bytes("fuzz", (const char *)data, size, FUZZ_FORMAT, NULL, &e))) {
		if (!e.message[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	fuzz_lower(&c, &o, true);
	return 0;
}
