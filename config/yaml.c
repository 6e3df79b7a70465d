#include "config/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "sim/base/alloc.h"
#include "sim/base/file.h"

/* Nodes are allocated in one list owned by the document and freed together. */
struct hs_ydoc {
	char *name;
	hs_ynode *root;
	hs_ynode **all;
	size_t nall, capall;
	char **names; /* extra file names (for --set) kept alive with the doc */
	size_t nnames, capnames;
};

static hs_ynode *node_new(hs_ydoc *d, enum hs_ykind k, const char *file, int line, int col)
{
	hs_ynode *n = hs_xcalloc(1, sizeof *n);
	n->kind = k;
	n->file = file;
	n->line = line;
	n->col = col;
	hs_xgrow(&d->all, &d->capall, d->nall + 1, sizeof *d->all);
	d->all[d->nall++] = n;
	return n;
}

static void node_push(hs_ynode *p, hs_ynode *key, hs_ynode *val)
{
	size_t n = p->n + 1;
	p->vals = hs_xrealloc(p->vals, n * sizeof *p->vals);
	if (p->kind == HS_Y_MAP)
		p->keys = hs_xrealloc(p->keys, n * sizeof *p->keys);
	if (key)
		p->keys[p->n] = key;
	p->vals[p->n] = val;
	p->n = n;
}

void hs_yaml_free(hs_ydoc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nall; i++) {
		if (!d->all[i]->borrowed)
			free(d->all[i]->str);
		free(d->all[i]->keys);
		free(d->all[i]->vals);
		free(d->all[i]);
	}
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	free(d->all);
	free(d->name);
	free(d);
}

hs_ynode *hs_yaml_root(hs_ydoc *d) { return d->root; }

int hs_yaml_is_null(const hs_ynode *n)
{
	return n && n->kind == HS_Y_SCALAR && !n->quoted &&
	       (n->str[0] == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 || strcmp(n->str, "Null") == 0 ||
		strcmp(n->str, "NULL") == 0);
}

void hs_yaml_freeze(hs_ydoc *d)
{
	for (size_t i = 0; i < d->nall; i++)
		d->all[i]->frozen = 1;
}

/* An overlay holds only its root at first (the source's, frozen); its own nodes are the copies hs_yaml_set makes
 * (thaw) and the values it adds, all in `all` and freed with it, never the shared ones. */
hs_ydoc *hs_yaml_overlay(const hs_ydoc *src)
{
	hs_ydoc *d = hs_xcalloc(1, sizeof *d);
	d->name = hs_xstrdup(src->name);
	d->root = src->root;
	return d;
}

/* The overlay's own copy of a frozen node, to change: its children stay shared, and so do its string and file
 * name (the source outlives the overlay). */
static hs_ynode *thaw(hs_ydoc *d, const hs_ynode *n)
{
	hs_ynode *c = node_new(d, n->kind, n->file, n->line, n->col);
	c->quoted = n->quoted;
	c->used = n->used;
	c->str = n->str;
	c->borrowed = n->str != NULL;
	if (n->n) {
		c->vals = hs_xmalloc(n->n * sizeof *c->vals);
		memcpy(c->vals, n->vals, n->n * sizeof *c->vals);
		if (n->kind == HS_Y_MAP) {
			c->keys = hs_xmalloc(n->n * sizeof *c->keys);
			memcpy(c->keys, n->keys, n->n * sizeof *c->keys);
		}
		c->n = n->n;
	}
	return c;
}

const char *hs_yaml_name(const hs_ydoc *d) { return d->name; }

hs_ynode *hs_yaml_get(const hs_ynode *m, const char *key)
{
	if (!m || m->kind != HS_Y_MAP)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->keys[i]->str, key) == 0)
			return m->vals[i];
	return NULL;
}

/* Recursive-descent over libyaml events. depth guards against stack exhaustion on hostile input. */
struct parser {
	yaml_parser_t p;
	hs_ydoc *d;
	const char *file;
	hs_err *err;
};

static int perr(struct parser *ps, const yaml_mark_t *m, const char *what)
{
	return hs_err_set(ps->err, HS_EINPUT, "%s:%zu:%zu: %s", ps->file, m->line + 1, m->column + 1, what);
}

