/* hs_page: the report's two documents written side by side: index.html (self-contained: images embedded as
 * base64 data URIs, styles inline) and summary.md (Markdown, images linked beside it). Sections, key-value
 * tables of numbers, tables and figures; text is escaped for each format. Both files are written atomically. */
#ifndef HS_PAGE_H
#define HS_PAGE_H

#include "sim/base/err.h"
#include "sim/base/outfile.h"

typedef struct hs_page {
	char dir[1024];
	hs_outfile html, md;
	int ncols; /* of the open table */
} hs_page;

int hs_page_open(hs_page *p, const char *dir, const char *title, const char *subtitle, hs_err *err);
void hs_page_section(hs_page *p, const char *title);
void hs_page_para(hs_page *p, const char *text);
/* A table: header cells, then rows of the same width. */
void hs_page_table(hs_page *p, int ncols, const char *const *head);
void hs_page_row(hs_page *p, const char *const *cells);
void hs_page_table_end(hs_page *p);
/* A figure from an image in dir (relative name). */
void hs_page_figure(hs_page *p, const char *image, const char *caption);
int hs_page_close(hs_page *p, hs_err *err);
void hs_page_abort(hs_page *p);

#endif
