/*
 * The trained cost model as grove compiled it (lower/cost.h). configure.py builds this
 * file twice: without WITH_COST_MODEL for the first grove ($builddir/grove0), which
 * compiles lower/cost_model.json into $builddir/gen/cost_model.o and its header, and
 * with it for every other program, which links that object. Not in the source globs.
 */
#include "lower/cost.h"

#ifdef WITH_COST_MODEL
#include "cost_model.h" /* $builddir/gen/, written by grove0 --emit obj --prefix grove_cost_model */

#include <stdlib.h>

_Static_assert(GROVE_COST_MODEL_NUM_FEATURES == COST_FEATURES,
               "lower/cost_model.json takes other features than lower/cost.c writes: retrain it (tools/cost_train.py)");
_Static_assert(GROVE_COST_MODEL_NUM_OUTPUTS == 1, "lower/cost_model.json predicts more than a time");

bool cost_model_trained(void) { return true; }

void cost_model_predict(const float *x, size_t n, float *out)
{
	size_t bytes = GROVE_COST_MODEL_WORKSPACE_FIXED + n * GROVE_COST_MODEL_WORKSPACE_PER_ROW;
	void *workspace = bytes ? xmalloc(bytes) : NULL;
	grove_cost_model_predict(x, (int64_t)n, out, 0, workspace);
	free(workspace);
}
#else
bool cost_model_trained(void) { return false; }

void cost_model_predict(const float *x, size_t n, float *out)
{
	(void)x, (void)n, (void)out;
}
#endif