static int next(struct parser *ps, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&ps->p, ev)) {
		const yaml_mark_t *m = &ps->p.problem_mark;
		char buf[512];
		snprintf(buf, sizeof buf, "malformed YAML: %s%s%s", ps->p.problem ? ps->p.problem : "syntax error",
			 ps->p.context ? " " : "", ps->p.context ? ps->p.context : "");
		return perr(ps, m, buf);
	}
	return 0;
}

static hs_ynode *parse_node(struct parser *ps, yaml_event_t *ev, int depth);

static hs_ynode *parse_children(struct parser *ps, hs_ynode *n, yaml_event_type_t end, int depth)
{
	for (;;) {
		yaml_event_t ev;
		if (next(ps, &ev))
			return NULL;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return n;
		}
		hs_ynode *key = NULL;
		if (n->kind == HS_Y_MAP) {
			if (ev.type != YAML_SCALAR_EVENT) {
				perr(ps, &ev.start_mark, "a mapping key must be a plain scalar");
				yaml_event_delete(&ev);
				return NULL;
			}
			key = parse_node(ps, &ev, depth + 1);
			yaml_event_delete(&ev);
			if (!key)
				return NULL;
			if (hs_yaml_get(n, key->str)) {
				char buf[300];
				snprintf(buf, sizeof buf, "duplicate key '%.200s'", key->str);
				hs_err_set(ps->err, HS_EINPUT, "%s:%d:%d: %s", ps->file, key->line, key->col, buf);
				return NULL;
			}
			if (next(ps, &ev))
				return NULL;
		}
		hs_ynode *v = parse_node(ps, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!v)
			return NULL;
		node_push(n, key, v);
	}
}

static hs_ynode *parse_node(struct parser *ps, yaml_event_t *ev, int depth)
{
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	if (depth > 64) {
		perr(ps, &ev->start_mark, "nesting deeper than 64 levels");
		return NULL;
	}
	const yaml_char_t *anchor = ev->type == YAML_SCALAR_EVENT	       ? ev->data.scalar.anchor
				    : ev->type == YAML_MAPPING_START_EVENT  ? ev->data.mapping_start.anchor
				    : ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
									    : NULL;
	if (anchor) {
		perr(ps, &ev->start_mark, "YAML anchors (&name) are not supported in scenarios");
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		hs_ynode *n = node_new(ps->d, HS_Y_SCALAR, ps->file, line, col);
		n->str = hs_xstrdup((const char *)ev->data.scalar.value);
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		if (strlen(n->str) != ev->data.scalar.length) {
			perr(ps, &ev->start_mark, "scalar contains a NUL byte");
			return NULL;
		}
		return n;
	}
	case YAML_MAPPING_START_EVENT:
		return parse_children(ps, node_new(ps->d, HS_Y_MAP, ps->file, line, col), YAML_MAPPING_END_EVENT,
				      depth);
	case YAML_SEQUENCE_START_EVENT:
		return parse_children(ps, node_new(ps->d, HS_Y_SEQ, ps->file, line, col), YAML_SEQUENCE_END_EVENT,
				      depth);
	case YAML_ALIAS_EVENT:
		perr(ps, &ev->start_mark, "YAML aliases (*name) are not supported in scenarios");
		return NULL;
	default:
		perr(ps, &ev->start_mark, "unexpected YAML structure");
		return NULL;
	}
}

static int parse_doc(struct parser *ps)
{
	yaml_event_t ev;
	int state = 0; /* 0 before doc, 1 got root */
	for (;;) {
		if (next(ps, &ev))
			return -1;
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			if (state == 1) {
				perr(ps, &ev.start_mark, "more than one YAML document in the file");
				yaml_event_delete(&ev);
				return -1;
			}
			yaml_event_delete(&ev);
			continue;
		}
		ps->d->root = parse_node(ps, &ev, 0);
		yaml_event_delete(&ev);
		if (!ps->d->root)
			return -1;
		state = 1;
	}
	if (!ps->d->root) {
		ps->d->root = node_new(ps->d, HS_Y_MAP, ps->file, 1, 1); /* empty file: an empty mapping */
	}
	return 0;
}

