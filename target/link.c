/*
 * grove's own linker (target/link.h). The library it writes:
 *
 *   segment R    the ELF and program headers, .hash, .dynsym, .dynstr, .rela.dyn and
 *                the inputs' read-only data (the model's buffers among them)
 *   segment RX   the inputs' code, then a stub per imported function (jmp *GOT slot)
 *   segment RW   the inputs' data, .got, .dynamic, then the inputs' zeros (no bytes)
 *
 * each segment starting a page, every address its file offset (but the zeros'), and
 * section headers at the end for tools (the loader reads none). Relocations are applied
 * to copies of the sections that have them; the others (the buffers' megabytes) go from
 * their inputs to the file once. Absolute addresses (R_X86_64_64, in data only) become
 * RELATIVE dynamic relocations; the GOT's slots of imported symbols GLOB_DAT ones,
 * resolved when the library is loaded (DF_BIND_NOW).
 */
#include "target/link.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define STUB 16        /* bytes of an import's stub: jmp *slot(%rip) (6), then int3 */
#define ABSOLUTE UINT32_MAX       /* the section of an absolute symbol */
#define UNLINKED (UINT32_MAX - 1) /* of a local symbol in a section not linked */

enum { KIND_RODATA, KIND_TEXT, KIND_DATA, KIND_BSS, KINDS };

/* Output section headers, in file order. */
enum { OUT_NULL, OUT_HASH, OUT_DYNSYM, OUT_DYNSTR, OUT_RELA, OUT_RODATA, OUT_TEXT, OUT_DATA, OUT_GOT, OUT_DYNAMIC, OUT_BSS,
       OUT_SHSTRTAB, OUTS };
static const char out_names[] = "\0.hash\0.dynsym\0.dynstr\0.rela.dyn\0.rodata\0.text\0.data\0.got\0.dynamic\0.bss\0.shstrtab";
static const uint8_t kind_section[KINDS] = {OUT_RODATA, OUT_TEXT, OUT_DATA, OUT_BSS};

typedef struct Section {
	const unsigned char *data; /* NULL: zeros */
	unsigned char *patched;    /* a copy with the relocations applied, or NULL */
	uint64_t size, align, address;
	uint8_t kind;
} Section;

typedef struct Reloc {
	uint32_t section, object, symbol, type;
	uint64_t offset;
	int64_t addend;
} Reloc;

/* An object's symbol: a global's index, or a local one's place. */
typedef struct Local {
	int64_t global; /* -1: local */
	uint32_t section;
	uint64_t value;
} Local;

typedef struct Global {
	const char *name;
	bool defined, hidden, weak, function;
	uint32_t section;
	uint64_t value, size;
	int64_t got;     /* its GOT slot, or -1 */
	int64_t dynamic; /* its index in .dynsym, or -1 */
	uint64_t stub;   /* an import's stub, its index */
} Global;

struct Linker {
	Section *sections;
	size_t num_sections, cap_sections;
	Reloc *relocs;
	size_t num_relocs, cap_relocs;
	Local **locals; /* per object */
	size_t num_objects, cap_objects;
	Global *globals;
	size_t num_globals, cap_globals;
	uint32_t *table; /* names' hash table: global index + 1, 0 empty */
	size_t table_size;
	char **names;    /* the names link_add_bytes copied */
	size_t num_names, cap_names;
};

Linker *link_new(void) { return xcalloc(1, sizeof(Linker)); }

void link_free(Linker *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->num_sections; i++)
		free(k->sections[i].patched);
	for (size_t i = 0; i < k->num_objects; i++)
		free(k->locals[i]);
	for (size_t i = 0; i < k->num_names; i++)
		free(k->names[i]);
	free(k->sections);
	free(k->relocs);
	free(k->locals);
	free(k->globals);
	free(k->table);
	free(k->names);
	free(k);
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The index of the global `name`, a new undefined one where there is none. */
static size_t global_named(Linker *k, const char *name)
{
	size_t mask, at;
	if (2 * (k->num_globals + 1) > k->table_size) { /* grow, and place every name again */
		k->table_size = k->table_size ? 2 * k->table_size : 256;
		free(k->table);
		k->table = xcalloc(k->table_size, sizeof *k->table);
		for (size_t i = 0; i < k->num_globals; i++) {
			for (at = hash_name(k->globals[i].name) & (k->table_size - 1); k->table[at]; at = (at + 1) & (k->table_size - 1))
				;
			k->table[at] = (uint32_t)i + 1;
		}
	}
	mask = k->table_size - 1;
	for (at = hash_name(name) & mask; k->table[at]; at = (at + 1) & mask)
		if (!strcmp(k->globals[k->table[at] - 1].name, name))
			return k->table[at] - 1;
	GROW(k->globals, k->num_globals + 1, k->cap_globals);
	k->globals[k->num_globals] = (Global){.name = name, .got = -1, .dynamic = -1};
	k->table[at] = (uint32_t)k->num_globals + 1;
	return k->num_globals++;
}

