/*
 * What tests/unit/gpusim.c's artifact, its test and the fake drivers of
 * tests/fakes/gpu_drivers.c share: the dot model's shape, the fakes' state, and the
 * dot product every kernel computes.
 */
#ifndef GROVE_TESTS_UNIT_GPUSIM_H
#define GROVE_TESTS_UNIT_GPUSIM_H

#include <stddef.h>
#include <stdint.h>

#include "rt/artifact.h"

#define FEATURES 4
#define BIAS 0.5f

/*
 * The fake driver's state, which the test reads and sets: allocations made and live (streams and events live too),
 * the next to fail, a launch's delay, buffers two launches shared, asynchronous copies made, and those made before
 * what they were to wait for had finished.
 */
typedef struct FakeDriver {
	int allocations, live, fail_next, delay_us, shared, async, early;
} FakeDriver;

#if defined(GPUSIM_ARTIFACT) || defined(FAKE_CUDA_DRIVER) || defined(FAKE_HSA_RUNTIME)
/* The prediction of row r from weights w: the dot product, plus the bias unless margins are asked for. */
static float dot(const float *row, const float *w, int32_t flags)
{
	float s = 0;
	for (int k = 0; k < FEATURES; k++)
		s += row[k] * w[k];
	return s + (flags & GROVE_ARTIFACT_MARGIN ? 0 : w[FEATURES]);
}
#endif

#endif