static hs_ydoc *load(const unsigned char *text, size_t len, const char *name, hs_err *err)
{
	hs_ydoc *d = hs_xcalloc(1, sizeof *d);
	d->name = hs_xstrdup(name);
	struct parser ps = {.d = d, .file = d->name, .err = err};
	if (!yaml_parser_initialize(&ps.p)) {
		hs_err_set(err, HS_EINTERNAL, "%s: cannot initialise the YAML parser", name);
		hs_yaml_free(d);
		return NULL;
	}
	yaml_parser_set_input_string(&ps.p, text, len);
	int rc = parse_doc(&ps);
	yaml_parser_delete(&ps.p);
	if (rc) {
		hs_yaml_free(d);
		return NULL;
	}
	return d;
}

hs_ydoc *hs_yaml_load_string(const char *text, size_t len, const char *name, hs_err *err)
{
	return load((const unsigned char *)text, len, name, err);
}

hs_ydoc *hs_yaml_load_file(const char *path, hs_err *err)
{
	size_t len;
	char *buf = hs_read_file(path, (size_t)64 << 20, "a scenario", &len, err);
	if (!buf)
		return NULL;
	hs_ydoc *d = load((unsigned char *)buf, len, path, err);
	free(buf);
	return d;
}

int hs_yaml_set_all(hs_ydoc *d, const char *const *assignments, int n, hs_err *err)
{
	for (int i = 0; i < n; i++)
		if (hs_yaml_set(d, assignments[i], err))
			return -1;
	return 0;
}

hs_ydoc *hs_yaml_load_file_set(const char *path, const char *const *assignments, int n, hs_err *err)
{
	hs_ydoc *d = hs_yaml_load_file(path, err);
	if (d && hs_yaml_set_all(d, assignments, n, err)) {
		hs_yaml_free(d);
		d = NULL;
	}
	return d;
}

/* --set: adopt the nodes of a parsed value document into `d`. */
static void adopt(hs_ydoc *d, hs_ydoc *v)
{
	hs_xgrow(&d->all, &d->capall, d->nall + v->nall, sizeof *d->all);
	for (size_t i = 0; i < v->nall; i++) {
		v->all[i]->file = d->names[d->nnames - 1];
		d->all[d->nall++] = v->all[i];
	}
	v->nall = 0;
	hs_yaml_free(v);
}

int hs_yaml_path_ok(const char *p, size_t n)
{
	size_t i = 0;
	for (;;) {
		size_t start = i;
		while (i < n && p[i] != '.' && p[i] != '[' && p[i] != ']')
			i++;
		if (i == start)
			return 0; /* an empty name */
		while (i < n && p[i] == '[') {
			size_t d = ++i;
			while (i < n && p[i] >= '0' && p[i] <= '9')
				i++;
			if (i == d || i == n || p[i] != ']')
				return 0;
			i++;
		}
		if (i == n)
			return 1;
		if (p[i] != '.')
			return 0; /* a stray ']', or text right after [N] */
		i++;
	}
}

/* The node at *slot (a child of a node of d's own, or d's root), made d's own to change: a frozen mapping or list
 * is copied there first. A scalar is only read (or replaced whole in its parent), so it stays shared. */
static hs_ynode *own(hs_ydoc *d, hs_ynode **slot)
{
	if ((*slot)->frozen && (*slot)->kind != HS_Y_SCALAR)
		*slot = thaw(d, *slot);
	return *slot;
}

