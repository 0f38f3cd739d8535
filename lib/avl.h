/* SPDX-License-Identifier: MIT */
/*
 * An ordered set: an intrusive AVL tree whose nodes are also threaded in
 * order.  For sets that change one element at a time and must not cost a
 * move per element to do so: a process's VMAs (mmu/mm_vma.c), which a
 * program mapping until vm.max_map_count makes 65,000, and the call-site
 * ranges kept beside them (ingest/callsite_ranges.c).
 *
 * The order is the caller's: `before` says whether a node sorts before
 * another, and must not change for a node while it is in the set.
 */
#ifndef PTSHARE_LIB_AVL_H
#define PTSHARE_LIB_AVL_H

#include <stdbool.h>
#include <stddef.h>

struct avl_node {
	struct avl_node *left, *right, *parent;
	struct avl_node *prev, *next; /* in order; NULL at the ends */
	int height;
};

struct avl_tree {
	struct avl_node *root;
	struct avl_node *first, *last;
	size_t n;
};

typedef bool avl_before_fn(const struct avl_node *a, const struct avl_node *b);
/* A predicate false for a prefix of the set and true for the rest. */
typedef bool avl_from_fn(const struct avl_node *n, const void *key);

#define avl_entry(node, type, member) \
	((type *)((char *)(node) - offsetof(type, member)))

/* n, not in any set, goes in; O(log n). */
void avl_insert(struct avl_tree *t, struct avl_node *n, avl_before_fn *before);
/* n, not in any set, goes in right after prev (first when prev is NULL),
 * where the caller's order puts it: no comparison, and the rebalancing
 * that follows an insertion is O(1) amortized. */
void avl_insert_after(struct avl_tree *t, struct avl_node *prev,
		      struct avl_node *n);
/* A set made from nodes in order, as a fork copies a process's VMAs:
 * append threads n after the last node, with no tree; build then makes
 * the balanced tree of them all, O(n) in all, where an insertion each
 * rebalanced.  No other call on t may come between them. */
void avl_append(struct avl_tree *t, struct avl_node *n);
void avl_build(struct avl_tree *t);
/* n, in t, goes out; O(log n). */
void avl_remove(struct avl_tree *t, struct avl_node *n);
/* The first node for which from(node, key) holds, or NULL; O(log n). */
struct avl_node *avl_first_from(const struct avl_tree *t, avl_from_fn *from,
				const void *key);
/* The tree holds the threaded nodes in their order, balanced (for checks). */
bool avl_consistent(const struct avl_tree *t, avl_before_fn *before);

#endif