static uint32_t add_section(Linker *k, const unsigned char *data, uint64_t size, uint64_t align, uint8_t kind)
{
	GROW(k->sections, k->num_sections + 1, k->cap_sections);
	k->sections[k->num_sections] = (Section){.data = data, .size = size, .align = align ? align : 1, .kind = kind};
	return (uint32_t)k->num_sections++;
}

/* Define global g at `section` + value; false where it is defined already and neither is weak. */
static bool define(Global *g, uint32_t section, uint64_t value, uint64_t size, bool weak, bool hidden, bool function)
{
	if (g->defined && !(g->weak && !weak))
		return weak || g->weak;
	g->defined = true;
	g->section = section;
	g->value = value;
	g->size = size;
	g->weak = weak;
	g->hidden = hidden;
	g->function = function;
	return true;
}

void link_add_bytes(Linker *k, const char *name, const void *data, uint64_t size, uint64_t align)
{
	uint32_t section = add_section(k, data, size, align, data ? KIND_RODATA : KIND_BSS);
	size_t g;
	GROW(k->names, k->num_names + 1, k->cap_names);
	k->names[k->num_names] = xstrdup(name);
	g = global_named(k, k->names[k->num_names++]); /* (before k->globals is read: it may move) */
	if (!define(&k->globals[g], section, 0, size, false, true, false))
		die("link_add_bytes: %s defined twice", name);
}

/* The kind of section header h (SHF_ALLOC), or KINDS where it holds what this linker refuses (error in e). */
static uint8_t section_kind(const Elf64_Shdr *h, const char *name, const char *what, Error *e)
{
	if (h->sh_flags & SHF_TLS) {
		error_set(e, "%s: section %s is thread-local, which grove's linker does not link", what, name);
		return KINDS;
	}
	if ((h->sh_type != SHT_PROGBITS && h->sh_type != SHT_NOBITS && h->sh_type != SHT_X86_64_UNWIND) ||
	    !strncmp(name, ".ctors", 6) || !strncmp(name, ".dtors", 6)) {
		error_set(e, "%s: section %s of type %u (constructors, or another kind grove's linker does not link)", what, name,
		          h->sh_type);
		return KINDS;
	}
	if (h->sh_flags & SHF_EXECINSTR)
		return KIND_TEXT;
	if (h->sh_type == SHT_NOBITS)
		return KIND_BSS;
	return h->sh_flags & SHF_WRITE ? KIND_DATA : KIND_RODATA;
}

/* Whether a string table of `size` bytes at `table` holds a string at `at`. */
static bool has_string(const char *table, uint64_t size, uint64_t at) { return at < size && memchr(table + at, 0, size - at); }

