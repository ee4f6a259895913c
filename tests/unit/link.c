/*
 * grove's linker (target/link.h): objects LLVM compiles from small modules, linked with
 * raw sections into a library that dlopen loads and runs, each kind of reference
 * exercised (calls across objects, an import called through its stub, a table of
 * absolute addresses, read-only bytes and zeros, exported and hidden symbols); and what
 * it refuses, each with its message.
 */
#include "target/link.h"
#include "target/machine.h"

#include <dlfcn.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/TargetMachine.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

/* The object LLVM makes of `ir` for this host (malloc'd, *size bytes), position-independent unless `static_code`. */
static char *object_of(const char *ir, bool static_code, size_t *size)
{
	TargetPlatform p;
	Error e;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMMemoryBufferRef text = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "test");
	LLVMModuleRef mod;
	LLVMTargetMachineRef tm;
	LLVMMemoryBufferRef code;
	char *message = NULL, *bytes;
	if (!target_platform(NULL, &p, &e) || LLVMParseIRInContext(ctx, text, &mod, &message)) {
		fprintf(stderr, "cannot parse the test's IR: %s\n", message ? message : e.message);
		exit(1);
	}
	if (static_code) {
		char *triple = LLVMGetDefaultTargetTriple();
		LLVMTargetRef target;
		LLVMGetTargetFromTriple(triple, &target, &message);
		tm = LLVMCreateTargetMachine(target, triple, "x86-64", "", LLVMCodeGenLevelDefault, LLVMRelocStatic, LLVMCodeModelDefault);
		LLVMDisposeMessage(triple);
	} else {
		tm = target_machine_create(&p, "x86-64", 2, &e);
	}
	if (!tm || LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &message, &code)) {
		fprintf(stderr, "cannot compile the test's IR: %s\n", message ? message : e.message);
		exit(1);
	}
	*size = LLVMGetBufferSize(code);
	bytes = malloc(*size);
	memcpy(bytes, LLVMGetBufferStart(code), *size);
	LLVMDisposeMemoryBuffer(code);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeModule(mod);
	LLVMContextDispose(ctx);
	return bytes;
}

static const char main_ir[] =
	"@table = global [2 x ptr] [ptr @add_one, ptr @twice]\n"
	"@answer = constant i32 42\n"
	"@bytes = external hidden global [4 x i32]\n"
	"@zeros = external hidden global [4 x i32]\n"
	"declare i64 @strlen(ptr)\n"
	"declare hidden i32 @tenfold(i32)\n"
	"define i32 @add_one(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n"
	"define i32 @twice(i32 %x) {\n  %y = mul i32 %x, 2\n  ret i32 %y\n}\n"
	/* table[i](x) + strlen(s) + tenfold(x) + bytes[j] + zeros[j] */
	"define i64 @combine(i64 %i, i32 %x, ptr %s, i64 %j) {\n"
	"  %slot = getelementptr [2 x ptr], ptr @table, i64 0, i64 %i\n"
	"  %f = load ptr, ptr %slot\n"
	"  %a = call i32 %f(i32 %x)\n"
	"  %n = call i64 @strlen(ptr %s)\n"
	"  %t = call i32 @tenfold(i32 %x)\n"
	"  %bp = getelementptr [4 x i32], ptr @bytes, i64 0, i64 %j\n"
	"  %b = load i32, ptr %bp\n"
	"  %zp = getelementptr [4 x i32], ptr @zeros, i64 0, i64 %j\n"
	"  %z = load i32, ptr %zp\n"
	"  %s1 = add i32 %a, %t\n  %s2 = add i32 %s1, %b\n  %s3 = add i32 %s2, %z\n"
	"  %w = sext i32 %s3 to i64\n  %r = add i64 %w, %n\n  ret i64 %r\n}\n";

static const char other_ir[] = "define hidden i32 @tenfold(i32 %x) {\n  %y = mul i32 %x, 10\n  ret i32 %y\n}\n";

