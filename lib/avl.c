/* SPDX-License-Identifier: MIT */
/*
 * The ordered set of lib/avl.h: an AVL tree, threaded in order, whose nodes
 * know their parent.  A change rebalances bottom-up from where it was made
 * and stops at the first node whose height it leaves as it was: most stop
 * within a level or two, where a recursive descent rebalanced (and read both
 * children's heights at) every level back to the root.
 */
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

/* Where parent p holds old (the root when p is NULL) now goes n. */
static void replace_child(struct avl_tree *t, struct avl_node *p,
			  const struct avl_node *old, struct avl_node *n)
{
	if (!p)
		t->root = n;
	else if (p->left == old)
		p->left = n;
	else
		p->right = n;
	if (n)
		n->parent = p;
}

static void set_child(struct avl_node **link, struct avl_node *c,
		      struct avl_node *parent)
{
	*link = c;
	if (c)
		c->parent = parent;
}

static struct avl_node *rotate_right(struct avl_tree *t, struct avl_node *n)
{
	struct avl_node *l = n->left;
	replace_child(t, n->parent, n, l);
	set_child(&n->left, l->right, n);
	set_child(&l->right, n, l);
	update(n);
	update(l);
	return l;
}

static struct avl_node *rotate_left(struct avl_tree *t, struct avl_node *n)
{
	struct avl_node *r = n->right;
	replace_child(t, n->parent, n, r);
	set_child(&n->right, r->left, n);
	set_child(&r->left, n, r);
	update(n);
	update(r);
	return r;
}

/* n's subtrees are balanced and differ in height by at most 2: the root of
 * n's subtree once balanced. */
static struct avl_node *balance(struct avl_tree *t, struct avl_node *n)
{
	int d = height(n->left) - height(n->right);
	if (d > 1) {
		if (height(n->left->left) < height(n->left->right))
			rotate_left(t, n->left);
		return rotate_right(t, n);
	}
	if (d < -1) {
		if (height(n->right->right) < height(n->right->left))
			rotate_right(t, n->right);
		return rotate_left(t, n);
	}
	update(n);
	return n;
}

/* A subtree below n changed height: n and its ancestors, up to the first
 * whose subtree keeps its height (those above it keep theirs). */
static void rebalance_from(struct avl_tree *t, struct avl_node *n)
{
	while (n) {
		int was = n->height;
		n = balance(t, n);
		if (n->height == was)
			return;
		n = n->parent;
	}
}

/* n goes in the empty child *link of parent (the root when NULL), which
 * puts it between prev and next in the order. */
static void attach(struct avl_tree *t, struct avl_node *parent,
		   struct avl_node **link, struct avl_node *n)
{
	n->left = n->right = NULL;
	n->height = 1;
	set_child(link, n, parent);
	if (!parent) {
		n->prev = n->next = NULL;
	} else if (link == &parent->left) {
		n->next = parent;
		n->prev = parent->prev;
	} else {
		n->prev = parent;
		n->next = parent->next;
	}
	*(n->prev ? &n->prev->next : &t->first) = n;
	*(n->next ? &n->next->prev : &t->last) = n;
	t->n++;
	rebalance_from(t, parent);
}

void avl_insert(struct avl_tree *t, struct avl_node *n, avl_before_fn *before)
{
	struct avl_node *parent = NULL, **link = &t->root;
	while (*link) {
		parent = *link;
		link = before(n, parent) ? &parent->left : &parent->right;
	}
	attach(t, parent, link, n);
}

/* Right after prev, n is the leftmost node of prev's right subtree: prev's
 * right child when it has none, else the left child of prev's successor. */
void avl_insert_after(struct avl_tree *t, struct avl_node *prev,
		      struct avl_node *n)
{
	struct avl_node *next = prev ? prev->next : t->first;
	if (prev && !prev->right)
		attach(t, prev, &prev->right, n);
	else if (next)
		attach(t, next, &next->left, n);
	else
		attach(t, NULL, &t->root, n);
}

void avl_append(struct avl_tree *t, struct avl_node *n)
{
	n->left = n->right = n->parent = NULL;
	n->next = NULL;
	n->prev = t->last;
	*(t->last ? &t->last->next : &t->first) = n;
	t->last = n;
	t->n++;
}

/* The tree of the n nodes from *cursor on in the threaded order, *cursor
 * moved past them: halves whose sizes differ by one at most, so heights
 * that do too. */
static struct avl_node *build(struct avl_node **cursor, size_t n)
{
	if (!n)
		return NULL;
	struct avl_node *left = build(cursor, (n - 1) / 2), *root = *cursor;
	*cursor = root->next;
	set_child(&root->left, left, root);
	set_child(&root->right, build(cursor, n - 1 - (n - 1) / 2), root);
	update(root);
	return root;
}

void avl_build(struct avl_tree *t)
{
	struct avl_node *cursor = t->first;
	t->root = build(&cursor, t->n);
	if (t->root)
		t->root->parent = NULL;
}

void avl_remove(struct avl_tree *t, struct avl_node *n)
{
	struct avl_node *changed = n->parent;
	if (n->left && n->right) {
		/* Its successor, the leftmost node of its right subtree (no
		 * left child), takes its place. */
		struct avl_node *s = n->next;
		changed = s;
		if (s->parent != n) {
			changed = s->parent;
			set_child(&s->parent->left, s->right, s->parent);
			set_child(&s->right, n->right, s);
		}
		set_child(&s->left, n->left, s);
		s->height = n->height;
		replace_child(t, n->parent, n, s);
	} else {
		replace_child(t, n->parent, n, n->left ? n->left : n->right);
	}
	*(n->prev ? &n->prev->next : &t->first) = n->next;
	*(n->next ? &n->next->prev : &t->last) = n->prev;
	t->n--;
	rebalance_from(t, changed);
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

/* The height of the subtree t, child of parent, whose nodes are those from
 * *cursor on in the threaded order (*cursor moves past them), or -1 when it
 * is not so, not sorted or not balanced. */
static int check(const struct avl_node *t, const struct avl_node *parent,
		 const struct avl_node **cursor, avl_before_fn *before)
{
	if (!t)
		return 0;
	if (t->parent != parent)
		return -1;
	int l = check(t->left, t, cursor, before);
	if (l < 0 || *cursor != t || (t->prev && !before(t->prev, t)))
		return -1;
	*cursor = t->next;
	int r = check(t->right, t, cursor, before);
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
	return n == t->n && t->last == prev &&
	       check(t->root, NULL, &cursor, before) >= 0 && !cursor;
}
