/* SPDX-License-Identifier: MIT */
/*
 * The call site of a traced call: a few return addresses, the shim's own
 * frames left out, from libgcc's unwinder linked into the shim (libgcc_eh.a,
 * its symbols hidden) and a cache of what it says about each frame.
 *
 * libgcc's _Unwind_Backtrace finds a frame's unwind table with
 * _dl_find_object (glibc's, lock-free) and reads the tables and the stack:
 * no lock, no memory, no fd.  Its registry of frames (__register_frame_info,
 * which locks and mallocs) is this copy's own and stays empty.  But it
 * parses every frame's table entry anew, about 120 ns a frame, ten times
 * libunwind's cached unw_backtrace.  So most frames are stepped here: at
 * most return addresses the caller's frame is found the same way every
 * time (the CFA is rsp or rbp plus an offset, the return address just
 * below it, rbp saved at an offset or not at all); libgcc's
 * __frame_state_for says which, once per return address, into a cache.
 * A frame it cannot put that way (a signal frame, a CFA computed by an
 * expression, code with no unwind table) sends the whole call stack to
 * _Unwind_Backtrace.  docs/shim.md, *The unwinder*.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <unwind.h>

#include "shim.h"

/* Frames of the shim above the call site, at most (execl unoptimized:
 * execl, exec_list, exec_run, env_run, exec_traced, shim_enter_call,
 * stack_capture, walk_cached). */
#define OWN_FRAMES_MAX 8

/* This library's code, from its ELF header to the end of its text. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char __etext[] __attribute__((visibility("hidden")));

static bool own(uintptr_t ip)
{
	return ip >= (uintptr_t)__ehdr_start && ip < (uintptr_t)__etext;
}

/* The frames of one call stack, as they come: the shim's own on top are
 * skipped, and no more are looked at than a record keeps. */
struct collect {
	struct shim_call *c;
	int budget;
};

/* True once the call stack has all it takes. */
static bool collect(struct collect *k, uintptr_t ip)
{
	k->budget--;
	if (k->c->nframes || !own(ip))
		k->c->frames[k->c->nframes++] = ip;
	return k->c->nframes == shim_cfg.frames || !k->budget;
}

/* libgcc's whole unwinding, for call stacks the cache cannot step. */
static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	uintptr_t ip = _Unwind_GetIP(ctx);

	if (!ip || collect(arg, ip))
		return _URC_END_OF_STACK;
	return _URC_NO_REASON;
}

/* libgcc's pre-GCC 3 interface to a frame's rules (unwind-dw2.c): 17
 * DWARF registers and the return address column on x86-64. */
#define FS_REGS 18
struct frame_state {
	void *cfa;
	void *eh_ptr;
	long cfa_offset;
	long args_size;
	long reg_or_offset[FS_REGS];
	unsigned short cfa_reg;
	unsigned short retaddr_column;
	char saved[FS_REGS];
};
struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};
struct frame_state *__frame_state_for(void *pc, struct frame_state *fs);
const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };
enum { SAVED_NOT = 0, SAVED_AT_OFFSET = 1 }; /* libgcc's REG_UNSAVED, ... */

/* How to find a caller's frame, 0 when it cannot: the CFA's offset (bits
 * 0-15), rbp's from the CFA in words (16-23), flags.  END: the call stack
 * ends here. */
#define RULE_OK (1u << 24)
#define RULE_CFA_RBP (1u << 25)
#define RULE_RBP_SAVED (1u << 26)
#define RULE_END (1u << 27)

static uint32_t rule_for(uintptr_t ip)
{
	struct dwarf_eh_bases bases;
	struct dl_find_object object;
	struct frame_state fs;
	void *pc = (void *)(ip - 1); /* the call, not what follows it */

	/* No table: libgcc reads the code there, a signal return or the end
	 * of the stack.  Outside every object (generated code, or no code at
	 * all) it is not read: the end. */
	if (!_Unwind_Find_FDE(pc, &bases))
		return _dl_find_object(pc, &object) ? RULE_END : 0;
	if (!__frame_state_for(pc, &fs))
		return 0;
	if ((fs.cfa_reg != DW_RSP && fs.cfa_reg != DW_RBP) ||
	    fs.retaddr_column != DW_RA || fs.saved[DW_RA] != SAVED_AT_OFFSET ||
	    fs.reg_or_offset[DW_RA] != -8 || fs.cfa_offset != (int16_t)fs.cfa_offset)
		return 0;
	uint32_t rule = RULE_OK | (uint16_t)fs.cfa_offset;
	if (fs.cfa_reg == DW_RBP)
		rule |= RULE_CFA_RBP;
	long bp_words = fs.reg_or_offset[DW_RBP] / 8;
	if (fs.saved[DW_RBP] == SAVED_AT_OFFSET && bp_words == (int8_t)bp_words &&
	    bp_words * 8 == fs.reg_or_offset[DW_RBP])
		rule |= RULE_RBP_SAVED | (uint32_t)(uint8_t)bp_words << 16;
	else if (fs.saved[DW_RBP] != SAVED_NOT)
		return 0;
	return rule;
}

