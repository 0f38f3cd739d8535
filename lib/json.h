/* SPDX-License-Identifier: MIT */
/* A streaming JSON writer: commas, nesting and string escapes. */
#ifndef PTSHARE_LIB_JSON_H
#define PTSHARE_LIB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* nothing written yet at that depth */
	bool after_key;
};

void json_init(struct json *j, FILE *f);
void json_object(struct json *j);
void json_array(struct json *j);
void json_end_object(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* A member: the key and its value. */
void json_member_u64(struct json *j, const char *key, uint64_t v);
void json_member_i64(struct json *j, const char *key, int64_t v);
void json_member_double(struct json *j, const char *key, double v);
void json_member_bool(struct json *j, const char *key, bool v);
void json_member_string(struct json *j, const char *key, const char *v);

#endif
