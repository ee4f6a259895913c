/*
 * Ahead-of-time use without libgrove: this program is compiled with the header that
 * `grove compile --emit obj --prefix aot_model` writes (passed with -include) and linked
 * with the object. It reads comma-separated rows from argv[1] and prints one prediction
 * per line.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AOT_MODEL_NUM_FEATURES
#error "compile with -include <the header grove wrote>"
#endif

int main(int argc, char **argv)
{
	size_t cap = 1024, n = 0, rows;
	float *values = malloc(cap * sizeof *values), *out;
	FILE *in;
	char line[1 << 16];

	if (argc != 2 || !(in = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: main ROWS.csv\n");
		return 2;
	}
	while (fgets(line, sizeof line, in)) {
		char *field = line;
		for (int c = 0; c < AOT_MODEL_NUM_FEATURES; c++) {
			char *end = strchr(field, ',');
			if (n == cap)
				values = realloc(values, (cap *= 2) * sizeof *values);
			values[n++] = field[0] == ',' || field[0] == '\n' ? NAN : strtof(field, NULL);
			field = end ? end + 1 : field + strlen(field);
		}
	}
	fclose(in);
	rows = n / AOT_MODEL_NUM_FEATURES;
	out = malloc((rows + 1) * AOT_MODEL_NUM_OUTPUTS * sizeof *out);
	aot_model_predict(values, (int64_t)rows, out, 0);
	for (size_t i = 0; i < rows * AOT_MODEL_NUM_OUTPUTS; i++)
		printf("%.9g\n", out[i]);
	free(values);
	free(out);
	return 0;
}
