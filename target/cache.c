/*
 * The code cache: optimised, generated code objects kept on disk and reused when the
 * same code is compiled again. A model's trees are data in a module of their own
 * (target_build_module), so every model of one shape under one schedule (a retrained
 * model, one with other thresholds and leaves, the same model compiled again) has the
 * same code module, and LLVM's optimisation and code generation, most of a compile,
 * run once per shape.
 *
 * An entry is named by a 128-bit hash of everything that decides the object: the code
 * module's IR before optimisation, LLVM's version, the triple, CPU and features, the
 * optimisation level, the pass pipeline and CACHE_FORMAT. It holds the object's bytes,
 * then a trailer: CACHE_MAGIC, the object's size, the key and a checksum of the bytes.
 * An entry that does not check out is a miss (and is removed). Entries are written to a
 * temporary file and renamed into place, so concurrent compiles see whole entries or
 * none. Past CACHE_MAX_ENTRIES, storing an entry removes the least recently used ones.
 * The cache only ever saves time: a directory that cannot be made or written is
 * compiled without.
 */
#include "target/cache.h"
#include "target/target.h"

#include <llvm-c/Core.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bump when what reaches the object changes outside the key (target_machine_create's settings). */
#define CACHE_FORMAT "grove code cache 2"
#define CACHE_MAGIC "grovecc1"
#define CACHE_MAX_ENTRIES 256
#define CACHE_MAX_OBJECT (1u << 30)

typedef struct Trailer {
	char magic[8];
	uint64_t size;
	uint64_t key[2];
	uint64_t checksum;
} Trailer;

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* Two FNV-1a lanes with different primes over n bytes at p, folded into h. */
static void hash_bytes(uint64_t h[2], const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t a = h[0] ^ n, b = h[1] + n;
	for (size_t i = 0; i < n; i++) {
		a = (a ^ s[i]) * 0x100000001b3ull;
		b = (b ^ s[i]) * 0x9e3779b97f4a7c15ull;
	}
	h[0] = mix(a ^ (b >> 7));
	h[1] = mix(b + a);
}

static void hash_text(uint64_t h[2], const char *s) { hash_bytes(h, s, strlen(s) + 1); }

void cache_key(CacheKey *key, LLVMModuleRef mod, LLVMTargetMachineRef tm, int level, const char *passes)
{
	char *ir = LLVMPrintModuleToString(mod), *triple = LLVMGetTargetMachineTriple(tm);
	char *cpu = LLVMGetTargetMachineCPU(tm), *features = LLVMGetTargetMachineFeatureString(tm);
	unsigned version[3];
	uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
	LLVMGetVersion(&version[0], &version[1], &version[2]);
	hash_text(h, CACHE_FORMAT);
	hash_bytes(h, version, sizeof version);
	hash_bytes(h, &level, sizeof level);
	hash_text(h, passes);
	hash_text(h, triple);
	hash_text(h, cpu);
	hash_text(h, features);
	hash_text(h, ir);
	key->hash[0] = h[0];
	key->hash[1] = h[1];
	LLVMDisposeMessage(ir);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(features);
}

static uint64_t checksum(const char *bytes, size_t size)
{
	uint64_t h[2] = {1, 2};
	hash_bytes(h, bytes, size);
	return h[0];
}

/* dir/<key in hex>.o, malloc'd. */
static char *entry_path(const char *dir, const CacheKey *key)
{
	size_t n = strlen(dir) + 48;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/%016llx%016llx.o", dir, (unsigned long long)key->hash[0], (unsigned long long)key->hash[1]);
	return path;
}