bool link_add_object(Linker *k, const void *bytes, size_t size, const char *what, Error *e)
{
	const unsigned char *base = bytes;
	Elf64_Ehdr h;
	Elf64_Shdr *headers = NULL, *symtab = NULL;
	uint32_t *placed = NULL; /* per section of the object: its Section + 1, 0 none */
	const char *names = NULL, *strings;
	uint64_t num_symbols;
	Local *locals;
	bool ok = false;

	if (size < sizeof h || (memcpy(&h, base, sizeof h), memcmp(h.e_ident, ELFMAG, SELFMAG)) ||
	    h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB || h.e_type != ET_REL ||
	    h.e_machine != EM_X86_64)
		return error_set(e, "%s: not an x86-64 ELF relocatable object", what);
	if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shoff > size || h.e_shnum > (size - h.e_shoff) / sizeof(Elf64_Shdr) ||
	    h.e_shstrndx >= h.e_shnum)
		return error_set(e, "%s: its section headers lie outside it", what);
	headers = xmalloc((h.e_shnum ? h.e_shnum : 1) * sizeof *headers);
	memcpy(headers, base + h.e_shoff, h.e_shnum * sizeof *headers);
	placed = xcalloc(h.e_shnum ? h.e_shnum : 1, sizeof *placed);
	for (uint32_t i = 0; i < h.e_shnum; i++)
		if (headers[i].sh_type != SHT_NOBITS && (headers[i].sh_offset > size || headers[i].sh_size > size - headers[i].sh_offset)) {
			error_set(e, "%s: section %u lies outside it", what, i);
			goto done;
		}
	names = (const char *)base + headers[h.e_shstrndx].sh_offset;
	for (uint32_t i = 0; i < h.e_shnum; i++) {
		const Elf64_Shdr *s = &headers[i];
		const char *name = has_string(names, headers[h.e_shstrndx].sh_size, s->sh_name) ? names + s->sh_name : "?";
		uint8_t kind;
		if (s->sh_type == SHT_SYMTAB) {
			if (symtab) {
				error_set(e, "%s: two symbol tables", what);
				goto done;
			}
			symtab = &headers[i];
		} else if (s->sh_type == SHT_REL) {
			error_set(e, "%s: section %s holds REL relocations (x86-64 objects have RELA)", what, name);
			goto done;
		}
		if (!(s->sh_flags & SHF_ALLOC) || s->sh_type == SHT_NOTE)
			continue;
		if ((kind = section_kind(s, name, what, e)) == KINDS)
			goto done;
		if (s->sh_addralign > PAGE) {
			error_set(e, "%s: section %s is aligned to more than a page", what, name);
			goto done;
		}
		placed[i] = add_section(k, s->sh_type == SHT_NOBITS ? NULL : base + s->sh_offset, s->sh_size, s->sh_addralign, kind) + 1;
	}
	if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_link >= h.e_shnum) {
		error_set(e, "%s: no symbol table of ELF64 symbols", what);
		goto done;
	}
	strings = (const char *)base + headers[symtab->sh_link].sh_offset;
	num_symbols = symtab->sh_size / sizeof(Elf64_Sym);
	locals = xcalloc(num_symbols ? num_symbols : 1, sizeof *locals);
	GROW(k->locals, k->num_objects + 1, k->cap_objects);
	k->locals[k->num_objects++] = locals;
	for (uint64_t j = 0; j < num_symbols; j++) {
		Elf64_Sym s;
		uint8_t bind, type;
		const char *name;
		memcpy(&s, base + symtab->sh_offset + j * sizeof s, sizeof s);
		bind = ELF64_ST_BIND(s.st_info);
		type = ELF64_ST_TYPE(s.st_info);
		name = has_string(strings, headers[symtab->sh_link].sh_size, s.st_name) ? strings + s.st_name : NULL;
		locals[j] = (Local){.global = -1, .section = ABSOLUTE, .value = s.st_value};
		if (s.st_shndx == SHN_COMMON || s.st_shndx == SHN_XINDEX) {
			error_set(e, "%s: symbol %s is a %s symbol, which grove's linker does not link", what, name ? name : "?",
			          s.st_shndx == SHN_COMMON ? "common" : "extended-index");
			goto done;
		}
		if (s.st_shndx != SHN_UNDEF && s.st_shndx != SHN_ABS) {
			if (s.st_shndx >= h.e_shnum || !placed[s.st_shndx]) {
				if (bind == STB_LOCAL) { /* (of a section not linked: a relocation naming it is an error) */
					locals[j].section = UNLINKED;
					continue;
				}
				error_set(e, "%s: symbol %s lies in a section grove's linker does not link", what, name ? name : "?");
				goto done;
			}
			locals[j].section = placed[s.st_shndx] - 1;
		}
		if (bind == STB_LOCAL || (j == 0))
			continue;
		if (!name || !*name) {
			error_set(e, "%s: global symbol %llu has no name", what, (unsigned long long)j);
			goto done;
		}
		locals[j].global = (int64_t)global_named(k, name);
		if (s.st_shndx != SHN_UNDEF &&
		    !define(&k->globals[locals[j].global], locals[j].section, s.st_value, s.st_size, bind == STB_WEAK,
		            ELF64_ST_VISIBILITY(s.st_other) != STV_DEFAULT, type == STT_FUNC)) {
			error_set(e, "%s: symbol %s is defined twice", what, name);
			goto done;
		}
		k->globals[locals[j].global].weak |= s.st_shndx == SHN_UNDEF && bind == STB_WEAK && !k->globals[locals[j].global].defined;
	}
	for (uint32_t i = 0; i < h.e_shnum; i++) {
		const Elf64_Shdr *s = &headers[i];
		if (s->sh_type != SHT_RELA || s->sh_info >= h.e_shnum || !placed[s->sh_info])
			continue;
		if (s->sh_entsize != sizeof(Elf64_Rela) || s->sh_link >= h.e_shnum || &headers[s->sh_link] != symtab) {
			error_set(e, "%s: relocation section %u is not of ELF64 RELA entries on the symbol table", what, i);
			goto done;
		}
		for (uint64_t r = 0; r < s->sh_size / sizeof(Elf64_Rela); r++) {
			Elf64_Rela rela;
			memcpy(&rela, base + s->sh_offset + r * sizeof rela, sizeof rela);
			if (ELF64_R_SYM(rela.r_info) >= num_symbols || rela.r_offset >= headers[s->sh_info].sh_size) {
				error_set(e, "%s: relocation %llu of section %u names no symbol or lies outside its section", what,
				          (unsigned long long)r, s->sh_info);
				goto done;
			}
			GROW(k->relocs, k->num_relocs + 1, k->cap_relocs);
			k->relocs[k->num_relocs++] = (Reloc){.section = placed[s->sh_info] - 1, .object = (uint32_t)k->num_objects - 1,
			                                     .symbol = (uint32_t)ELF64_R_SYM(rela.r_info),
			                                     .type = (uint32_t)ELF64_R_TYPE(rela.r_info), .offset = rela.r_offset,
			                                     .addend = rela.r_addend};
		}
	}
	ok = true;
