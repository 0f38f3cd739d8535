/* SPDX-License-Identifier: MIT */
/*
 * The report as one self-contained HTML page (docs/html.md).  The JSON
 * report is the source: the page is report_html.html with the JSON
 * document put where its marker is, and the page's own script draws it.
 * The template is embedded at build time (.incbin), so the page needs no
 * file beside the binary.
 */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define MARKER "@PTSHARE_REPORT_JSON@"

__asm__(".pushsection .rodata\n"
	".hidden report_html_page\n"
	"report_html_page:\n"
	".incbin \"" REPORT_HTML_TEMPLATE "\"\n"
	".byte 0\n"
	".popsection\n");
extern const char report_html_page[];

int report_html(FILE *f, const struct report *r)
{
	char *json;
	size_t len;
	FILE *m = open_memstream(&json, &len);
	if (!m)
		return -ENOMEM;
	report_json(m, r);
	if (fclose(m)) {
		free(json);
		return -ENOMEM;
	}
	const char *mark = strstr(report_html_page, MARKER);
	fwrite(report_html_page, 1, (size_t)(mark - report_html_page), f);
	/* Inside <script>, "</script>" would end the element: '<' appears in
	 * JSON only within strings, where \u003c means the same. */
	for (const char *p = json, *lt; p < json + len; p = lt + 1) {
		lt = memchr(p, '<', (size_t)(json + len - p));
		if (!lt)
			lt = json + len;
		fwrite(p, 1, (size_t)(lt - p), f);
		if (lt < json + len)
			fputs("\\u003c", f);
	}
	fputs(mark + strlen(MARKER), f);
	free(json);
	return 0;
}
