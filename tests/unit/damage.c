/*
 * Damaged artifacts: every truncated, bit-flipped, re-targeted or foreign copy of an
 * artifact is refused by grove_load with a message (the seal and the ELF checks of
 * rt/runtime.c), and never reaches dlopen to crash the process.
 */
#define _POSIX_C_SOURCE 200809L
#include "rt/grove_compile.h"
#include "target/target.h"

#include <elf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

static unsigned char *artifact;
static size_t artifact_size;
static char copy_path[64];

/* Write the first n bytes of data to copy_path. */
static void write_copy(const unsigned char *data, size_t n)
{
	FILE *f = fopen(copy_path, "wb");
	CHECK(f && fwrite(data, 1, n, f) == n);
	if (f)
		fclose(f);
}

/* Loading copy_path must fail with status and a message containing text. */
static void expect_refused(GroveStatus status, const char *text, const char *what, int line)
{
	GroveModel *m = NULL;
	GroveError err = {0};
	GroveStatus got = grove_load(copy_path, &m, &err);
	if (got != status || m || !strstr(err.message, text)) {
		fprintf(stderr, "%s:%d: %s: got %s '%s', expected %s with '%s'\n", __FILE__, line, what, grove_status_name(got),
		        err.message, grove_status_name(status), text);
		failures++;
	}
	grove_free(m);
}

/* Read the file at path into artifact. */
static bool read_artifact(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0)
		return false;
	artifact_size = (size_t)n;
	artifact = malloc(artifact_size);
	n = artifact && fread(artifact, 1, artifact_size, f) == artifact_size;
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	char model[4096], dir[] = "/tmp/grove-damage-XXXXXX", path[64];
	GroveModel *m = NULL;
	GroveError err;
	Error e = {0};
	size_t cuts[] = {0, 1, 16, 63, 64, 65, 512, 4096, 0, 0, 0, 0, 0, 0, 0};
	unsigned char *flipped;

	(void)argc;
	snprintf(model, sizeof model, "%s/../../tests/golden/lightgbm.txt", dirname(argv[0])); /* build/tests/damage */
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/model.so", dir);
	snprintf(copy_path, sizeof copy_path, "%s/copy.so", dir);
	CHECK(grove_compile_file(model, path, NULL, &err) == GROVE_OK && read_artifact(path));
	if (!artifact)
		return 1;

	/* The artifact as written loads, and so does an exact copy. */
	write_copy(artifact, artifact_size);
	CHECK(grove_load(copy_path, &m, &err) == GROVE_OK);
	grove_free(m);

	/* Truncated anywhere: in the ELF header, in the code, in the section headers, in the seal, or just the seal. */
	cuts[8] = artifact_size / 4;
	cuts[9] = artifact_size / 2;
	cuts[10] = artifact_size - 100;
	cuts[11] = artifact_size - 33;
	cuts[12] = artifact_size - 32; /* the whole library, no seal */
	cuts[13] = artifact_size - 31;
	cuts[14] = artifact_size - 1;
	for (size_t i = 0; i < COUNT_OF(cuts); i++) {
		char what[64];
		snprintf(what, sizeof what, "cut to %zu bytes", cuts[i]);
		write_copy(artifact, cuts[i]);
		expect_refused(GROVE_ERROR_FORMAT, cuts[i] >= artifact_size - 32 ? "not a sealed grove artifact" :
		               cuts[i] < 64 ? "not a grove artifact" : "damaged artifact", what, __LINE__);
	}

	/* One bit flipped anywhere, the seal included. */
	flipped = malloc(artifact_size);
	for (size_t k = 0; k < 96; k++) {
		size_t at = k < 64 ? k * (artifact_size / 64) + 7 * k % 13 : artifact_size - 32 + (k - 64);
		char what[64];
		memcpy(flipped, artifact, artifact_size);
		flipped[at] ^= (unsigned char)(1u << (k % 8));
		write_copy(flipped, artifact_size);
		snprintf(what, sizeof what, "bit %zu of byte %zu flipped", k % 8, at);
		/* A flip in the seal's magic leaves no seal: the file is refused as unsealed. */
		expect_refused(GROVE_ERROR_FORMAT, at >= artifact_size - 32 && at < artifact_size - 24 ?
		               "not a sealed grove artifact" : "damaged artifact", what, __LINE__);
	}

	/* A sealed library for another machine. */
	memcpy(flipped, artifact, artifact_size);
	flipped[18] = EM_AARCH64;
	flipped[19] = 0;
	write_copy(flipped, artifact_size - 32);
	CHECK(target_seal(copy_path, &e));
	expect_refused(GROVE_ERROR_FORMAT, "an artifact for AArch64; this library runs on x86-64", "AArch64", __LINE__);

	/* Files that are no artifact at all. */
	write_copy((const unsigned char *)"hello, world\n", 13);
	expect_refused(GROVE_ERROR_FORMAT, "not an ELF shared library", "text", __LINE__);
	write_copy((const unsigned char *)"", 0);
	expect_refused(GROVE_ERROR_FORMAT, "the file is empty", "empty", __LINE__);
	memcpy(flipped, artifact, 64);
	flipped[EI_CLASS] = ELFCLASS32;
	write_copy(flipped, 64);
	expect_refused(GROVE_ERROR_FORMAT, "not a 64-bit little-endian shared library", "32-bit ELF", __LINE__);
	strcpy(copy_path, dir);
	expect_refused(GROVE_ERROR_IO, "a directory", "directory", __LINE__);

	snprintf(copy_path, sizeof copy_path, "%s/copy.so", dir);
	unlink(copy_path);
	unlink(path);
	rmdir(dir);
	free(flipped);
	free(artifact);
	if (failures)
		fprintf(stderr, "damage: %d checks failed\n", failures);
	return failures != 0;
}