/*
 * The rules of return addresses in the objects loaded with the program,
 * which are never unloaded (a dlopen'ed object's addresses may come to hold
 * another's code: its rules are not kept).  A slot is a seqlock written by
 * a thread that finds no other writing it, a rule replacing the one there
 * (odd: being written; a fork child that inherits one odd leaves it so, a
 * slot lost); readers retry nothing, a torn read is a miss.  Two pages,
 * written in the constructor: the process's footprint is the same from its
 * start, whatever call sites come later.
 */
#define CACHE_SLOTS 512
#define SLOTS_PER_PAGE 256
static struct slot {
	atomic_uint seq;
	_Atomic uint32_t rule;
	_Atomic uintptr_t ip;
} cache[CACHE_SLOTS] __attribute__((aligned(4096)));

#define RANGES_MAX 64
static struct range {
	uintptr_t start, end;
} ranges[RANGES_MAX];
static int nranges;

static bool lasting(uintptr_t ip)
{
	for (int i = 0; i < nranges; i++)
		if (ip >= ranges[i].start && ip < ranges[i].end)
			return true;
	return false;
}

static struct slot *slot_of(uintptr_t ip)
{
	return &cache[(ip * 0x9e3779b97f4a7c15ull) >> 55];
}

static uint32_t rule_at(uintptr_t ip)
{
	struct slot *s = slot_of(ip);
	unsigned seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	uintptr_t key = atomic_load_explicit(&s->ip, memory_order_relaxed);
	uint32_t rule = atomic_load_explicit(&s->rule, memory_order_relaxed);

	atomic_thread_fence(memory_order_acquire);
	if (!(seq & 1) && key == ip &&
	    atomic_load_explicit(&s->seq, memory_order_relaxed) == seq)
		return rule;
	rule = rule_for(ip);
	if (!rule || !lasting(ip) || (seq & 1) ||
	    !atomic_compare_exchange_strong(&s->seq, &seq, seq + 1))
		return rule;
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->ip, ip, memory_order_relaxed);
	atomic_store_explicit(&s->rule, rule, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
	return rule;
}

struct regs {
	uintptr_t ip, sp, bp;
};

/* The caller's registers as they are after this call returns. */
void stack_regs(struct regs *r);
__asm__(".text\n"
	".globl stack_regs\n"
	".hidden stack_regs\n"
	".type stack_regs, @function\n"
	"stack_regs:\n"
	".cfi_startproc\n"
	"\tendbr64\n"
	"\tmovq (%rsp), %rax\n"
	"\tmovq %rax, 0(%rdi)\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tmovq %rax, 8(%rdi)\n"
	"\tmovq %rbp, 16(%rdi)\n"
	"\tret\n"
	".cfi_endproc\n"
	".size stack_regs, .-stack_regs\n");

/* False: a frame the cache cannot step; nothing is kept then. */
static __attribute__((noinline)) bool walk_cached(struct collect *k)
{
	struct regs r;

	stack_regs(&r);
	while (r.ip && !collect(k, r.ip)) {
		uint32_t rule = rule_at(r.ip);
		if (rule & RULE_END)
			break;
		if (!rule) {
			k->c->nframes = 0;
			return false;
		}
		uintptr_t cfa = (rule & RULE_CFA_RBP ? r.bp : r.sp) + (int16_t)rule;
		if (rule & RULE_RBP_SAVED)
			r.bp = *(const uintptr_t *)(cfa + 8 * (int8_t)(rule >> 16));
		r.ip = *(const uintptr_t *)(cfa - 8);
		r.sp = cfa;
	}
	return true;
}

void stack_capture(struct shim_call *c)
{
	struct collect k = { c, (int)shim_cfg.frames + OWN_FRAMES_MAX };

	c->nframes = 0;
	if (!shim_cfg.stack || !shim_cfg.frames || walk_cached(&k))
		return;
	k.budget = (int)shim_cfg.frames + OWN_FRAMES_MAX;
	_Unwind_Backtrace(one_frame, &k);
}

static int note_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	for (int i = 0; i < info->dlpi_phnum && nranges < RANGES_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			ranges[nranges++] = (struct range){
				info->dlpi_addr + ph->p_vaddr,
				info->dlpi_addr + ph->p_vaddr + ph->p_memsz };
	}
	return 0;
}

/* In the constructor, where the process has one thread: the objects loaded
 * with the program, the cache's pages, and libgcc's one-time setup (its
 * register size table, behind a pthread_once a child forked while another
 * thread ran it would wait on for ever). */
void stack_init(void)
{
	struct shim_call c;
	struct collect k = { &c, 1 };

	if (!shim_cfg.stack || !shim_cfg.frames)
		return;
	dl_iterate_phdr(note_range, NULL);
	for (int i = 0; i < CACHE_SLOTS; i += SLOTS_PER_PAGE)
		atomic_store(&cache[i].seq, 0);
	c.nframes = 0;
	_Unwind_Backtrace(one_frame, &k);
}
