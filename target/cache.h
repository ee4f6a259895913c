/* Internal to target/: the code cache (target/cache.c), optimised code objects kept on disk by the hash of their IR. */
#ifndef GROVE_TARGET_CACHE_H
#define GROVE_TARGET_CACHE_H

#include <llvm-c/TargetMachine.h>

#include "ir/common.h"

typedef struct CacheKey {
	uint64_t hash[2];
} CacheKey;

/* The key of code module mod (not yet optimised) compiled by tm at level with the pass pipeline passes. */
void cache_key(CacheKey *key, LLVMModuleRef mod, LLVMTargetMachineRef tm, int level, const char *passes);

/* The object stored in dir under key (malloc'd, *size bytes), or NULL: none, or one that does not check out. */
char *cache_load(const char *dir, const CacheKey *key, size_t *size);

/* Store size bytes of object in dir under key; silently nothing where dir cannot be made or written. */
void cache_store(const char *dir, const CacheKey *key, const char *object, size_t size);

#endif