/* Read exactly n bytes; false at end of file or on an error. */
static bool read_all(int fd, char *p, size_t n)
{
	while (n) {
		ssize_t got = read(fd, p, n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		p += got, n -= (size_t)got;
	}
	return true;
}

char *cache_load(const char *dir, const CacheKey *key, size_t *size)
{
	char *path = entry_path(dir, key), *bytes = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	Trailer t;
	bool good = false;

	if (fd < 0) {
		free(path);
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)sizeof t &&
	    st.st_size <= (off_t)CACHE_MAX_OBJECT + (off_t)sizeof t) {
		size_t n = (size_t)st.st_size - sizeof t;
		bytes = xmalloc(n ? n : 1);
		good = read_all(fd, bytes, n) && read_all(fd, (char *)&t, sizeof t) && !memcmp(t.magic, CACHE_MAGIC, 8) &&
		       t.size == n && t.key[0] == key->hash[0] && t.key[1] == key->hash[1] && t.checksum == checksum(bytes, n);
		*size = n;
	}
	close(fd);
	if (good)
		utimensat(AT_FDCWD, path, NULL, 0); /* recently used: pruned last */
	else {
		unlink(path); /* damaged or foreign: recompiled and stored again */
		free(bytes);
		bytes = NULL;
	}
	free(path);
	return bytes;
}

/* mkdir -p path (the last component private to the user); false if it is not a directory afterwards. */
static bool make_directories(const char *path)
{
	char *p = xstrdup(path);
	struct stat st;
	for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		mkdir(p, 0755);
		*slash = '/';
	}
	mkdir(p, 0700);
	free(p);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct Entry {
	char name[40];
	time_t used;
} Entry;

static int by_use(const void *a, const void *b)
{
	time_t x = ((const Entry *)a)->used, y = ((const Entry *)b)->used;
	return (x > y) - (x < y);
}

/* Remove the least recently used entries of dir beyond CACHE_MAX_ENTRIES (and down to 3/4 of it). */
static void prune(const char *dir)
{
	DIR *d = opendir(dir);
	Entry *entries = NULL;
	size_t count = 0, cap = 0;
	struct dirent *ent;
	if (!d)
		return;
	while ((ent = readdir(d))) {
		struct stat st;
		size_t len = strlen(ent->d_name);
		if (len != 34 || strcmp(ent->d_name + 32, ".o") != 0 || fstatat(dirfd(d), ent->d_name, &st, 0) != 0)
			continue;
		if (count == cap)
			entries = xrealloc(entries, (cap = cap ? 2 * cap : 64) * sizeof *entries);
		memcpy(entries[count].name, ent->d_name, len + 1);
		entries[count++].used = st.st_mtime;
	}
	if (count > CACHE_MAX_ENTRIES) {
		qsort(entries, count, sizeof *entries, by_use);
		for (size_t i = 0; i < count - CACHE_MAX_ENTRIES * 3 / 4; i++)
			unlinkat(dirfd(d), entries[i].name, 0);
	}
	closedir(d);
	free(entries);
}

void cache_store(const char *dir, const CacheKey *key, const char *bytes, size_t size)
{
	char *path, *temp;
	Trailer t = {.size = size, .key = {key->hash[0], key->hash[1]}, .checksum = checksum(bytes, size)};
	size_t n;
	int fd;
	bool ok;

	if (size > CACHE_MAX_OBJECT || !make_directories(dir))
		return;
	memcpy(t.magic, CACHE_MAGIC, 8);
	path = entry_path(dir, key);
	n = strlen(path) + 8;
	temp = xmalloc(n);
	snprintf(temp, n, "%s.XXXXXX", path);
	fd = mkstemp(temp);
	if (fd >= 0) {
		FILE *f = fdopen(fd, "wb");
		ok = f && fwrite(bytes, 1, size, f) == size && fwrite(&t, sizeof t, 1, f) == 1;
		if (f ? fclose(f) != 0 : close(fd) != 0)
			ok = false;
		if (!ok || rename(temp, path) != 0)
			unlink(temp);
		else
			prune(dir);
	}
	free(temp);
	free(path);
}

char *target_cache_dir(const char *chosen)
{
	const char *base, *under = "/grove";
	char *dir;
	size_t n;
	if (!chosen)
		chosen = getenv("GROVE_CACHE_DIR");
	if (chosen)
		return *chosen && strcmp(chosen, "off") != 0 ? xstrdup(chosen) : NULL;
	if (!(base = getenv("XDG_CACHE_HOME")) || *base != '/') {
		base = getenv("HOME");
		under = "/.cache/grove";
	}
	if (!base || *base != '/')
		return NULL;
	n = strlen(base) + strlen(under) + 1;
	dir = xmalloc(n);
	snprintf(dir, n, "%s%s", base, under);
	return dir;
}