int hs_yaml_set(hs_ydoc *d, const char *asg, hs_err *err)
{
	const char *eq = strchr(asg, '=');
	if (!eq || eq == asg)
		return hs_err_set(err, HS_EINPUT, "--set %s: expected path.to.key=value", asg);
	/* checked before the brackets are turned into dots below, which would read sim]ulation as simulation */
	if (!hs_yaml_path_ok(asg, (size_t)(eq - asg)))
		return hs_err_set(err, HS_EINPUT,
				  "--set %.*s: not a key path (expected names joined by '.', with [N] or .N for a list "
				  "item, such as cluster.groups[0].nodes)", (int)(eq - asg), asg);
	hs_xgrow(&d->names, &d->capnames, d->nnames + 1, sizeof *d->names);
	size_t plen = (size_t)(eq - asg);
	char *label = hs_xmalloc(plen + 7); /* "--set PATH" */
	memcpy(label, "--set ", 6);
	memcpy(label + 6, asg, plen);
	label[plen + 6] = 0;
	d->names[d->nnames++] = label;

	const char *val = eq + 1;
	/* A plain word or number needs no YAML parser (a sweep applies thousands of these). */
	int plain = val[0] != 0 && val[0] != ' ' && val[0] != '-' && val[0] != '?';
	for (const char *c = val; plain && *c; c++)
		if (strchr("{}[],:#&*!|>'\"%@`\t\n\r", *c) || (c[0] == ' ' && c[1] == 0))
			plain = 0;
	hs_ynode *vroot;
	if (plain) {
		/* the scalar goes straight into d, as adopt would put it there (positioned at the label) */
		vroot = node_new(d, HS_Y_SCALAR, label, 1, 1);
		vroot->str = hs_xstrdup(val);
	} else {
		hs_ydoc *v = load((const unsigned char *)val, strlen(val), label, err);
		if (!v)
			return -1;
		vroot = v->root;
		if (!vroot || (vroot->kind == HS_Y_MAP && vroot->n == 0 && *val == 0)) {
			/* "key=" sets an empty string */
			vroot = node_new(v, HS_Y_SCALAR, label, 1, 1);
			vroot->str = hs_xstrdup("");
			vroot->quoted = 1;
		}
		adopt(d, v);
	}

	/* the path as messages write it (cluster.groups[0].nic) or dotted (cluster.groups.0.nic): [N] is .N */
	char *path = hs_xmalloc(2 * (plen + 1)), *whole = path + plen + 1; /* one block, freed as path */
	size_t pl = 0;
	for (size_t i = 0; i < plen; i++)
		if (asg[i] == '[')
			path[pl++] = '.';
		else if (asg[i] != ']')
			path[pl++] = asg[i];
	path[pl] = 0;
	memcpy(whole, path, pl + 1); /* strtok_r cuts path; messages quote prefixes of this */
	hs_ynode *cur = own(d, &d->root);
	char *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(path, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		int last = save == NULL || *save == 0;
		if (cur->kind == HS_Y_SEQ) {
			char *end;
			long idx = strtol(tok, &end, 10);
			if (*end || idx < 0 || (size_t)idx >= cur->n) {
				rc = hs_err_set(err, HS_EINPUT, "%s: '%s' is not an index of the list at %s:%d:%d (0..%zu)",
						label, tok, cur->file, cur->line, cur->col, cur->n ? cur->n - 1 : 0);
				break;
			}
			if (last)
				cur->vals[idx] = vroot;
			cur = own(d, &cur->vals[idx]);
			continue;
		}
		if (cur->kind != HS_Y_MAP) {
			/* the way out: set the scalar's key whole, as a mapping; a model or a GPU named by a preset keeps it
			 * under `preset` / `base` (model: llama3-8b -> model={preset: llama3-8b, layers: 8}) */
			int upto = (int)(tok - path) - 1;
			const char *key = upto > 0 ? whole + upto : whole;
			while (key > whole && key[-1] != '.')
				key--;
			const char *pk = strncmp(key, "model.", 6) == 0 ? "preset" : strncmp(key, "gpu.", 4) == 0 ? "base" : NULL;
			if (pk)
				rc = hs_err_set(err, HS_EINPUT,
						"%s: '%s' descends into a scalar ('%s' at %s:%d:%d; set it whole as a mapping: "
						"--set '%.*s={%s: %s, %s: ...}')",
						label, tok, cur->str ? cur->str : "", cur->file, cur->line, cur->col,
						upto > 0 ? upto : 0, whole, pk, cur->str ? cur->str : "NAME", tok);
			else
				rc = hs_err_set(err, HS_EINPUT, "%s: '%s' descends into a scalar ('%s' at %s:%d:%d)", label,
						tok, cur->str ? cur->str : "", cur->file, cur->line, cur->col);
			break;
		}
		size_t i;
		for (i = 0; i < cur->n; i++)
			if (strcmp(cur->keys[i]->str, tok) == 0)
				break;
		if (i == cur->n) {
			hs_ynode *k = node_new(d, HS_Y_SCALAR, label, 1, 1);
			k->str = hs_xstrdup(tok);
			hs_ynode *nv = last ? vroot : node_new(d, HS_Y_MAP, label, 1, 1);
			node_push(cur, k, nv);
			cur = nv;
			continue;
		}
		if (last)
			cur->vals[i] = vroot;
		cur = own(d, &cur->vals[i]);
	}
	free(path);
	return rc;
}
