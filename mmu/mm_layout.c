/* SPDX-License-Identifier: MIT */
/*
 * hugetlb-2m's address layout: where the kernel would have put the
 * mappings had the big shared ones been hugetlb (docs/model.md, "Where
 * the kernel puts them").
 *
 * hugetlb_get_unmapped_area() aligns a hugetlb mapping to 2 MiB and rounds
 * its length up, top-down: below the top of the gap the program's mapping
 * took, A + S, it goes to align_down(A + S - S'), S' the rounded length.
 * The part of the gap above it, [that + S', A + S), stays free, and the
 * small mappings made after it, which the run without huge pages put below
 * A, go there while they fit, the rest below the aligned mapping.  So a
 * world with this layout keeps, per process, the ranges it put elsewhere
 * than the program got them (moved: program addresses to the world's),
 * and those gaps above aligned mappings; every operation comes in program
 * addresses and is applied at the world's.  Processes without a
 * moved range (every one in other worlds) pay one pointer test.
 */
#include <stdlib.h>

#include "mm_internal.h"
#include "lib/grow.h"

struct mm_moved {
	uint64_t start, end;   /* the program's addresses */
	uint64_t wstart, wend; /* the world's: wend - wstart >= end - start */
};

struct mm_gap {
	uint64_t lo, hi;
};

struct mm_layout {
	struct mm_moved *m;    /* by start, disjoint (and so are the world's) */
	size_t n, cap;
	struct mm_gap *g;
	size_t ng, gcap;
};

void mm_layout_free(struct mm_space *mm)
{
	if (!mm->layout)
		return;
	free(mm->layout->m);
	free(mm->layout->g);
	free(mm->layout);
	mm->layout = NULL;
}

int mm_layout_copy(struct mm_world *w, struct mm_space *child,
		   const struct mm_space *parent)
{
	const struct mm_layout *p = parent->layout;
	struct mm_layout *c;
	if (!p)
		return 0;
	if (!(c = calloc(1, sizeof(*c))) ||
	    (p->n && grow_array((void **)&c->m, &c->cap, p->n, sizeof(*c->m))) ||
	    (p->ng && grow_array((void **)&c->g, &c->gcap, p->ng, sizeof(*c->g)))) {
		if (c) {
			free(c->m);
			free(c);
		}
		return mm_nomem(w, "a process's layout");
	}
	if (p->n)
		memcpy(c->m, p->m, p->n * sizeof(*c->m));
	if (p->ng)
		memcpy(c->g, p->g, p->ng * sizeof(*c->g));
	c->n = p->n;
	c->ng = p->ng;
	child->layout = c;
	return 0;
}

static struct mm_layout *layout_of(struct mm_world *w, struct mm_space *mm)
{
	if (!mm->layout && !(mm->layout = calloc(1, sizeof(*mm->layout))))
		mm_nomem(w, "a process's layout");
	return mm->layout;
}

