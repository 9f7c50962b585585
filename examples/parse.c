/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * parse.c - the jitcalc language: source text to tree IR.
 *
 *   fn NAME(a, b) { var x = a * 2; while (x > b) { x = x - 1; } return x; }
 *
 * Integers are 64-bit and wrap; operators + - * / % == != < <= > >= unary
 * - and ! (comparisons give 0 or 1; x / 0 and x % 0 are 0, so no program
 * can trap); statements: var, assignment, if/else, while, return, calls
 * (recursion included, up to 6 arguments); '#' starts a comment.
 * Variables are function-wide.  A function that falls off its end returns
 * 0.  Errors are reported once as "file:line: what is wrong" in p->err.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

/* ---- lexer */

enum tok { T_EOF, T_NUM, T_IDENT, T_PUNCT, T_ERR };

struct parser {
	struct jc_prog *p;
	const char *file, *s;
	int line;
	enum tok tok;
	int punct;         /* character, or JC_OP_* for two-character operators */
	int64_t num;
	char ident[64];
	int tok_line;
	struct jc_func *fn;
	int failed;
};

static int error(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int error(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->failed++)
		return -EINVAL;
	n = snprintf(ps->p->err, sizeof(ps->p->err), "%s:%d: ", ps->file, ps->tok_line);
	va_start(ap, fmt);
	vsnprintf(ps->p->err + n, sizeof(ps->p->err) - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void next(struct parser *ps)
{
	const char *s = ps->s;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
			if (*s++ == '\n')
				ps->line++;
		if (*s != '#')
			break;
		while (*s && *s != '\n')
			s++;
	}
	ps->tok_line = ps->line;
	if (!*s) {
		ps->tok = T_EOF;
	} else if (isdigit((unsigned char)*s)) {
		uint64_t v = 0;

		ps->tok = T_NUM;
		while (isdigit((unsigned char)*s)) {
			if (v > (uint64_t)INT64_MAX / 10 ||
			    v * 10 + (uint64_t)(*s - '0') > (uint64_t)INT64_MAX) {
				error(ps, "number too large");
				ps->tok = T_ERR;
			}
			v = v * 10 + (uint64_t)(*s++ - '0');
		}
		ps->num = (int64_t)v;
	} else if (isalpha((unsigned char)*s) || *s == '_') {
		size_t n = 0;

		ps->tok = T_IDENT;
		while (isalnum((unsigned char)*s) || *s == '_') {
			if (n + 1 >= sizeof(ps->ident)) {
				error(ps, "name too long");
				ps->tok = T_ERR;
				break;
			}
			ps->ident[n++] = *s++;
		}
		ps->ident[n] = 0;
	} else {
		static const struct { char two[3]; int op; } ops[] = {
			{ "==", JC_OP_EQ }, { "!=", JC_OP_NE }, { "<=", JC_OP_LE }, { ">=", JC_OP_GE },
		};
		ps->tok = T_PUNCT;
		ps->punct = (unsigned char)*s;
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			if (s[0] == ops[i].two[0] && s[1] == ops[i].two[1]) {
				ps->punct = ops[i].op;
				s++;
			}
		s++;
		if (!strchr("(){},;=+-*/%<>!", ps->punct) && ps->punct < 256) {
			if (isprint(ps->punct))
				error(ps, "unexpected character '%c'", ps->punct);
			else
				error(ps, "unexpected byte 0x%02x", ps->punct);
			ps->tok = T_ERR;
		}
	}
	ps->s = s;
}

static int is_punct(struct parser *ps, int c)
{
	return ps->tok == T_PUNCT && ps->punct == c;
}

static int is_word(struct parser *ps, const char *w)
{
	return ps->tok == T_IDENT && !strcmp(ps->ident, w);
}

static int expect(struct parser *ps, int c)
{
	if (!is_punct(ps, c))
		return error(ps, "expected '%c'", c);
	next(ps);
	return 0;
}

/* ---- IR construction */

static struct jc_node *node(struct parser *ps, enum jc_kind kind)
{
	struct jc_node *n = jc_alloc(ps->p, sizeof(*n));

	if (!n) {
		error(ps, "out of memory");
		return NULL;
	}
	n->kind = kind;
	n->line = ps->tok_line;
	return n;
}

static char *dup(struct parser *ps, const char *s)
{
	char *d = jc_alloc(ps->p, strlen(s) + 1);

	return d ? strcpy(d, s) : NULL;
}

static int find_slot(struct jc_func *f, const char *name)
{
	for (int i = 0; i < f->nslots; i++)
		if (f->slot_names[i] && !strcmp(f->slot_names[i], name))
			return i;
	return -1;
}

static int new_slot(struct parser *ps, const char *name)
{
	struct jc_func *f = ps->fn;
	char **names;

	if (name && find_slot(f, name) >= 0)
		return error(ps, "'%s' is already defined in '%s'", name, f->name);
	names = jc_alloc(ps->p, (f->nslots + 1) * sizeof(*names));
	if (!names)
		return error(ps, "out of memory");
	if (f->nslots)
		memcpy(names, f->slot_names, f->nslots * sizeof(*names));
	names[f->nslots] = name ? dup(ps, name) : NULL;
	f->slot_names = names;
	return f->nslots++;
}

/* Append n to a growing array of nodes (block statements, call arguments). */
static int push(struct parser *ps, struct jc_node *list, struct jc_node *n)
{
	struct jc_node **a;

	if (!n)
		return -EINVAL;
	a = jc_alloc(ps->p, (list->nargs + 1) * sizeof(*a));
	if (!a)
		return error(ps, "out of memory");
	if (list->nargs)
		memcpy(a, list->args, list->nargs * sizeof(*a));
	a[list->nargs++] = n;
	list->args = a;
	return 0;
}

static struct jc_node *expr(struct parser *ps);

static struct jc_node *primary(struct parser *ps)
{
	struct jc_node *n;

	if (ps->tok == T_NUM) {
		if ((n = node(ps, JC_NUM)))
			n->num = ps->num;
		next(ps);
		return n;
	}
	if (is_punct(ps, '(')) {
		next(ps);
		n = expr(ps);
		return expect(ps, ')') ? NULL : n;
	}
	if (ps->tok != T_IDENT) {
		error(ps, "expected a number, a name or '('");
		return NULL;
	}
	if (!(n = node(ps, JC_VAR)))
		return NULL;
	n->callee_name = dup(ps, ps->ident);
	next(ps);
	if (!is_punct(ps, '(')) {
		n->slot = find_slot(ps->fn, n->callee_name);
		if (n->slot < 0) {
			error(ps, "unknown variable '%s'", n->callee_name);
			return NULL;
		}
		return n;
	}
	n->kind = JC_CALL;
	next(ps);
	if (!is_punct(ps, ')'))
		do {
			if (push(ps, n, expr(ps)))
				return NULL;
		} while (is_punct(ps, ',') && (next(ps), 1));
	return expect(ps, ')') ? NULL : n;
}

static struct jc_node *unary(struct parser *ps)
{
	struct jc_node *n;

	if (!is_punct(ps, '-') && !is_punct(ps, '!'))
		return primary(ps);
	if (!(n = node(ps, JC_UNARY)))
		return NULL;
	n->op = ps->punct;
	next(ps);
	n->a = unary(ps);
	return n->a ? n : NULL;
}

/* Precedence climbing over the binary operators, loosest first. */
static const int levels[][5] = {
	{ JC_OP_EQ, JC_OP_NE },
	{ '<', '>', JC_OP_LE, JC_OP_GE },
	{ '+', '-' },
	{ '*', '/', '%' },
};

static int at_level(struct parser *ps, int level)
{
	for (int i = 0; i < 5 && levels[level][i]; i++)
		if (is_punct(ps, levels[level][i]))
			return 1;
	return 0;
}

static struct jc_node *binary(struct parser *ps, int level)
{
	struct jc_node *left;

	if (level == (int)(sizeof(levels) / sizeof(levels[0])))
		return unary(ps);
	left = binary(ps, level + 1);
	while (left && at_level(ps, level)) {
		struct jc_node *n = node(ps, JC_BINARY);

		if (!n)
			return NULL;
		n->op = ps->punct;
		next(ps);
		n->a = left;
		n->b = binary(ps, level + 1);
		left = n->b ? n : NULL;
	}
	return left;
}

static struct jc_node *expr(struct parser *ps)
{
	return binary(ps, 0);
}

static struct jc_node *block(struct parser *ps);

/* NAME = ...: look one token ahead and come back */
static int assignment_ahead(struct parser *ps)
{
	struct parser save = *ps;
	int yes;

	if (ps->tok != T_IDENT)
		return 0;
	next(ps);
	yes = is_punct(ps, '=');
	*ps = save;
	return yes;
}

static struct jc_node *statement(struct parser *ps)
{
	struct jc_node *n;

	if (is_punct(ps, '{'))
		return block(ps);
	if (is_word(ps, "if") || is_word(ps, "while")) {
		if (!(n = node(ps, is_word(ps, "if") ? JC_IF : JC_WHILE)))
			return NULL;
		next(ps);
		if (expect(ps, '(') || !(n->a = expr(ps)) || expect(ps, ')'))
			return NULL;
		if (!(n->b = statement(ps)))
			return NULL;
		if (n->kind == JC_IF && is_word(ps, "else")) {
			next(ps);
			if (!(n->c = statement(ps)))
				return NULL;
		}
		return n;
	}
	if (is_word(ps, "return")) {
		if (!(n = node(ps, JC_RETURN)))
			return NULL;
		next(ps);
		n->a = expr(ps);
	} else if (is_word(ps, "var")) {
		if (!(n = node(ps, JC_ASSIGN)))
			return NULL;
		next(ps);
		if (ps->tok != T_IDENT) {
			error(ps, "expected a variable name after 'var'");
			return NULL;
		}
		if ((n->slot = new_slot(ps, ps->ident)) < 0)
			return NULL;
		next(ps);
		if (expect(ps, '='))
			return NULL;
		n->a = expr(ps);
	} else if (assignment_ahead(ps)) {
		if (!(n = node(ps, JC_ASSIGN)))
			return NULL;
		if ((n->slot = find_slot(ps->fn, ps->ident)) < 0) {
			error(ps, "unknown variable '%s'", ps->ident);
			return NULL;
		}
		next(ps);
		next(ps);
		n->a = expr(ps);
	} else {
		if (!(n = node(ps, JC_EXPR)))
			return NULL;
		n->a = expr(ps);
	}
	if (!n->a || expect(ps, ';'))
		return NULL;
	return n;
}

static struct jc_node *block(struct parser *ps)
{
	struct jc_node *b = node(ps, JC_BLOCK);

	if (!b || expect(ps, '{'))
		return NULL;
	while (!is_punct(ps, '}')) {
		if (ps->tok == T_EOF) {
			error(ps, "missing '}' at end of file");
			return NULL;
		}
		if (push(ps, b, statement(ps)))
			return NULL;
	}
	next(ps);
	return b;
}

static struct jc_func *new_func(struct parser *ps, const char *name)
{
	struct jc_prog *p = ps->p;
	struct jc_func *f, **fn;

	if (jc_find(p, name)) {
		error(ps, "function '%s' is already defined", name);
		return NULL;
	}
	fn = realloc(p->fn, (p->nfn + 1) * sizeof(*fn));
	f = jc_alloc(p, sizeof(*f));
	if (!fn || !f) {
		if (fn)
			p->fn = fn;
		error(ps, "out of memory");
		return NULL;
	}
	p->fn = fn;
	fn[p->nfn++] = f;
	f->name = dup(ps, name);
	f->file = dup(ps, ps->file);
	f->line = ps->tok_line;
	if (!f->name || !f->file) {
		error(ps, "out of memory");
		return NULL;
	}
	return ps->fn = f;
}

/* Every function ends with "return 0", so all paths reach a return. */
static int add_final_return(struct parser *ps, struct jc_func *f)
{
	struct jc_node *r = node(ps, JC_RETURN);

	if (!r || !(r->a = node(ps, JC_NUM)))
		return -ENOMEM;
	return push(ps, f->body, r);
}

static int function(struct parser *ps)
{
	struct jc_func *f;

	next(ps);
	if (ps->tok != T_IDENT)
		return error(ps, "expected a function name after 'fn'");
	if (!(f = new_func(ps, ps->ident)))
		return -EINVAL;
	next(ps);
	if (expect(ps, '('))
		return -EINVAL;
	if (!is_punct(ps, ')'))
		do {
			if (ps->tok != T_IDENT)
				return error(ps, "expected a parameter name");
			if (f->nparams == JC_MAX_PARAMS)
				return error(ps, "more than %d parameters", JC_MAX_PARAMS);
			if (new_slot(ps, ps->ident) < 0)
				return -EINVAL;
			f->nparams++;
			next(ps);
		} while (is_punct(ps, ',') && (next(ps), 1));
	if (expect(ps, ')') || !(f->body = block(ps)))
		return -EINVAL;
	return add_final_return(ps, f);
}

int jc_parse(struct jc_prog *p, const char *text, const char *file)
{
	struct parser ps = { .p = p, .file = file, .s = text, .line = 1 };

	next(&ps);
	while (ps.tok != T_EOF && !ps.failed) {
		if (!is_word(&ps, "fn"))
			return error(&ps, "expected 'fn' to start a function");
		if (function(&ps))
			return -EINVAL;
	}
	return ps.failed ? -EINVAL : 0;
}

/* -e EXPR: a function NAME() { return EXPR; } */
int jc_parse_expr(struct jc_prog *p, const char *name, const char *text, const char *file)
{
	struct parser ps = { .p = p, .file = file, .s = text, .line = 1 };
	struct jc_func *f;
	struct jc_node *r;

	next(&ps);
	if (!(f = new_func(&ps, name)) || !(f->body = node(&ps, JC_BLOCK)) ||
	    !(r = node(&ps, JC_RETURN)) || !(r->a = expr(&ps)) || push(&ps, f->body, r))
		return -EINVAL;
	if (ps.tok != T_EOF)
		return error(&ps, "unexpected text after the expression");
	return add_final_return(&ps, f);
}

static int resolve(struct jc_prog *p, struct jc_func *f, struct jc_node *n)
{
	if (!n)
		return 0;
	if (n->kind == JC_CALL) {
		n->callee = jc_find(p, n->callee_name);
		if (!n->callee)
			return snprintf(p->err, sizeof(p->err), "%s:%d: unknown function '%s'",
					f->file, n->line, n->callee_name), -EINVAL;
		if (n->callee->nparams != n->nargs)
			return snprintf(p->err, sizeof(p->err),
					"%s:%d: '%s' takes %d arguments, not %d", f->file, n->line,
					n->callee_name, n->callee->nparams, n->nargs), -EINVAL;
	}
	for (int i = 0; i < n->nargs; i++)
		if (resolve(p, f, n->args[i]))
			return -EINVAL;
	return resolve(p, f, n->a) || resolve(p, f, n->b) || resolve(p, f, n->c) ? -EINVAL : 0;
}

/* Resolve calls once every function is known (so calls may go forward). */
int jc_parse_finish(struct jc_prog *p)
{
	for (int i = 0; i < p->nfn; i++)
		if (resolve(p, p->fn[i], p->fn[i]->body))
			return -EINVAL;
	return 0;
}
