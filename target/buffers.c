/*
 * A shared library's model buffers as an ELF object of their own (target/emit.h:
 * target_write_buffers), written here rather than by LLVM. LLVM copies a constant's
 * bytes into a ConstantDataArray, then into the assembler's fragments: a 64 MB forest
 * (scikit-learn's ExtraTreesRegressor grown to purity) held about 4 copies at once and
 * was slow to write (measured: docs/performance-notes.md, Buffers written apart). Here
 * the bytes go from the LIR buffers to the file.
 *
 * The object holds one section of the buffers' bytes (.rodata.grove, each buffer at a
 * 64-byte boundary), one of the buffers no code reads (.bss.grove: they keep their names
 * and sizes, not their bytes), and a hidden global symbol for each (target_buffer_symbol),
 * which the code module declares (target_build_module with buffers apart).
 */
#include "target/emit.h"
#include "target/link.h"
#include "target/llvm.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_ALIGN 64

enum { SEC_NULL, SEC_RODATA, SEC_BSS, SEC_NOTE, SEC_SYMTAB, SEC_STRTAB, SEC_SHSTRTAB, SEC_COUNT };

static const char section_names[] = "\0.rodata.grove\0.bss.grove\0.note.GNU-stack\0.symtab\0.strtab\0.shstrtab";