done:
	free(headers);
	free(placed);
	return ok;
}

size_t link_imports(const Linker *k, const char *prefix)
{
	size_t n = 0;
	for (size_t i = 0; i < k->num_globals; i++)
		n += !k->globals[i].defined && !strncmp(k->globals[i].name, prefix, strlen(prefix));
	return n;
}

/* What link_write builds: the dynamic tables and where everything lies. */
typedef struct Image {
	Elf64_Sym *dynsym;
	size_t num_dynsym;
	char *dynstr;
	size_t dynstr_size, dynstr_cap;
	uint32_t *hash;
	size_t hash_words;
	Elf64_Rela *rela;
	size_t num_rela, cap_rela, num_relative;
	uint64_t *got;
	size_t num_got;
	unsigned char *stubs;
	size_t num_stubs;
	Elf64_Dyn dynamic[24];
	size_t num_dynamic;
	uint64_t at[OUTS], size[OUTS]; /* each output section's address and size */
	uint64_t file_end, memory_end, headers_at;
} Image;

static uint32_t add_string(Image *m, const char *s)
{
	size_t len = strlen(s) + 1;
	uint32_t at = (uint32_t)m->dynstr_size;
	GROW(m->dynstr, m->dynstr_size + len, m->dynstr_cap);
	memcpy(m->dynstr + at, s, len);
	m->dynstr_size += len;
	return at;
}

static void add_dynamic_reloc(Image *m, uint64_t offset, uint32_t symbol, uint32_t type, int64_t addend)
{
	GROW(m->rela, m->num_rela + 1, m->cap_rela);
	m->rela[m->num_rela++] = (Elf64_Rela){.r_offset = offset, .r_info = ELF64_R_INFO(symbol, type), .r_addend = addend};
}