/* The moved range holding the program's address a, or NULL. */
static const struct mm_moved *moved_at(const struct mm_layout *l, uint64_t a)
{
	size_t lo = 0, hi = l ? l->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->m[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return l && lo < l->n && l->m[lo].start <= a ? &l->m[lo] : NULL;
}

static uint64_t world_of(const struct mm_moved *m, uint64_t a)
{
	return a - m->start + m->wstart;
}

/* Of the moved ranges whose place in the world meets [start, end), the
 * first there, or NULL; tails: their places with the tails they were
 * rounded up by, else the program's part alone.  O(moved ranges): there
 * are a few. */
static const struct mm_moved *first_in_world(const struct mm_layout *l,
					     uint64_t start, uint64_t end,
					     bool tails)
{
	const struct mm_moved *t = NULL;
	for (size_t i = 0; l && i < l->n; i++) {
		const struct mm_moved *m = &l->m[i];
		uint64_t wend = tails ? m->wend : m->wstart + (m->end - m->start);
		if (wend > start && m->wstart < end &&
		    (!t || m->wstart < t->wstart))
			t = m;
	}
	return t;
}

bool mm_layout_addr(const struct mm_space *mm, uint64_t addr, uint64_t *out)
{
	const struct mm_moved *m = moved_at(mm->layout, addr);
	*out = m ? world_of(m, addr) : addr;
	return m || !first_in_world(mm->layout, addr, addr + 1, true);
}

int mm_layout_each_program(const struct mm_space *mm, uint64_t start,
			   uint64_t end, mm_program_fn *fn, void *arg)
{
	for (uint64_t pos = start; pos < end;) {
		const struct mm_moved *t = first_in_world(mm->layout, pos, end,
							  false);
		uint64_t stop = t ? max_u64(t->wstart, pos) : end;
		int r = pos < stop ? fn(pos, stop, pos, arg) : 0;
		if (r || !t)
			return r;
		uint64_t e = min_u64(end, t->wstart + (t->end - t->start));
		if ((r = fn(stop - t->wstart + t->start, e - t->wstart + t->start,
			    stop, arg)))
			return r;
		pos = e;
		if (pos == t->wstart + (t->end - t->start))
			pos = min_u64(end, t->wend); /* the rounding's tail */
	}
	return 0;
}

/* The parts of the program's [start, end) not moved, less every moved
 * range's place in the world: the world's VMAs there are the program's
 * at the same addresses. */
static int each_unmoved(struct mm_world *w, struct mm_space *mm,
			uint64_t start, uint64_t end, mm_piece_fn *fn, void *arg)
{
	for (uint64_t pos = start; pos < end;) {
		const struct mm_moved *t = first_in_world(mm->layout, pos, end,
							  true);
		uint64_t stop = t ? max_u64(t->wstart, pos) : end;
		int r = pos < stop ? fn(w, mm, pos, stop, pos, arg) : 0;
		if (r)
			return r;
		pos = t ? t->wend : end;
	}
	return 0;
}

int mm_layout_pieces(struct mm_world *w, struct mm_space *mm, uint64_t start,
		     uint64_t end, mm_piece_fn *fn, void *arg)
{
	const struct mm_layout *l = mm->layout;
	if (!l->n)
		return fn(w, mm, start, end, start, arg);
	uint64_t pos = start;
	for (size_t i = 0; i < l->n && pos < end; i++) {
		const struct mm_moved m = l->m[i]; /* fn may not change it */
		if (m.end <= pos || m.start >= end)
			continue;
		int r = each_unmoved(w, mm, pos, max_u64(pos, m.start), fn, arg);
		uint64_t s = max_u64(pos, m.start), e = min_u64(end, m.end);
		if (!r)
			r = fn(w, mm, world_of(&m, s), world_of(&m, e), s, arg);
		/* The tail the kernel rounded it up by: the program has no
		 * address there. */
		if (!r && e == m.end && world_of(&m, e) < m.wend)
			r = fn(w, mm, world_of(&m, e), m.wend, MM_TASK_SIZE, arg);
		if (r)
			return r;
		pos = e;
	}
	return pos < end ? each_unmoved(w, mm, pos, end, fn, arg) : 0;
}

/* The VMA of mm with the highest start below x, or NULL. */
static struct mm_vma *vma_below(const struct mm_space *mm, uint64_t x)
{
	struct mm_vma *v = x ? mm_vma_first_after(mm, x - 1) : NULL;
	if (v && v->start < x)
		return v;
	return vma_before(mm, v);
}

/* vm_unmapped_area() top-down: the highest address below top, and not
 * below lo, where len bytes aligned to align are free in the world; 0
 * when there is none. */
static uint64_t fit_down(const struct mm_space *mm, uint64_t top, uint64_t lo,
			 uint64_t len, uint64_t align)
{
	const struct mm_vma *v = vma_below(mm, top);
	for (uint64_t hi = top; hi >= lo + len;) {
		uint64_t a = align_down(hi - len, align);
		if (a < lo)
			return 0;
		if (!v || v->end <= a)
			return a;
		hi = v->start;
		v = vma_prev(v);
	}
	return 0;
}

/* The lowest address a mapping may have (mmap_min_addr's default). */
#define MM_MIN_ADDR 0x10000ULL

/* Where the kernel puts a mapping of len bytes that it placed at addr in
 * the program's layout: the gaps above addr first, highest first, then
 * addr if it is free in the world, else the next fit below (as below the
 * aligned mapping, which took the world's space below the program's). */
static uint64_t placed(const struct mm_space *mm, uint64_t addr, uint64_t len,
		       uint64_t align)
{
	const struct mm_layout *l = mm->layout;
	uint64_t done = UINT64_MAX; /* gaps at or above this were tried */
	for (;;) {
		const struct mm_gap *best = NULL;
		for (size_t i = 0; i < l->ng; i++) {
			const struct mm_gap *g = &l->g[i];
			if (g->hi > addr && g->hi < done && (!best || g->hi > best->hi))
				best = g;
		}
		if (!best)
			break;
		uint64_t a = fit_down(mm, best->hi, best->lo, len, align);
		if (a)
			return a;
		done = best->hi;
	}
	if (!mm_vma_any_in(mm, addr, addr + len))
		return addr;
	return fit_down(mm, addr + len, MM_MIN_ADDR, len, align);
}

/* m has no tail: its place in the world is as long as the program's. */
static bool untailed(const struct mm_moved *m)
{
	return m->wend - m->wstart == m->end - m->start;
}

/* The first moved range starting at or after a (binary search). */
static size_t moved_from(const struct mm_layout *l, uint64_t a)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->m[mid].start < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A moved range joins a neighbour moved as far, side by side in both the
 * program's addresses and the world's: the mappings the kernel places one
 * below another after an aligned mapping all move by as much, and stay
 * one range (a lookup among a few, not among every mapping since).
 */
static int moved_add(struct mm_world *w, struct mm_space *mm, uint64_t start,
		     uint64_t end, uint64_t wstart, uint64_t wend)
{
	struct mm_layout *l = layout_of(w, mm);
	const struct mm_moved add = { start, end, wstart, wend };
	if (!l)
		return -ENOMEM;
	size_t i = moved_from(l, start);
	struct mm_moved *prev = i ? &l->m[i - 1] : NULL;
	struct mm_moved *next = i < l->n ? &l->m[i] : NULL;
	bool with_prev = prev && untailed(prev) && prev->end == start &&
			 prev->wend == wstart;
	bool with_next = next && untailed(&add) && next->start == end &&
			 next->wstart == wend;
	if (with_prev && with_next && untailed(&add)) {
		prev->end = next->end;
		prev->wend = next->wend;
		memmove(next, next + 1, (l->n - i - 1) * sizeof(*next));
		l->n--;
		return 0;
	}
	if (with_prev) {
		prev->end = end;
		prev->wend = wend;
		return 0;
	}
	if (with_next) {
		next->start = start;
		next->wstart = wstart;
		return 0;
	}
	if (grow_array((void **)&l->m, &l->cap, l->n + 1, sizeof(*l->m)))
		return mm_nomem(w, "a moved range");
	memmove(&l->m[i + 1], &l->m[i], (l->n - i) * sizeof(*l->m));
	l->m[i] = add;
	l->n++;
	return 0;
}

/* A moved range meeting the program's [start, end), or NULL. */
static struct mm_moved *moved_in(const struct mm_layout *l, uint64_t start,
				 uint64_t end)
{
	size_t i = l ? moved_from(l, start) : 0;
	if (i && l->m[i - 1].end > start)
		return &l->m[i - 1];
	return l && i < l->n && l->m[i].start < end ? &l->m[i] : NULL;
}

int mm_layout_forget(struct mm_world *w, struct mm_space *mm, uint64_t start,
		     uint64_t end)
{
	struct mm_layout *l = mm->layout;
	for (struct mm_moved *m; (m = moved_in(l, start, end));) {
		struct mm_moved head = *m, tail = *m;
		head.end = start;
		head.wend = world_of(m, start);
		tail.wstart = world_of(m, end);
		tail.start = end;
		bool keep_head = m->start < start, keep_tail = m->end > end;
		memmove(m, m + 1, (size_t)(&l->m[l->n] - m - 1) * sizeof(*m));
		l->n--;
		if ((keep_head && moved_add(w, mm, head.start, head.end,
					    head.wstart, head.wend)) ||
		    (keep_tail && moved_add(w, mm, tail.start, tail.end,
					    tail.wstart, tail.wend)))
			return -ENOMEM;
	}
	return 0;
}

int mm_layout_moved(struct mm_world *w, struct mm_space *mm, uint64_t start,
		    uint64_t end, uint64_t wstart, uint64_t wend)
{
	const struct mm_moved *in = moved_at(mm->layout, start);
	if (in && end <= in->end && world_of(in, start) == wstart &&
	    (end == in->end ? in->wend : world_of(in, end)) == wend)
		return 0; /* where it was: a part of a moved reservation */
	if (mm_layout_forget(w, mm, start, end))
		return -ENOMEM;
	return wstart == start && wend == end
		       ? 0 : moved_add(w, mm, start, end, wstart, wend);
}

static int check_unmap(struct mm_world *w, struct mm_space *mm,
		       uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	(void)from;
	(void)arg;
	return mm_vma_check_huge_edges(w, mm, start, end);
}

static int unmap_piece(struct mm_world *w, struct mm_space *mm,
		       uint64_t start, uint64_t end, uint64_t from, void *arg)
{
	(void)from;
	(void)arg;
	return mm_do_unmap(w, mm, start, end);
}

int mm_layout_unmap(struct mm_world *w, struct mm_space *mm, uint64_t start,
		    uint64_t end)
{
	int r = mm_layout_each(w, mm, start, end, check_unmap, NULL);
	if (!r)
		r = mm_layout_each(w, mm, start, end, unmap_piece, NULL);
	return r ? r : mm_layout_forget(w, mm, start, end);
}

/* A mapping of the program's that the kernel aligns and rounds up in
 * this world: one it maps by 2 MiB hugetlb pages, whose place it chose. */
static bool aligned_by_kernel(const struct mm_world *w,
			      const struct mm_mapping *m)
{
	return w->policy.huge_aligned && w->policy.huge_shmem &&
	       m->kernel_placed && !m->huge_shift && m->len >= MM_SPAN(PT_PTE) &&
	       (m->flags & MM_VMA_SHARED) &&
	       (m->obj.kind == MM_OBJ_SHMEM || m->obj.kind == MM_OBJ_SYSV);
}

/* hugetlb_get_unmapped_area(): aligned, rounded up, top-down from the top
 * of the gap the program's mapping took; the part of that gap above it
 * is a gap the kernel fills before any below.  No room: left where it
 * is. */
static int place_aligned(struct mm_world *w, struct mm_space *mm,
			 const struct mm_mapping *m, uint64_t *wstart,
			 uint64_t *wlen)
{
	uint64_t span = MM_SPAN(PT_PTE), end = m->addr + m->len;
	uint64_t len = align_down(m->len + span - 1, span);
	uint64_t a = fit_down(mm, end, MM_MIN_ADDR, len, span);
	if (!a)
		return 0;
	if (a + len < end) { /* none above one the program got aligned */
		struct mm_layout *l = layout_of(w, mm);
		if (!l || grow_array((void **)&l->g, &l->gcap, l->ng + 1,
				     sizeof(*l->g)))
			return l ? mm_nomem(w, "a gap") : -ENOMEM;
		l->g[l->ng++] = (struct mm_gap){ a + len, end };
	}
	*wstart = a;
	*wlen = len;
	return 0;
}

/* The program has a mapping in [start, end): a moved one, or one the
 * world has at the same addresses. */
static bool program_maps(const struct mm_space *mm, uint64_t start,
			 uint64_t end)
{
	const struct mm_layout *l = mm->layout;
	for (size_t i = 0; i < l->n; i++)
		if (l->m[i].start < end && start < l->m[i].end)
			return true;
	const struct mm_vma *v;
	vma_for_each_in(v, mm, start, end)
		if (!first_in_world(l, v->start, v->end, true))
			return true;
	return false;
}

int mm_layout_place(struct mm_world *w, struct mm_space *mm,
		    const struct mm_mapping *m, uint64_t *wstart, uint64_t *wlen)
{
	uint64_t end = m->addr + m->len;
	const struct mm_layout *l = mm->layout;
	const struct mm_moved *in = moved_at(l, m->addr);
	*wstart = m->addr;
	*wlen = m->len;
	if (in && end <= in->end) { /* inside a moved reservation */
		uint64_t hp = m->huge_shift ? 1ULL << m->huge_shift : MM_PAGE_SIZE;
		*wstart = world_of(in, m->addr);
		if (end == in->end)
			*wlen = in->wend - *wstart;
		/* The reservation moved by whole pages, not huge ones: the
		 * kernel refuses hugetlb pages where they cannot start. */
		if (*wstart & (hp - 1))
			return mm_fail(w, -EINVAL, "hugetlb mapping at %#llx "
				       "goes to %#llx in this world, not "
				       "aligned to its page size",
				       (unsigned long long)m->addr,
				       (unsigned long long)*wstart);
		return 0;
	}
	if (l && !m->fixed && program_maps(mm, m->addr, end))
		return mm_fail(w, -EEXIST, "[%#llx, %#llx) overlaps a mapping "
			       "and is not MAP_FIXED",
			       (unsigned long long)m->addr,
			       (unsigned long long)end);
	/* MAP_FIXED: what the program had there goes, wherever it is. */
	int r = l && m->fixed ? mm_layout_unmap(w, mm, m->addr, end) : 0;
	if (r)
		return r;
	if (aligned_by_kernel(w, m))
		return place_aligned(w, mm, m, wstart, wlen);
	/* A mapping the kernel placed, or one placed where this world has
	 * another (/proc listed it: the dynamic loader's and libc's own
	 * calls are not seen): placed as the kernel would. */
	if (!l || (!m->kernel_placed && !first_in_world(l, m->addr, end, true)))
		return 0;
	uint64_t span = MM_SPAN(PT_PTE);
	uint64_t align = m->huge_shift ? 1ULL << m->huge_shift
		: !((m->addr | m->len) & (span - 1)) ? span : MM_PAGE_SIZE;
	uint64_t a = placed(mm, m->addr, m->len, align);
	if (a)
		*wstart = a;
	return 0;
}

int mm_layout_check(struct mm_world *w, const struct mm_space *mm)
{
	const struct mm_layout *l = mm->layout;
	for (size_t i = 0; l && i < l->n; i++) {
		const struct mm_moved *m = &l->m[i];
		if (m->start >= m->end || m->wend - m->wstart < m->end - m->start ||
		    (i && l->m[i - 1].end > m->start))
			return mm_fail(w, -EUCLEAN, "process %u: moved range %zu "
				       "[%#llx, %#llx) is empty, short or "
				       "unsorted", mm->pid, i,
				       (unsigned long long)m->start,
				       (unsigned long long)m->end);
		if (!mm_vma_range_mapped(mm, m->wstart,
					 m->wstart + (m->end - m->start)))
			return mm_fail(w, -EUCLEAN, "process %u: moved range "
				       "[%#llx, %#llx) is not mapped in the "
				       "world", mm->pid,
				       (unsigned long long)m->start,
				       (unsigned long long)m->end);
		for (size_t j = 0; j < i; j++)
			if (l->m[j].wstart < m->wend && m->wstart < l->m[j].wend)
				return mm_fail(w, -EUCLEAN, "process %u: moved "
					       "ranges %zu and %zu meet in the "
					       "world", mm->pid, j, i);
	}
	return 0;
}
