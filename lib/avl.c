/* SPDX-License-Identifier: MIT */
/* The ordered set of lib/avl.h: an AVL tree, threaded in order. */
#include "lib/avl.h"

static int height(const struct avl_node *n)
{
	return n ? n->height : 0;
}

static void update(struct avl_node *n)
{
	int l = height(n->left), r = height(n->right);
	n->height = 1 + (l > r ? l : r);
}

static struct avl_node *rotate_right(struct avl_node *n)
{
	struct avl_node *l = n->left;
	n->left = l->right;
	l->right = n;
	update(n);
	update(l);
	return l;
}

static struct avl_node *rotate_left(struct avl_node *n)
{
	struct avl_node *r = n->right;
	n->right = r->left;
	r->left = n;
	update(n);
	update(r);
	return r;
}

/* n's subtrees are balanced and differ in height by at most 2. */
static struct avl_node *balance(struct avl_node *n)
{
	int d = height(n->left) - height(n->right);
	if (d > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (d < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	update(n);
	return n;
}

/* *next: the first node of t after n, when there is one in t. */
static struct avl_node *insert(struct avl_node *t, struct avl_node *n,
			       avl_before_fn *before, struct avl_node **next)
{
	if (!t)
		return n;
	if (before(n, t)) {
		*next = t;
		t->left = insert(t->left, n, before, next);
	} else {
		t->right = insert(t->right, n, before, next);
	}
	return balance(t);
}

void avl_insert(struct avl_tree *t, struct avl_node *n, avl_before_fn *before)
{
	struct avl_node *next = NULL;
	n->left = n->right = NULL;
	n->height = 1;
	t->root = insert(t->root, n, before, &next);
	n->next = next;
	n->prev = next ? next->prev : t->last;
	*(n->prev ? &n->prev->next : &t->first) = n;
	*(next ? &next->prev : &t->last) = n;
	t->n++;
}

static struct avl_node *take_min(struct avl_node *t, struct avl_node **min)
{
	if (!t->left) {
		*min = t;
		return t->right;
	}
	t->left = take_min(t->left, min);
	return balance(t);
}

static struct avl_node *remove_from(struct avl_node *t, struct avl_node *n,
				    avl_before_fn *before)
{
	if (t == n) {
		struct avl_node *min;
		if (!t->right)
			return t->left;
		struct avl_node *right = take_min(t->right, &min);
		min->left = t->left;
		min->right = right;
		return balance(min);
	}
	if (before(n, t))
		t->left = remove_from(t->left, n, before);
	else
		t->right = remove_from(t->right, n, before);
	return balance(t);
}

void avl_remove(struct avl_tree *t, struct avl_node *n, avl_before_fn *before)
{
	t->root = remove_from(t->root, n, before);
	*(n->prev ? &n->prev->next : &t->first) = n->next;
	*(n->next ? &n->next->prev : &t->last) = n->prev;
	t->n--;
}

struct avl_node *avl_first_from(const struct avl_tree *t, avl_from_fn *from,
				const void *key)
{
	struct avl_node *found = NULL;
	for (struct avl_node *n = t->root; n;) {
		if (from(n, key)) {
			found = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return found;
}

/* The height of the subtree t, whose nodes are those from *cursor on in
 * the threaded order (*cursor moves past them), or -1 when it is not so,
 * not sorted or not balanced. */
static int check(const struct avl_node *t, const struct avl_node **cursor,
		 avl_before_fn *before)
{
	if (!t)
		return 0;
	int l = check(t->left, cursor, before);
	if (l < 0 || *cursor != t || (t->prev && !before(t->prev, t)))
		return -1;
	*cursor = t->next;
	int r = check(t->right, cursor, before);
	if (r < 0 || l - r > 1 || r - l > 1 || t->height != 1 + (l > r ? l : r))
		return -1;
	return t->height;
}

bool avl_consistent(const struct avl_tree *t, avl_before_fn *before)
{
	const struct avl_node *prev = NULL, *cursor = t->first;
	size_t n = 0;
	for (const struct avl_node *v = t->first; v; prev = v, v = v->next, n++)
		if (v->prev != prev)
			return false;
	return n == t->n && t->last == prev && check(t->root, &cursor, before) >= 0 &&
	       !cursor;
}