/* The System V hash of a symbol's name (.hash). */
static uint32_t elf_hash(const char *name)
{
	uint32_t h = 0, g;
	for (; *name; name++) {
		h = (h << 4) + (unsigned char)*name;
		g = h & 0xf0000000u;
		h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static bool is_got_reloc(uint32_t type)
{
	return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX;
}

/* The dynamic symbols (imports, then exports), their names, the hash table, GOT slots and stubs. */
static bool build_tables(Linker *k, Image *m, const char *const *needed, Error *e)
{
	size_t buckets;
	for (size_t i = 0; i < k->num_relocs; i++) { /* GOT slots of the symbols read through it */
		const Local *s = &k->locals[k->relocs[i].object][k->relocs[i].symbol];
		if (!is_got_reloc(k->relocs[i].type))
			continue;
		if (s->global < 0)
			return error_set(e, "a GOT relocation names a local symbol, which grove's linker does not link");
		if (k->globals[s->global].got < 0)
			k->globals[s->global].got = (int64_t)m->num_got++;
	}
	m->num_dynsym = 1;
	add_string(m, "");
	for (const char *const *n = needed; *n; n++)
		add_string(m, *n);
	for (int pass = 0; pass < 2; pass++) /* imports, then exports */
		for (size_t i = 0; i < k->num_globals; i++) {
			Global *g = &k->globals[i];
			if (pass == 0 && !g->defined) {
				if (g->got < 0)
					g->got = (int64_t)m->num_got++;
				g->stub = m->num_stubs++;
				g->dynamic = (int64_t)m->num_dynsym++;
			} else if (pass == 1 && g->defined && !g->hidden) {
				g->dynamic = (int64_t)m->num_dynsym++;
			}
		}
	m->dynsym = xcalloc(m->num_dynsym, sizeof *m->dynsym);
	buckets = m->num_dynsym / 2 + 1;
	m->hash_words = 2 + buckets + m->num_dynsym;
	m->hash = xcalloc(m->hash_words, sizeof *m->hash);
	m->hash[0] = (uint32_t)buckets;
	m->hash[1] = (uint32_t)m->num_dynsym;
	for (size_t i = 0; i < k->num_globals; i++) {
		Global *g = &k->globals[i];
		uint32_t b;
		if (g->dynamic < 0)
			continue;
		m->dynsym[g->dynamic].st_name = add_string(m, g->name);
		b = elf_hash(g->name) % (uint32_t)buckets; /* chain it in front of its bucket's */
		m->hash[2 + buckets + g->dynamic] = m->hash[2 + b];
		m->hash[2 + b] = (uint32_t)g->dynamic;
	}
	m->got = xcalloc(m->num_got ? m->num_got : 1, sizeof *m->got);
	m->stubs = xcalloc(m->num_stubs ? m->num_stubs : 1, STUB);
	return true;
}

/* Addresses: the sections of segment R, then RX, then RW; the zeros last. */
static void lay_out(Linker *k, Image *m, size_t headers)
{
	uint64_t at = headers;
	m->at[OUT_HASH] = at = align_up(at, 8);
	m->size[OUT_HASH] = m->hash_words * sizeof *m->hash;
	m->at[OUT_DYNSYM] = at = align_up(at + m->size[OUT_HASH], 8);
	m->size[OUT_DYNSYM] = m->num_dynsym * sizeof(Elf64_Sym);
	m->at[OUT_DYNSTR] = at += m->size[OUT_DYNSYM];
	m->size[OUT_DYNSTR] = m->dynstr_size;
	m->at[OUT_RELA] = at = align_up(at + m->dynstr_size, 8);
	at += m->size[OUT_RELA]; /* (its size is known: link_write counts the relocations first) */
	for (int kind = 0; kind < KINDS; kind++) {
		uint8_t out = kind_section[kind];
		if (kind == KIND_TEXT || kind == KIND_DATA)
			at = align_up(at, PAGE);
		m->at[out] = at;
		for (size_t i = 0; i < k->num_sections; i++)
			if (k->sections[i].kind == kind)
				k->sections[i].address = at = align_up(at, k->sections[i].align), at += k->sections[i].size;
		if (kind == KIND_TEXT) { /* the stubs */
			at = align_up(at, STUB);
			at += m->num_stubs * STUB;
		}
		if (kind == KIND_DATA) {
			m->at[OUT_GOT] = at = align_up(at, 8);
			m->size[OUT_GOT] = m->num_got * 8;
			m->at[OUT_DYNAMIC] = at = align_up(at + m->size[OUT_GOT], 8);
			at += m->size[OUT_DYNAMIC];
			m->file_end = at;
		}
		m->size[out] = at - m->at[out];
	}
	m->size[OUT_DATA] = m->at[OUT_GOT] - m->at[OUT_DATA];
	m->memory_end = at;
}

static void put32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void put64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }

/* Apply every relocation (Image m laid out), gathering the dynamic ones. */
static bool relocate(Linker *k, Image *m, Error *e)
{
	uint64_t stubs_at = align_up(m->at[OUT_TEXT] + m->size[OUT_TEXT] - m->num_stubs * STUB, STUB);
	for (size_t i = 0; i < k->num_relocs; i++) {
		const Reloc *r = &k->relocs[i];
		Section *s = &k->sections[r->section];
		const Local *l = &k->locals[r->object][r->symbol];
		const Global *g = l->global >= 0 ? &k->globals[l->global] : NULL;
		uint64_t p = s->address + r->offset, target;
		int64_t value;
		unsigned width = r->type == R_X86_64_64 || r->type == R_X86_64_PC64 ? 8 : 4;
		if (!s->data)
			return error_set(e, "a relocation in a section of zeros");
		if (r->offset + width > s->size)
			return error_set(e, "a relocation past the end of its section");
		if (!s->patched) {
			s->patched = xmalloc(s->size);
			memcpy(s->patched, s->data, s->size);
		}
		if (g && !g->defined)
			target = stubs_at + g->stub * STUB;
		else if ((g ? g->section : l->section) == ABSOLUTE)
			return error_set(e, "a relocation names an absolute symbol, which grove's linker does not link");
		else if (g)
			target = k->sections[g->section].address + g->value;
		else if (l->section == UNLINKED)
			return error_set(e, "a relocation names a symbol of a section grove's linker does not link");
		else
			target = k->sections[l->section].address + l->value;
		switch (r->type) {
		case R_X86_64_NONE:
			continue;
		case R_X86_64_64:
			if (s->kind != KIND_DATA)
				return error_set(e, "an absolute address in read-only %s (a text relocation)", s->kind == KIND_TEXT ? "code" : "data");
			if (g && !g->defined) {
				add_dynamic_reloc(m, p, (uint32_t)g->dynamic, R_X86_64_64, r->addend);
				put64(s->patched + r->offset, 0);
			} else {
				add_dynamic_reloc(m, p, 0, R_X86_64_RELATIVE, (int64_t)(target + (uint64_t)r->addend));
				put64(s->patched + r->offset, target + (uint64_t)r->addend);
			}
			continue;
		case R_X86_64_PC64:
			put64(s->patched + r->offset, target + (uint64_t)r->addend - p);
			continue;
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
			value = (int64_t)(target + (uint64_t)r->addend - p);
			break;
		case R_X86_64_GOTPCREL:
		case R_X86_64_GOTPCRELX:
		case R_X86_64_REX_GOTPCRELX:
			value = (int64_t)(m->at[OUT_GOT] + 8 * (uint64_t)g->got + (uint64_t)r->addend - p);
			break;
		default:
			return error_set(e, "relocation of type %u (not position-independent, or one grove's linker does not link)",
			                 r->type);
		}
		if (value < INT32_MIN || value > INT32_MAX)
			return error_set(e, "a 32-bit relocation out of range (a library over 2 GB)");
		put32(s->patched + r->offset, (uint32_t)value);
	}
	for (size_t i = 0; i < k->num_globals; i++) { /* GOT slots: the loader's for imports, relative for the others */
		const Global *g = &k->globals[i];
		uint64_t slot = m->at[OUT_GOT] + 8 * (uint64_t)g->got;
		if (g->got < 0)
			continue;
		if (!g->defined) {
			add_dynamic_reloc(m, slot, (uint32_t)g->dynamic, R_X86_64_GLOB_DAT, 0);
			continue;
		}
		m->got[g->got] = k->sections[g->section].address + g->value; /* (not absolute: relocations refuse those) */
		add_dynamic_reloc(m, slot, 0, R_X86_64_RELATIVE, (int64_t)m->got[g->got]);
	}
	for (size_t i = 0; i < k->num_globals; i++) { /* stubs: jmp *slot(%rip) */
		const Global *g = &k->globals[i];
		unsigned char *stub;
		if (g->defined)
			continue;
		stub = m->stubs + g->stub * STUB;
		memset(stub, 0xcc, STUB);
		stub[0] = 0xff;
		stub[1] = 0x25;
		put32(stub + 2, (uint32_t)(m->at[OUT_GOT] + 8 * (uint64_t)g->got - (stubs_at + g->stub * STUB + 6)));
	}
	return true;
}

/* Relative relocations first (DT_RELACOUNT), in address order. */
static int compare_rela(const void *a, const void *b)
{
	const Elf64_Rela *x = a, *y = b;
	bool rx = ELF64_R_TYPE(x->r_info) == R_X86_64_RELATIVE, ry = ELF64_R_TYPE(y->r_info) == R_X86_64_RELATIVE;
	if (rx != ry)
		return rx ? -1 : 1;
	return x->r_offset < y->r_offset ? -1 : x->r_offset > y->r_offset;
}

/* The number of dynamic relocations relocate will add. */
static size_t count_dynamic_relocs(const Linker *k, const Image *m)
{
	size_t n = m->num_got;
	for (size_t i = 0; i < k->num_relocs; i++)
		n += k->relocs[i].type == R_X86_64_64;
	return n;
}

/* The dynamic symbols' bindings, types and places (Image m laid out). */
static void fill_dynamic_symbols(const Linker *k, Image *m)
{
	for (size_t i = 0; i < k->num_globals; i++) {
		const Global *g = &k->globals[i];
		Elf64_Sym *d = g->dynamic >= 0 ? &m->dynsym[g->dynamic] : NULL;
		if (!d)
			continue;
		if (!g->defined) {
			d->st_info = ELF64_ST_INFO(g->weak ? STB_WEAK : STB_GLOBAL, STT_NOTYPE);
			continue;
		}
		d->st_info = ELF64_ST_INFO(g->weak ? STB_WEAK : STB_GLOBAL, g->function ? STT_FUNC : STT_OBJECT);
		d->st_shndx = g->section == ABSOLUTE ? SHN_ABS : kind_section[k->sections[g->section].kind];
		d->st_value = g->section == ABSOLUTE ? g->value : k->sections[g->section].address + g->value;
		d->st_size = g->size;
	}
}

static void add_dynamic(Image *m, int64_t tag, uint64_t value)
{
	m->dynamic[m->num_dynamic++] = (Elf64_Dyn){.d_tag = tag, .d_un.d_val = value};
}

/* Write the bytes at offset of the file, zeros before them from *at. */
static bool put_at(FILE *f, uint64_t *at, uint64_t offset, const void *bytes, uint64_t size)
{
	static const unsigned char zeros[PAGE];
	while (*at < offset) {
		size_t n = offset - *at < PAGE ? (size_t)(offset - *at) : PAGE;
		if (fwrite(zeros, 1, n, f) != n)
			return false;
		*at += n;
	}
	if (size && fwrite(bytes, 1, size, f) != size)
		return false;
	*at += size;
	return true;
}

static bool write_image(const Linker *k, const Image *m, const char *path, Error *e)
{
	enum { PHDRS = 5 };
	Elf64_Ehdr h = {.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE},
	                .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT, .e_phoff = sizeof h,
	                .e_shoff = m->headers_at, .e_ehsize = sizeof h, .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = PHDRS,
	                .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = OUTS, .e_shstrndx = OUT_SHSTRTAB};
	uint64_t text_end = m->at[OUT_TEXT] + m->size[OUT_TEXT];
	Elf64_Phdr ph[PHDRS] = {
		{.p_type = PT_LOAD, .p_flags = PF_R, .p_filesz = m->at[OUT_RODATA] + m->size[OUT_RODATA],
		 .p_memsz = m->at[OUT_RODATA] + m->size[OUT_RODATA], .p_align = PAGE},
		{.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = m->at[OUT_TEXT], .p_vaddr = m->at[OUT_TEXT],
		 .p_paddr = m->at[OUT_TEXT], .p_filesz = m->size[OUT_TEXT], .p_memsz = m->size[OUT_TEXT], .p_align = PAGE},
		{.p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = m->at[OUT_DATA], .p_vaddr = m->at[OUT_DATA],
		 .p_paddr = m->at[OUT_DATA], .p_filesz = m->file_end - m->at[OUT_DATA], .p_memsz = m->memory_end - m->at[OUT_DATA],
		 .p_align = PAGE},
		{.p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W, .p_offset = m->at[OUT_DYNAMIC], .p_vaddr = m->at[OUT_DYNAMIC],
		 .p_paddr = m->at[OUT_DYNAMIC], .p_filesz = m->size[OUT_DYNAMIC], .p_memsz = m->size[OUT_DYNAMIC], .p_align = 8},
		{.p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W, .p_align = 16},
	};
	Elf64_Shdr sh[OUTS] = {{0}};
	static const uint32_t types[OUTS] = {SHT_NULL, SHT_HASH, SHT_DYNSYM, SHT_STRTAB, SHT_RELA, SHT_PROGBITS, SHT_PROGBITS,
	                                     SHT_PROGBITS, SHT_PROGBITS, SHT_DYNAMIC, SHT_NOBITS, SHT_STRTAB};
	static const uint64_t flags[OUTS] = {0, SHF_ALLOC, SHF_ALLOC, SHF_ALLOC, SHF_ALLOC, SHF_ALLOC, SHF_ALLOC | SHF_EXECINSTR,
	                                     SHF_ALLOC | SHF_WRITE, SHF_ALLOC | SHF_WRITE, SHF_ALLOC | SHF_WRITE,
	                                     SHF_ALLOC | SHF_WRITE, 0};
	uint64_t at = 0, stubs_at = align_up(text_end - m->num_stubs * STUB, STUB);
	FILE *f = fopen(path, "wb");
	bool ok = f != NULL;
	for (uint32_t i = 1, name = 1; i < OUTS; i++, name += (uint32_t)strlen(out_names + name) + 1) {
		sh[i] = (Elf64_Shdr){.sh_name = name, .sh_type = types[i], .sh_flags = flags[i], .sh_addr = m->at[i],
		                     .sh_offset = m->at[i], .sh_size = m->size[i], .sh_addralign = i == OUT_TEXT ? 16 : 8};
	}
	sh[OUT_DYNSYM].sh_link = OUT_DYNSTR;
	sh[OUT_RELA].sh_link = OUT_DYNSYM;
	sh[OUT_HASH].sh_link = OUT_DYNSYM;
	sh[OUT_DYNSYM].sh_info = 1;
	sh[OUT_DYNAMIC].sh_link = OUT_DYNSTR;
	sh[OUT_DYNSYM].sh_entsize = sizeof(Elf64_Sym);
	sh[OUT_RELA].sh_entsize = sizeof(Elf64_Rela);
	sh[OUT_DYNAMIC].sh_entsize = sizeof(Elf64_Dyn);
	sh[OUT_HASH].sh_entsize = 4;
	sh[OUT_BSS].sh_offset = m->file_end;
	sh[OUT_SHSTRTAB].sh_addr = 0;
	sh[OUT_SHSTRTAB].sh_offset = m->file_end;
	sh[OUT_SHSTRTAB].sh_size = sizeof out_names;
	sh[OUT_SHSTRTAB].sh_addralign = 1;
	ok = ok && put_at(f, &at, 0, &h, sizeof h) && put_at(f, &at, sizeof h, ph, sizeof ph) &&
	     put_at(f, &at, m->at[OUT_HASH], m->hash, m->size[OUT_HASH]) &&
	     put_at(f, &at, m->at[OUT_DYNSYM], m->dynsym, m->size[OUT_DYNSYM]) &&
	     put_at(f, &at, m->at[OUT_DYNSTR], m->dynstr, m->size[OUT_DYNSTR]) &&
	     put_at(f, &at, m->at[OUT_RELA], m->rela, m->num_rela * sizeof *m->rela);
	for (int kind = 0; ok && kind < KIND_BSS; kind++) {
		for (size_t i = 0; ok && i < k->num_sections; i++) {
			const Section *s = &k->sections[i];
			if (s->kind == kind)
				ok = put_at(f, &at, s->address, s->patched ? s->patched : s->data, s->size);
		}
		if (ok && kind == KIND_TEXT)
			ok = put_at(f, &at, stubs_at, m->stubs, m->num_stubs * STUB);
	}
	ok = ok && put_at(f, &at, m->at[OUT_GOT], m->got, m->size[OUT_GOT]) &&
	     put_at(f, &at, m->at[OUT_DYNAMIC], m->dynamic, m->size[OUT_DYNAMIC]) &&
	     put_at(f, &at, m->file_end, out_names, sizeof out_names) && put_at(f, &at, m->headers_at, sh, sizeof sh);
	if (f && fclose(f) != 0)
		ok = false;
	return ok || error_set(e, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
}

bool link_write(Linker *k, const char *const *needed, const char *path, Error *e)
{
	Image m;
	bool ok;
	memset(&m, 0, sizeof m);
	for (const char *const *n = needed; *n; n++)
		if (n - needed >= (ptrdiff_t)(COUNT_OF(m.dynamic) - 12))
			die("link_write: too many libraries needed");
	ok = build_tables(k, &m, needed, e);
	if (ok) {
		uint32_t name = 1; /* after the empty string: the needed libraries' names, in order */
		for (const char *const *n = needed; *n; n++) {
			add_dynamic(&m, DT_NEEDED, name);
			name += (uint32_t)strlen(*n) + 1;
		}
		m.size[OUT_RELA] = count_dynamic_relocs(k, &m) * sizeof(Elf64_Rela);
		m.size[OUT_DYNAMIC] = 12 * sizeof(Elf64_Dyn) + m.num_dynamic * sizeof(Elf64_Dyn); /* (the entries below) */
		lay_out(k, &m, sizeof(Elf64_Ehdr) + 5 * sizeof(Elf64_Phdr));
		fill_dynamic_symbols(k, &m);
		ok = relocate(k, &m, e);
	}
	if (ok) {
		qsort(m.rela, m.num_rela, sizeof *m.rela, compare_rela);
		while (m.num_relative < m.num_rela && ELF64_R_TYPE(m.rela[m.num_relative].r_info) == R_X86_64_RELATIVE)
			m.num_relative++;
		add_dynamic(&m, DT_HASH, m.at[OUT_HASH]);
		add_dynamic(&m, DT_STRTAB, m.at[OUT_DYNSTR]);
		add_dynamic(&m, DT_SYMTAB, m.at[OUT_DYNSYM]);
		add_dynamic(&m, DT_STRSZ, m.dynstr_size);
		add_dynamic(&m, DT_SYMENT, sizeof(Elf64_Sym));
		add_dynamic(&m, DT_RELA, m.at[OUT_RELA]);
		add_dynamic(&m, DT_RELASZ, m.num_rela * sizeof(Elf64_Rela));
		add_dynamic(&m, DT_RELAENT, sizeof(Elf64_Rela));
		add_dynamic(&m, DT_RELACOUNT, m.num_relative);
		add_dynamic(&m, DT_FLAGS, DF_BIND_NOW);
		add_dynamic(&m, DT_FLAGS_1, DF_1_NOW);
		add_dynamic(&m, DT_NULL, 0);
		m.headers_at = align_up(m.file_end + sizeof out_names, 8);
		ok = write_image(k, &m, path, e);
	}
	free(m.dynsym);
	free(m.dynstr);
	free(m.hash);
	free(m.rela);
	free(m.got);
	free(m.stubs);
	return ok;
}
