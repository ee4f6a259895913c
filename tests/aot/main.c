/*
 * Ahead-of-time use without libgrove: this program is compiled with the header that
 * `grove compile --emit obj --prefix aot_model` writes (passed with -include) and linked
 * with the object. It reads comma-separated rows from argv[1] and prints one prediction
 * per line. It allocates the workspace the header asks for (none for most schedules).
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
	size_t cap = 1024, n = 0, rows, workspace_size;
	float *values = malloc(cap * sizeof *values), *out;
	void *workspace;
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
	workspace_size = AOT_MODEL_WORKSPACE_FIXED + AOT_MODEL_WORKSPACE_PER_ROW * rows;
	workspace = workspace_size ? malloc(workspace_size) : NULL;
	if (workspace_size && !workspace) {
		fprintf(stderr, "main: cannot allocate a workspace of %zu bytes\n", workspace_size);
		return 1;
	}
	aot_model_predict(values, (int64_t)rows, out, 0, workspace);
	for (size_t i = 0; i < rows * AOT_MODEL_NUM_OUTPUTS; i++)
		printf("%.9g\n", out[i]);
	free(values);
	free(out);
	free(workspace);
	return 0;
}