/* The offset of name in section_names. */
static uint32_t section_name(const char *name)
{
	for (uint32_t at = 1; at < sizeof section_names; at += (uint32_t)strlen(section_names + at) + 1)
		if (!strcmp(section_names + at, name))
			return at;
	die("no section name %s", name);
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

void target_buffer_symbol(const LModule *m, const char *prefix, uint32_t k, char *out, size_t size)
{
	uint32_t same = 0;
	for (uint32_t i = 0; i < k; i++)
		same += !strcmp(m->buffers[i].name, m->buffers[k].name);
	if (same)
		snprintf(out, size, "%s.%s.%u", prefix, m->buffers[k].name, k);
	else
		snprintf(out, size, "%s.%s", prefix, m->buffers[k].name);
}

bool target_write_buffers(const LModule *m, const char *prefix, bool aarch64, const char *path, Error *e)
{
	bool *read = lir_buffers_read(m);
	Elf64_Sym *symbols = xcalloc((size_t)m->num_buffers + 1, sizeof *symbols);
	char *strings = NULL;
	size_t strings_size = 1, strings_cap = 0;
	uint64_t offset[2] = {0, 0}, rodata_at = align_up(sizeof(Elf64_Ehdr), BUFFER_ALIGN), symtab_at, strtab_at, shstrtab_at,
	         headers_at;
	Elf64_Shdr sections[SEC_COUNT];
	Elf64_Ehdr header;
	static const char zeros[BUFFER_ALIGN];
	FILE *f;
	bool ok;

	strings = xmalloc(strings_cap = 256);
	strings[0] = 0;
	for (uint32_t i = 0; i < m->num_buffers; i++) {
		const LBuffer *b = &m->buffers[i];
		uint64_t bytes = b->count * lir_type_size(b->elem);
		int in_bss = !read[i] || !b->data;
		char name[TARGET_SYMBOL_MAX];
		size_t len;
		target_buffer_symbol(m, prefix, i, name, sizeof name);
		len = strlen(name) + 1;
		while (strings_size + len > strings_cap)
			strings = xrealloc(strings, strings_cap *= 2);
		offset[in_bss] = align_up(offset[in_bss], BUFFER_ALIGN);
		symbols[i + 1] = (Elf64_Sym){.st_name = (uint32_t)strings_size, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT),
		                             .st_other = STV_HIDDEN, .st_shndx = in_bss ? SEC_BSS : SEC_RODATA,
		                             .st_value = offset[in_bss], .st_size = bytes};
		memcpy(strings + strings_size, name, len);
		strings_size += len;
		offset[in_bss] += bytes;
	}
	symtab_at = align_up(rodata_at + offset[0], 8);
	strtab_at = symtab_at + ((uint64_t)m->num_buffers + 1) * sizeof(Elf64_Sym);
	shstrtab_at = strtab_at + strings_size;
	headers_at = align_up(shstrtab_at + sizeof section_names, 8);

	memset(sections, 0, sizeof sections);
	sections[SEC_RODATA] = (Elf64_Shdr){.sh_name = section_name(".rodata.grove"), .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
	                                    .sh_offset = rodata_at, .sh_size = offset[0], .sh_addralign = BUFFER_ALIGN};
	sections[SEC_BSS] = (Elf64_Shdr){.sh_name = section_name(".bss.grove"), .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_WRITE,
	                                 .sh_offset = rodata_at + offset[0], .sh_size = offset[1], .sh_addralign = BUFFER_ALIGN};
	/* (without it, linkers take the object to need an executable stack) */
	sections[SEC_NOTE] = (Elf64_Shdr){.sh_name = section_name(".note.GNU-stack"), .sh_type = SHT_PROGBITS,
	                                  .sh_offset = symtab_at, .sh_addralign = 1};
	sections[SEC_SYMTAB] = (Elf64_Shdr){.sh_name = section_name(".symtab"), .sh_type = SHT_SYMTAB, .sh_offset = symtab_at,
	                                    .sh_size = ((uint64_t)m->num_buffers + 1) * sizeof(Elf64_Sym), .sh_link = SEC_STRTAB,
	                                    .sh_info = 1, .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym)};
	sections[SEC_STRTAB] = (Elf64_Shdr){.sh_name = section_name(".strtab"), .sh_type = SHT_STRTAB, .sh_offset = strtab_at,
	                                    .sh_size = strings_size, .sh_addralign = 1};
	sections[SEC_SHSTRTAB] = (Elf64_Shdr){.sh_name = section_name(".shstrtab"), .sh_type = SHT_STRTAB,
	                                      .sh_offset = shstrtab_at, .sh_size = sizeof section_names, .sh_addralign = 1};
	header = (Elf64_Ehdr){.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE},
	                      .e_type = ET_REL, .e_machine = aarch64 ? EM_AARCH64 : EM_X86_64, .e_version = EV_CURRENT,
	                      .e_shoff = headers_at, .e_ehsize = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr),
	                      .e_shnum = SEC_COUNT, .e_shstrndx = SEC_SHSTRTAB};

	/* Written in file order: the header, the bytes, the symbols and names, the section headers. */
	ok = (f = fopen(path, "wb")) != NULL && fwrite(&header, sizeof header, 1, f) == 1 &&
	     fwrite(zeros, 1, rodata_at - sizeof header, f) == rodata_at - sizeof header;
	for (uint64_t at = 0, i = 0; ok && i < m->num_buffers; i++) {
		const LBuffer *b = &m->buffers[i];
		if (symbols[i + 1].st_shndx != SEC_RODATA)
			continue;
		ok = fwrite(zeros, 1, symbols[i + 1].st_value - at, f) == symbols[i + 1].st_value - at &&
		     fwrite(b->data, 1, symbols[i + 1].st_size, f) == symbols[i + 1].st_size;
		at = symbols[i + 1].st_value + symbols[i + 1].st_size;
	}
	ok = ok && fwrite(zeros, 1, symtab_at - rodata_at - offset[0], f) == symtab_at - rodata_at - offset[0] &&
	     fwrite(symbols, sizeof *symbols, (size_t)m->num_buffers + 1, f) == (size_t)m->num_buffers + 1 &&
	     fwrite(strings, 1, strings_size, f) == strings_size &&
	     fwrite(section_names, 1, sizeof section_names, f) == sizeof section_names &&
	     fwrite(zeros, 1, headers_at - shstrtab_at - sizeof section_names, f) == headers_at - shstrtab_at - sizeof section_names &&
	     fwrite(sections, sizeof sections, 1, f) == 1;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		error_set(e, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
	free(read);
	free(symbols);
	free(strings);
	return ok;
}

void target_link_buffers(Linker *k, const LModule *m, const char *prefix)
{
	bool *read = lir_buffers_read(m);
	for (uint32_t i = 0; i < m->num_buffers; i++) {
		const LBuffer *b = &m->buffers[i];
		char name[TARGET_SYMBOL_MAX];
		target_buffer_symbol(m, prefix, i, name, sizeof name);
		link_add_bytes(k, name, read[i] ? b->data : NULL, b->count * lir_type_size(b->elem), BUFFER_ALIGN);
	}
	free(read);
}
