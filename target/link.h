/*
 * grove's own linker (target/link.c): the host's x86-64 shared libraries from grove's
 * objects, in-process, with no C compiler or linker installed.
 *
 * Its inputs are ELF relocatable objects in memory (LLVM's code and data) and raw
 * sections (the model's buffers, target_link_buffers), each with one symbol. It handles
 * what those hold: sections of code, read-only data, data and zeros; local, hidden and
 * exported symbols; calls and references to the few functions other libraries define
 * (OpenMP's), which go through a table of addresses (GOT) the loader fills when the
 * library is loaded (BIND_NOW: no lazy binding, no PLT resolver); and the relocations
 * LLVM writes for position-independent x86-64 code (PC32, PLT32, GOTPCREL, 64). Anything
 * else (TLS, constructors, absolute 32-bit relocations) is an error that names it.
 */
#ifndef GROVE_TARGET_LINK_H
#define GROVE_TARGET_LINK_H

#include "ir/common.h"

typedef struct Linker Linker;

Linker *link_new(void);
void link_free(Linker *k);
/*
 * Add the ELF relocatable object of `size` bytes at `bytes` (read in place: they must
 * stay until link_write is done). `what` names it in errors.
 */
bool link_add_object(Linker *k, const void *bytes, size_t size, const char *what, Error *e);
/*
 * Add `size` bytes at `data` (read in place; NULL: zeros, which take no room in the
 * file) as a read-only section of its own, aligned to `align`, defining the hidden
 * symbol `name` (copied) at its start.
 */
void link_add_bytes(Linker *k, const char *name, const void *data, uint64_t size, uint64_t align);
/* How many of the symbols that no input defines (imports) have names beginning with prefix ("": all). */
size_t link_imports(const Linker *k, const char *prefix);
/*
 * Write the shared library to path: its symbols of default visibility exported, the
 * others' resolved within it, and the symbols no input defines taken from the libraries
 * `needed` (sonames, NULL-terminated) when it is loaded.
 */
bool link_write(Linker *k, const char *const *needed, const char *path, Error *e);

#endif