/* Link the objects (and the two raw sections) into path; the error's message in e. */
static bool link_into(const char *path, char **objects, const size_t *sizes, int n, Error *e)
{
	static const int32_t bytes[4] = {100, 200, 300, 400};
	static const char *const needed[] = {"libc.so.6", NULL};
	Linker *k = link_new();
	bool ok = true;
	memset(e, 0, sizeof *e);
	for (int i = 0; ok && i < n; i++)
		ok = link_add_object(k, objects[i], sizes[i], "the test's object", e);
	link_add_bytes(k, "bytes", bytes, sizeof bytes, 64);
	link_add_bytes(k, "zeros", NULL, 16, 64);
	ok = ok && link_write(k, needed, path, e);
	link_free(k);
	return ok;
}

static void test_links_and_runs(const char *path)
{
	size_t sizes[2];
	char *objects[2] = {object_of(main_ir, false, &sizes[0]), object_of(other_ir, false, &sizes[1])};
	Error e;
	void *lib;
	CHECK(link_into(path, objects, sizes, 2, &e));
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(lib != NULL);
	if (lib) {
		int64_t (*combine)(int64_t, int32_t, const char *, int64_t);
		void *entry = dlsym(lib, "combine");
		const int32_t *answer = dlsym(lib, "answer");
		memcpy(&combine, &entry, sizeof combine); /* (ISO C converts no object pointer to a function's) */
		CHECK(combine && answer && *answer == 42);
		/* table[0](5) = 6, strlen = 3, tenfold = 50, bytes[2] = 300, zeros = 0 */
		CHECK(combine && combine(0, 5, "abc", 2) == 6 + 3 + 50 + 300);
		CHECK(combine && combine(1, 7, "", 3) == 14 + 0 + 70 + 400);
		CHECK(!dlsym(lib, "tenfold") && !dlsym(lib, "bytes") && !dlsym(lib, "zeros")); /* hidden: not exported */
		dlclose(lib);
	}
	free(objects[0]);
	free(objects[1]);
}

/* Linking the objects of ir fails, its message containing `text`. */
static void expect_refused(const char *path, const char *ir, bool static_code, const char *text, int line)
{
	size_t size;
	char *object = object_of(ir, static_code, &size);
	Error e;
	if (link_into(path, &object, &size, 1, &e) || !strstr(e.message, text)) {
		fprintf(stderr, "%s:%d: expected a refusal with '%s', got '%s'\n", __FILE__, line, text, e.message);
		failures++;
	}
	free(object);
}

static void test_refusals(const char *path)
{
	size_t size;
	char *object = object_of(other_ir, false, &size), *twice[2] = {object, object};
	size_t sizes[2] = {size, size};
	Error e;
	CHECK(!link_into(path, twice, sizes, 2, &e) && strstr(e.message, "symbol tenfold is defined twice"));
	for (size_t cut = 0; cut < size; cut += size / 7 + 1) { /* truncated: refused, never read past its end */
		Linker *k = link_new();
		char *part = malloc(cut ? cut : 1);
		memcpy(part, object, cut);
		CHECK(!link_add_object(k, part, cut, "a cut object", &e));
		link_free(k);
		free(part);
	}
	CHECK(!link_into(path, (char *[]){"not an object at all, but text long enough to be read"}, (size_t[]){54}, 1, &e) &&
	      strstr(e.message, "not an x86-64 ELF relocatable object"));
	free(object);
	expect_refused(path, "@v = thread_local global i32 1\ndefine ptr @f() {\n  ret ptr @v\n}\n", false, "thread-local",
	               __LINE__);
	expect_refused(path, "@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, "
	               "ptr @init, ptr null }]\ndefine void @init() {\n  ret void\n}\n", false, "constructors", __LINE__);
	expect_refused(path, "@v = internal global i32 1\ndefine ptr @f() {\n  ret ptr @v\n}\n", true, "not position-independent",
	               __LINE__);
}

int main(void)
{
	char path[] = "/tmp/grove-link-test-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	test_links_and_runs(path);
	test_refusals(path);
	unlink(path);
	return failures ? 1 : 0;
}
