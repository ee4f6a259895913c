/*
 * libFuzzer harness: the input as an artifact file for grove_load, which must refuse
 * anything damaged before dlopen sees it (the seal, the ELF checks) and never crash. A
 * file it accepts predicts a row of zeros.
 */
#include "rt/grove.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	GroveModel *model = NULL;
	GroveError err;
	FILE *f;
	if (!path[0])
		snprintf(path, sizeof path, "/tmp/grove-fuzz-artifact-%d.so", (int)getpid());
	if (!(f = fopen(path, "wb")))
		abort();
	if (fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	if (grove_load(path, &model, &err) == GROVE_OK) {
		size_t n = grove_num_features(model), k = grove_num_outputs(model, 0);
		float *row = calloc(n + 1, sizeof *row), *out = calloc(k + 1, sizeof *out);
		if (grove_predict(model, row, 1, n, out, k, 0, &err) != GROVE_OK)
			abort();
		free(row);
		free(out);
		grove_free(model);
	} else if (!err.message[0]) {
		abort();
	}
	unlink(path);
	return 0;
}
