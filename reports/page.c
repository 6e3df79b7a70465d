#include "reports/page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void html_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

static void md_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '*' || *s == '_' || *s == '`')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

int hs_page_open(hs_page *p, const char *dir, const char *title, const char *subtitle, hs_err *err)
{
	memset(p, 0, sizeof *p);
	snprintf(p->dir, sizeof p->dir, "%s", dir);
	char path[1200];
	snprintf(path, sizeof path, "%s/index.html", dir);
	if (hs_outfile_open(&p->html, path, err))
		return -1;
	snprintf(path, sizeof path, "%s/summary.md", dir);
	if (hs_outfile_open(&p->md, path, err)) {
		hs_outfile_abort(&p->html);
		return -1;
	}
	FILE *h = p->html.f;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", h);
	html_esc(h, title);
	fputs("</title>\n<style>\nbody{font-family:system-ui,'DejaVu Sans',sans-serif;max-width:1000px;margin:2em auto;"
	      "padding:0 1em;color:#222}\nh1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;"
	      "border-bottom:1px solid #ddd}\n.sub{color:#666;margin-top:0}\ntable{border-collapse:collapse;margin:.6em 0;display:block;overflow-x:auto;max-width:100%;"
	      "font-size:.9em}\nth,td{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f4f4f4}"
	      "\ntd.n{text-align:right;font-variant-numeric:tabular-nums}\nfigure{margin:1em 0}img{max-width:100%;border:1px solid "
	      "#eee}\nfigcaption{color:#555;font-size:.9em}\n</style></head><body>\n<h1>", h);
	html_esc(h, title);
	fputs("</h1>\n<p class=\"sub\">", h);
	html_esc(h, subtitle);
	fputs("</p>\n", h);
	fprintf(p->md.f, "# ");
	md_esc(p->md.f, title);
	fprintf(p->md.f, "\n\n");
	md_esc(p->md.f, subtitle);
	fprintf(p->md.f, "\n");
	return 0;
}

void hs_page_section(hs_page *p, const char *title)
{
	fputs("<h2>", p->html.f);
	html_esc(p->html.f, title);
	fputs("</h2>\n", p->html.f);
	fprintf(p->md.f, "\n## ");
	md_esc(p->md.f, title);
	fprintf(p->md.f, "\n\n");
}

void hs_page_para(hs_page *p, const char *text)
{
	fputs("<p>", p->html.f);
	html_esc(p->html.f, text);
	fputs("</p>\n", p->html.f);
	md_esc(p->md.f, text);
	fprintf(p->md.f, "\n\n");
}

void hs_page_table(hs_page *p, int ncols, const char *const *head)
{
	p->ncols = ncols;
	fputs("<table><tr>", p->html.f);
	fputs("\n|", p->md.f);
	for (int i = 0; i < ncols; i++) {
		fputs("<th>", p->html.f);
		html_esc(p->html.f, head[i]);
		fputs("</th>", p->html.f);
		fputc(' ', p->md.f);
		md_esc(p->md.f, head[i]);
		fputs(" |", p->md.f);
	}
	fputs("</tr>\n", p->html.f);
	fputs("\n|", p->md.f);
	for (int i = 0; i < ncols; i++)
		fputs(i ? "---:|" : "---|", p->md.f);
	fputc('\n', p->md.f);
}

void hs_page_row(hs_page *p, const char *const *cells)
{
	fputs("<tr>", p->html.f);
	fputc('|', p->md.f);
	for (int i = 0; i < p->ncols; i++) {
		const char *c = cells[i] ? cells[i] : "";
		char *end;
		strtod(c, &end);
		int numeric = *c && end != c && (*end == 0 || strcmp(end, "%") == 0);
		fputs(numeric ? "<td class=\"n\">" : "<td>", p->html.f);
		html_esc(p->html.f, cells[i] ? cells[i] : "");
		fputs("</td>", p->html.f);
		fputc(' ', p->md.f);
		md_esc(p->md.f, cells[i] ? cells[i] : "");
		fputs(" |", p->md.f);
	}
	fputs("</tr>\n", p->html.f);
	fputc('\n', p->md.f);
}

void hs_page_table_end(hs_page *p)
{
	fputs("</table>\n", p->html.f);
	fputc('\n', p->md.f);
}

static void base64(FILE *out, FILE *in)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char b[3];
	size_t n;
	while ((n = fread(b, 1, 3, in)) > 0) {
		unsigned v = (unsigned)b[0] << 16 | (n > 1 ? (unsigned)b[1] << 8 : 0) | (n > 2 ? b[2] : 0);
		fputc(tab[v >> 18 & 63], out);
		fputc(tab[v >> 12 & 63], out);
		fputc(n > 1 ? tab[v >> 6 & 63] : '=', out);
		fputc(n > 2 ? tab[v & 63] : '=', out);
	}
}

void hs_page_figure(hs_page *p, const char *image, const char *caption)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", p->dir, image);
	const char *ext = strrchr(image, '.');
	int svg = ext && strcmp(ext, ".svg") == 0;
	fprintf(p->html.f, "<figure><img alt=\"");
	html_esc(p->html.f, caption);
	fprintf(p->html.f, "\" src=\"data:image/%s;base64,", svg ? "svg+xml" : "png");
	FILE *in = fopen(path, "rb");
	if (in) {
		base64(p->html.f, in);
		fclose(in);
	}
	fputs("\"><figcaption>", p->html.f);
	html_esc(p->html.f, caption);
	fputs("</figcaption></figure>\n", p->html.f);
	fprintf(p->md.f, "![");
	md_esc(p->md.f, caption);
	fprintf(p->md.f, "](%s)\n\n", image);
}

int hs_page_close(hs_page *p, hs_err *err)
{
	fputs("<p class=\"sub\">Written by hetsim report. Data and gnuplot scripts of every figure are in data/.</p>\n"
	      "</body></html>\n", p->html.f);
	if (hs_outfile_commit(&p->html, err)) {
		hs_outfile_abort(&p->md);
		return -1;
	}
	return hs_outfile_commit(&p->md, err);
}

void hs_page_abort(hs_page *p)
{
	hs_outfile_abort(&p->html);
	hs_outfile_abort(&p->md);
}
