/* SPDX-License-Identifier: MIT */
/* The objects' build ids, as the readings gave them (PTS_CK_BUILD_ID),
 * against their files here when a report names call sites from them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_internal.h"
#include "lib/grow.h"
#include "lib/hex.h"
#include "report/symbols.h"

void ingest_build_id_object(struct ingest *g, const struct pts_ck_build_id *r)
{
	struct named *n = ingest_named(g, &(struct mm_object_id){
		r->kind, r->dev, r->ino });
	if (!n || r->version != PTS_BUILD_ID_VERSION ||
	    !r->len || r->len > PTS_BUILD_ID_MAX)
		return;
	memcpy(n->build_id, r->id, r->len);
	n->build_id_len = r->len;
}

void ingest_check_build_ids(struct ingest *g, struct report *r)
{
	for (size_t i = 0; i < g->nnames; i++) {
		const struct named *n = &g->names[i];
		uint8_t here[PTS_BUILD_ID_MAX];
		if (!n->build_id_len)
			continue;
		size_t len = report_build_id(n->name, 0, 0, here, sizeof(here));
		if (len == n->build_id_len && !memcmp(here, n->build_id, len))
			continue;
		struct report_build_id *b;
		char *object = strdup(n->name);
		if (!object || grow_array((void **)&r->build_ids,
					  &r->cap_build_ids, r->nbuild_ids + 1,
					  sizeof(*r->build_ids))) {
			free(object);
			ingest_out_of_memory(g);
			return;
		}
		b = &r->build_ids[r->nbuild_ids++];
		b->object = object;
		hex_text(b->trace, n->build_id, n->build_id_len);
		hex_text(b->here, here, len);
	}
}
