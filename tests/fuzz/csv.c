/*
 * libFuzzer harness: grove predict's CSV reader on the input, a few rows at a time, as
 * doubles and as floats. It may refuse the input with a message naming the line, never
 * crash or return rows of another width.
 */
#include "tools/csv.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int as_double = 0; as_double < 2; as_double++) {
		FILE *in = fmemopen((void *)data, size, "rb");
		CsvReader r;
		Table t = {0};
		Error e = {0};
		size_t cols = 0;
		if (!in)
			return 0; /* fmemopen refuses size 0 */
		csv_attach(&r, in, "fuzz.csv", as_double);
		while (csv_next(&r, 3, &t, &e) && t.rows) {
			if ((cols && t.cols != cols) || t.rows > 3)
				abort();
			cols = t.cols;
		}
		if (e.message[0] && strncmp(e.message, "fuzz.csv", 8))
			abort(); /* messages name the input */
		table_free(&t);
		csv_close(&r);
		fclose(in);
	}
	return 0;
}
