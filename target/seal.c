/* Sealing shared-library artifacts (rt/artifact.h's GroveSeal): their size and checksum, appended. */
#include "target/target.h"
#include "rt/artifact.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Store v little-endian at p. */
static void put_le64(unsigned char *p, uint64_t v)
{
	for (int k = 0; k < 8; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

bool target_seal(const char *path, Error *e)
{
	enum { CHUNK = 1 << 16 };                /* a multiple of 8, as grove_checksum wants */
	unsigned char *chunk, seal[sizeof(GroveSeal)]; /* per call: compiles may run on several threads at once */
	uint64_t h = GROVE_CHECKSUM_START, size = 0;
	FILE *f = fopen(path, "r+b");
	size_t n;
	bool ok;
	_Static_assert(sizeof(GroveSeal) == 32, "the seal is 32 bytes");

	if (!f)
		return error_set(e, "%s: cannot seal: %s", path, strerror(errno));
	chunk = xmalloc(CHUNK);
	while ((n = fread(chunk, 1, CHUNK, f)) > 0) {
		h = grove_checksum(h, chunk, n);
		size += n;
	}
	memcpy(seal, GROVE_SEAL_MAGIC, 8);
	put_le64(seal + 8, size);
	put_le64(seal + 16, h);
	put_le64(seal + 24, 0);
	free(chunk);
	ok = !ferror(f) && fseek(f, 0, SEEK_END) == 0 && fwrite(seal, 1, sizeof seal, f) == sizeof seal;
	if (fclose(f) != 0)
		ok = false;
	return ok || error_set(e, "%s: cannot seal: %s", path, strerror(errno));
}
