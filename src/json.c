/* json.c — payload validation, canonical JSON (RFC 8785, JCS) and SHA-256 fingerprints.
 *
 * Payloads are read by our own two-pass reader over the original text, not by jansson:
 * jansson refuses valid documents (integers beyond 64 bits, "\u0000") and cannot keep an
 * integer's digits, and a fingerprint must not depend on a parser's limits.
 *
 *   pass 1 (parse_*)  validates the whole text against RFC 8259 and records where every
 *                     object and array ends (in document order), so that pass 2 can step
 *                     over a value without reading it again;
 *   pass 2 (emit_*)   writes the canonical form: RFC 8785 (members sorted by the UTF-16
 *                     code units of their names, no white space, ES6 number form, the
 *                     minimal string escapes), with two documented choices JCS leaves
 *                     open or forbids:
 *                       - an integer literal (no fraction, no exponent) keeps all its
 *                         digits ("-0" is written "0"); JCS would round those beyond 2^53
 *                         to a double. Within ±2^53 both forms are the same;
 *                       - a number beyond the double range (1e400) is written exactly in
 *                         the ES6 exponent form ("1e+400"), and a lone surrogate escape
 *                         stays an escape ("\udc00"): JCS has no form for either.
 *
 * Duplicate member names are refused: RFC 8259 leaves their meaning to each parser, and a
 * fingerprint must not depend on which one wins. Nesting is limited to 256 levels, which
 * RFC 8259 §9 allows: the parser recurses once per level, and a caller's thread may have a
 * small stack (2048 levels, jansson's limit, overflowed an 8 MiB stack in the sanitizer
 * build: found by tests/fuzz).
 *
 * The old canonical form (jansson, sorted keys, %.17g reals) survives only inside
 * wq__fingerprint_legacy, for comparisons with fingerprints stored before version 0.2. */
#include "internal.h"

#include <errno.h>
#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 256

/* ------------------------------------------------------------- pass 1 ---- */

struct span {
	size_t start, end; /* of an object or array: its '{' or '[', one past its '}' or ']' */
};

struct parser {
	const unsigned char *s;
	size_t n, i;         /* text, its length, the read position */
	int depth;
	struct span *cont;   /* owned; the containers in document order (start ascending) */
	size_t ncont, cap;
	wq_error *err;
};

/* The error at byte offset `at`, as "line L, column C" (1-based; columns count
 * characters, not bytes). */
static wq_rc perr(const struct parser *p, size_t at, const char *what)
{
	size_t line = 1, col = 1;

	for (size_t k = 0; k < at && k < p->n; k++) {
		if (p->s[k] == '\n') {
			line++;
			col = 1;
		} else if ((p->s[k] & 0xC0) != 0x80) {
			col++;
		}
	}
	return wq__err(p->err, WQ_EINVAL, "invalid JSON payload at line %zu, column %zu: %s",
		       line, col, what);
}

static void skip_ws(const unsigned char *s, size_t n, size_t *i)
{
	while (*i < n && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\n' || s[*i] == '\r'))
		(*i)++;
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 16-bit value of 4 hex digits at s, or -1. */
static long hex4(const unsigned char *s)
{
	long v = 0;

	for (int k = 0; k < 4; k++) {
		int h = hex_value(s[k]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}


static wq_rc parse_value(struct parser *p);

static wq_rc parse_string(struct parser *p)
{
	const unsigned char *s = p->s;
	size_t i = p->i + 1, l;

	while (i < p->n) {
		unsigned char c = s[i];
		if (c == '"') {
			p->i = i + 1;
			return WQ_OK;
		}
		if (c < 0x20)
			return perr(p, i, c == 0 ? "NUL byte in a string (write it as \\u0000)"
						 : "control character in a string (escape it)");
		if (c == '\\') {
			if (i + 1 >= p->n)
				break;
			if (s[i + 1] == 'u') {
				if (i + 6 > p->n || hex4(s + i + 2) < 0)
					return perr(p, i, "invalid \\u escape (four hex digits expected)");
				i += 6;
			} else if (s[i + 1] && strchr("\"\\/bfnrt", s[i + 1])) {
				i += 2;
			} else {
				return perr(p, i, "invalid escape in a string");
			}
			continue;
		}
		if (!(l = wq__utf8_seq((const unsigned char *)s + i, p->n - i)))
			return perr(p, i, "invalid UTF-8 in a string");
		i += l;
	}
	return perr(p, p->n, "unterminated string");
}

/* RFC 8259 §6: -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)? */
static wq_rc parse_number(struct parser *p)
{
	const unsigned char *s = p->s;
	size_t i = p->i, n = p->n;

	if (s[i] == '-')
		i++;
	if (i >= n || !is_digit(s[i]))
		return perr(p, i, "invalid number (a digit must follow '-')");
	if (s[i] == '0')
		i++;
	else
		while (i < n && is_digit(s[i]))
			i++;
	if (i < n && s[i] == '.') {
		if (++i >= n || !is_digit(s[i]))
			return perr(p, i, "invalid number (a digit must follow '.')");
		while (i < n && is_digit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !is_digit(s[i]))
			return perr(p, i, "invalid number (the exponent has no digits)");
		while (i < n && is_digit(s[i]))
			i++;
	}
	p->i = i;
	return WQ_OK;
}

static wq_rc parse_literal(struct parser *p, const char *word)
{
	size_t len = strlen(word);

	if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0)
		return perr(p, p->i, "invalid literal (true, false or null expected)");
	p->i += len;
	return WQ_OK;
}

static wq_rc parse_container(struct parser *p)
{
	unsigned char open = p->s[p->i], close = open == '{' ? '}' : ']';
	size_t slot;
	wq_rc rc;

	if (p->depth >= JSON_MAX_DEPTH)
		return perr(p, p->i, "nested deeper than 256 levels");
	if (p->ncont == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct span *grown = realloc(p->cont, cap * sizeof *grown);
		if (!grown)
			return wq__err(p->err, WQ_ENOMEM, "out of memory reading JSON");
		p->cont = grown;
		p->cap = cap;
	}
	slot = p->ncont++;
	p->cont[slot].start = p->i++;
	p->depth++;
	skip_ws(p->s, p->n, &p->i);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		goto done;
	}
	for (;;) {
		if (open == '{') {
			skip_ws(p->s, p->n, &p->i);
			if (p->i >= p->n || p->s[p->i] != '"')
				return perr(p, p->i, "a string (an object member's name) expected");
			if ((rc = parse_string(p)) != WQ_OK)
				return rc;
			skip_ws(p->s, p->n, &p->i);
			if (p->i >= p->n || p->s[p->i] != ':')
				return perr(p, p->i, "':' expected after a member name");
			p->i++;
		}
		if ((rc = parse_value(p)) != WQ_OK)
			return rc;
		skip_ws(p->s, p->n, &p->i);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == close) {
			p->i++;
			break;
		}
		return perr(p, p->i, open == '{' ? "',' or '}' expected" : "',' or ']' expected");
	}
done:
	p->depth--;
	p->cont[slot].end = p->i;
	return WQ_OK;
}

static wq_rc parse_value(struct parser *p)
{
	skip_ws(p->s, p->n, &p->i);
	if (p->i >= p->n)
		return perr(p, p->i, "unexpected end of text (a value expected)");
	switch (p->s[p->i]) {
	case '{':
	case '[':
		return parse_container(p);
	case '"':
		return parse_string(p);
	case 't':
		return parse_literal(p, "true");
	case 'f':
		return parse_literal(p, "false");
	case 'n':
		return parse_literal(p, "null");
	default:
		if (p->s[p->i] == '-' || is_digit(p->s[p->i]))
			return parse_number(p);
		return perr(p, p->i, "unexpected character (a value expected)");
	}
}

/* ------------------------------------------------------------- pass 2 ---- */

struct out {
	char *b;    /* owned, NUL-terminated */
	size_t len, cap;
};

struct emitter {
	const struct parser *p; /* validated text and its container spans */
	struct out o;
	wq_rc rc;               /* first failure */
	wq_error *err;
};

static void put(struct emitter *e, const void *d, size_t n)
{
	if (e->rc != WQ_OK)
		return;
	if (e->o.cap - e->o.len <= n) {
		size_t cap = e->o.cap ? e->o.cap : 256;
		char *grown;
		while (cap - e->o.len <= n)
			cap *= 2;
		grown = realloc(e->o.b, cap);
		if (!grown) {
			e->rc = wq__err(e->err, WQ_ENOMEM, "out of memory writing canonical JSON");
			return;
		}
		e->o.b = grown;
		e->o.cap = cap;
	}
	memcpy(e->o.b + e->o.len, d, n);
	e->o.len += n;
	e->o.b[e->o.len] = '\0';
}

static void puts_(struct emitter *e, const char *s)
{
	put(e, s, strlen(s));
}

/* One past the closing quote of the (validated) string whose opening quote is at i. */
static size_t string_end(const unsigned char *s, size_t i)
{
	for (i++; s[i] != '"'; i++)
		if (s[i] == '\\')
			i++; /* the escaped character; a \u's hex digits are no quotes */
	return i + 1;
}

/* One past the (validated) value that starts at i. */
static size_t value_end(const struct parser *p, size_t i)
{
	size_t lo = 0, hi = p->ncont;

	switch (p->s[i]) {
	case '{':
	case '[':
		while (lo < hi) { /* the span that starts at i */
			size_t mid = lo + (hi - lo) / 2;
			if (p->cont[mid].start < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		return p->cont[lo].end;
	case '"':
		return string_end(p->s, i);
	case 't':
	case 'n':
		return i + 4;
	case 'f':
		return i + 5;
	default:
		while (i < p->n && (is_digit(p->s[i]) || (p->s[i] && strchr("+-.eE", p->s[i]))))
			i++;
		return i;
	}
}

static unsigned simple_escape(unsigned char c)
{
	switch (c) {
	case 'b': return '\b';
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	default: return c; /* " \ / */
	}
}

/* Reads a (validated) string's content as UTF-16 code units: what RFC 8785 §3.2.3 sorts
 * member names by. A \u escape is one code unit as written (a lone surrogate included). */
struct u16_reader {
	const unsigned char *c, *end;
	long pending;   /* the low surrogate of a supplementary character, or -1 */
};

static long u16_next(struct u16_reader *r)
{
	unsigned long cp;
	size_t len;

	if (r->pending >= 0) {
		long u = r->pending;
		r->pending = -1;
		return u;
	}
	if (r->c >= r->end)
		return -1;
	if (r->c[0] == '\\') {
		if (r->c[1] == 'u') {
			long u = hex4(r->c + 2);
			r->c += 6;
			return u;
		}
		r->c += 2;
		return simple_escape(r->c[-1]);
	}
	len = wq__utf8_seq((const unsigned char *)r->c, (size_t)(r->end - r->c));
	cp = len == 1 ? r->c[0] : r->c[0] & (0x7F >> len);
	for (size_t k = 1; k < len; k++)
		cp = (cp << 6) | (r->c[k] & 0x3F);
	r->c += len;
	if (cp < 0x10000)
		return (long)cp;
	cp -= 0x10000;
	r->pending = (long)(0xDC00 | (cp & 0x3FF));
	return (long)(0xD800 | (cp >> 10));
}

struct member {
	size_t name, name_end; /* the name's content: after its opening quote, at its closing one */
	size_t value;          /* where the value starts */
};

static int member_cmp(const void *a, const void *b, void *text)
{
	const struct member *x = a, *y = b;
	const unsigned char *s = text;
	struct u16_reader rx = {s + x->name, s + x->name_end, -1};
	struct u16_reader ry = {s + y->name, s + y->name_end, -1};

	for (;;) {
		long ux = u16_next(&rx), uy = u16_next(&ry);
		if (ux != uy)
			return ux < uy ? -1 : 1;
		if (ux < 0)
			return 0;
	}
}

static void put_utf8(struct emitter *e, unsigned long cp)
{
	char b[4];

	if (cp < 0x80) {
		b[0] = (char)cp;
		put(e, b, 1);
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3F));
		put(e, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		put(e, b, 3);
	} else {
		b[0] = (char)(0xF0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		put(e, b, 4);
	}
}

/* RFC 8785 §3.2.2.2: only '"', '\' and the controls are escaped; \b \t \n \f \r by name,
 * the other controls as \u00xx with lowercase hex. A lone surrogate has no UTF-8 form
 * and stays a (lowercase) escape. */
static void put_char(struct emitter *e, unsigned long cp)
{
	char b[8];

	switch (cp) {
	case '"': puts_(e, "\\\""); return;
	case '\\': puts_(e, "\\\\"); return;
	case '\b': puts_(e, "\\b"); return;
	case '\t': puts_(e, "\\t"); return;
	case '\n': puts_(e, "\\n"); return;
	case '\f': puts_(e, "\\f"); return;
	case '\r': puts_(e, "\\r"); return;
	}
	if (cp < 0x20 || (cp >= 0xD800 && cp <= 0xDFFF)) {
		snprintf(b, sizeof b, "\\u%04lx", cp);
		puts_(e, b);
		return;
	}
	put_utf8(e, cp);
}

/* The string whose content is s[from, to) (validated; raw bytes are well-formed UTF-8
 * and no controls, so they are copied as they are). */
static void emit_string(struct emitter *e, size_t from, size_t to)
{
	const unsigned char *s = e->p->s;
	size_t i = from;

	put(e, "\"", 1);
	while (i < to) {
		size_t run = i;
		long u, lo;

		while (run < to && s[run] != '\\')
			run++;
		put(e, s + i, run - i);
		if ((i = run) >= to)
			break;
		if (s[i + 1] != 'u') {
			put_char(e, simple_escape(s[i + 1]));
			i += 2;
			continue;
		}
		u = hex4(s + i + 2);
		i += 6;
		if (u >= 0xD800 && u <= 0xDBFF && i + 6 <= to && s[i] == '\\' && s[i + 1] == 'u' &&
		    (lo = hex4(s + i + 2)) >= 0xDC00 && lo <= 0xDFFF) {
			put_utf8(e, 0x10000 + (((unsigned long)u - 0xD800) << 10) +
					    ((unsigned long)lo - 0xDC00));
			i += 6;
			continue;
		}
		put_char(e, (unsigned long)u);
	}
	put(e, "\"", 1);
}

/* ECMAScript Number::toString (ES6 §7.1.12.1) of the number whose shortest digits are
 * d[0..k) (no leading or trailing zeros) and whose value is 0.d × 10^n. */
static void put_es6(struct emitter *e, const char *d, int k, long long n)
{
	char b[32];

	if (k <= n && n <= 21) {
		put(e, d, (size_t)k);
		for (long long z = n - k; z > 0; z--)
			put(e, "0", 1);
	} else if (0 < n && n <= 21) {
		put(e, d, (size_t)n);
		put(e, ".", 1);
		put(e, d + n, (size_t)(k - n));
	} else if (-6 < n && n <= 0) {
		put(e, "0.", 2);
		for (long long z = -n; z > 0; z--)
			put(e, "0", 1);
		put(e, d, (size_t)k);
	} else {
		put(e, d, 1);
		if (k > 1) {
			put(e, ".", 1);
			put(e, d + 1, (size_t)k - 1);
		}
		snprintf(b, sizeof b, "e%c%lld", n - 1 < 0 ? '-' : '+', n - 1 < 0 ? 1 - n : n - 1);
		puts_(e, b);
	}
}

/* "D.DDDe±X" as printed by %e into its digits without trailing zeros, and n (value =
 * 0.digits × 10^n). */
static void sci_digits(const char *sci, char *d, int *k, long long *n)
{
	int len = 0;

	for (const char *c = sci; *c && *c != 'e'; c++)
		if (*c != '.')
			d[len++] = *c;
	while (len > 1 && d[len - 1] == '0')
		len--;
	d[len] = '\0';
	*k = len;
	*n = strtoll(strchr(sci, 'e') + 1, NULL, 10) + 1;
}

/* The p-digit decimal next to sci (printed by "%.*e" with p-1) in direction dir (±1). */
static void sci_neighbour(const char *sci, int p, int dir, char *out, size_t outsz)
{
	char m[24];
	int len = 0, i;
	long long ex = strtoll(strchr(sci, 'e') + 1, NULL, 10);

	for (const char *c = sci; *c && *c != 'e'; c++)
		if (*c != '.')
			m[len++] = *c;
	for (i = p - 1; i >= 0; i--) {
		if (dir > 0 && m[i] == '9') {
			m[i] = '0';
		} else if (dir < 0 && m[i] == '0') {
			m[i] = '9';
		} else {
			m[i] = (char)(m[i] + dir);
			break;
		}
	}
	if (i < 0) /* 99…9 + 1 */
		m[0] = '1', ex++;
	else if (m[0] == '0') /* 10…0 - 1: the p-digit decimal below is 99…9 a decade lower */
		memset(m, '9', (size_t)p), ex--;
	m[p] = '\0';
	snprintf(out, outsz, "%c.%se%lld", m[0], p > 1 ? m + 1 : "0", ex);
}

/* The shortest digits that read back as x (> 0, finite), the closest to x among them
 * (ES6 §7.1.12.1 note 2). For each length p, the candidates are the correctly rounded
 * p-digit decimal and its neighbour on the other side of x: only those two can lie in
 * x's rounding interval and be nearest. */
static void shortest_digits(double x, char *d, int *k, long long *n)
{
	char sci[40], other[40];

	for (int p = 1; p <= 17; p++) {
		double y;
		snprintf(sci, sizeof sci, "%.*e", p - 1, x);
		y = strtod(sci, NULL);
		if (y == x) {
			sci_digits(sci, d, k, n);
			return;
		}
		sci_neighbour(sci, p, y < x ? 1 : -1, other, sizeof other);
		if (strtod(other, NULL) == x) {
			sci_digits(other, d, k, n);
			return;
		}
	}
	snprintf(sci, sizeof sci, "%.16e", x); /* not reached: 17 digits always read back */
	sci_digits(sci, d, k, n);
}

/* out = dec + delta, dec a positive decimal (no leading zeros) > |delta|. */
static void dec_add(const char *dec, size_t len, long long delta, char *out)
{
	long long carry = delta;
	size_t o = len + 1;

	out[len + 1] = '\0';
	for (size_t i = len; i-- > 0;) {
		long long v = (dec[i] - '0') + carry % 10;
		carry /= 10;
		if (v < 0)
			v += 10, carry--;
		else if (v >= 10)
			v -= 10, carry++;
		out[--o] = (char)('0' + v);
	}
	out[0] = (char)('0' + carry); /* |delta| < dec: 0 or 1 */
	o = strspn(out, "0");
	memmove(out, out + o, len + 2 - o);
}

/* A number whose value is beyond the double range: its exact decimal value in the ES6
 * exponent form (it is above 1e21, so always "d[.ddd]e+N"). */
static void emit_exact(struct emitter *e, const unsigned char *t, size_t len)
{
	char *d = malloc(len + 1), *exp10 = malloc(len + 24);
	size_t k = 0, i = 0, lead = 0, intlen = 0;
	const char *ex = "0";
	size_t exlen = 1;
	int in_frac = 0, expneg = 0;
	long long shift;

	if (!d || !exp10) {
		e->rc = wq__err(e->err, WQ_ENOMEM, "out of memory writing canonical JSON");
		goto out;
	}
	if (t[0] == '-') {
		put(e, "-", 1);
		i++;
	}
	/* significant digits, and how many of them precede the point (intlen) or how many
	 * zeros follow the point before the first of them (lead) */
	for (; i < len && t[i] != 'e' && t[i] != 'E'; i++) {
		if (t[i] == '.') {
			in_frac = 1;
		} else if (k == 0 && t[i] == '0') {
			lead += in_frac;
		} else {
			d[k++] = (char)t[i];
			intlen += !in_frac;
		}
	}
	while (k > 1 && d[k - 1] == '0')
		k--;
	if (i < len) {
		i++;
		if (t[i] == '+' || t[i] == '-')
			expneg = t[i++] == '-';
		while (i < len - 1 && t[i] == '0')
			i++;
		ex = (const char *)t + i;
		exlen = len - i;
	}
	/* value = 0.d × 10^(E + shift), written d.ddd × 10^(E + shift - 1) */
	shift = (intlen ? (long long)intlen : -(long long)lead) - 1;
	put(e, d, 1);
	if (k > 1) {
		put(e, ".", 1);
		put(e, d + 1, k - 1);
	}
	if (exlen <= 17) {
		/* a copy: the text is not NUL-terminated (a number may end the buffer; found
		 * by tests/fuzz/fuzz_json as a read past it) */
		char eb[24];
		memcpy(eb, ex, exlen);
		eb[exlen] = '\0';
		long long v = strtoll(eb, NULL, 10);
		snprintf(exp10, len + 24, "%lld", (expneg ? -v : v) + shift);
	} else { /* overflow implies a positive exponent far beyond |shift| */
		dec_add(ex, exlen, shift, exp10);
	}
	puts_(e, exp10[0] == '-' ? "e" : "e+");
	puts_(e, exp10);
out:
	free(d);
	free(exp10);
}

static void emit_number(struct emitter *e, size_t from, size_t to)
{
	const unsigned char *t = e->p->s + from;
	size_t len = to - from;
	char digits[24], *copy;
	long long n;
	double x;
	int k;

	if (!memchr(t, '.', len) && !memchr(t, 'e', len) && !memchr(t, 'E', len)) {
		/* an integer literal keeps its digits (JSON has no leading zeros) */
		if (len == 2 && t[0] == '-' && t[1] == '0')
			put(e, "0", 1);
		else
			put(e, t, len);
		return;
	}
	if (!(copy = strndup((const char *)t, len))) {
		e->rc = wq__err(e->err, WQ_ENOMEM, "out of memory writing canonical JSON");
		return;
	}
	x = strtod(copy, NULL); /* correctly rounded (glibc), however many digits */
	free(copy);
	if (isinf(x)) {
		emit_exact(e, t, len);
		return;
	}
	if (x == 0) { /* also -0 and underflow */
		put(e, "0", 1);
		return;
	}
	if (x < 0) {
		put(e, "-", 1);
		x = -x;
	}
	shortest_digits(x, digits, &k, &n);
	put_es6(e, digits, k, n);
}

static size_t emit_value(struct emitter *e, size_t i);

static size_t emit_object(struct emitter *e, size_t i)
{
	const struct parser *p = e->p;
	struct member *m = NULL, *grown;
	size_t n = 0, cap = 0, end = value_end(p, i);

	for (i++;;) {
		skip_ws(p->s, end, &i);
		if (p->s[i] == '}')
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			if (!(grown = realloc(m, cap * sizeof *m))) {
				e->rc = wq__err(e->err, WQ_ENOMEM, "out of memory writing canonical JSON");
				goto out;
			}
			m = grown;
		}
		m[n].name = i + 1;
		i = string_end(p->s, i);
		m[n].name_end = i - 1;
		skip_ws(p->s, end, &i);
		i++; /* ':' */
		skip_ws(p->s, end, &i);
		m[n].value = i;
		i = value_end(p, i);
		n++;
		skip_ws(p->s, end, &i);
		if (p->s[i] == ',')
			i++;
	}
	if (n > 1)
		qsort_r(m, n, sizeof *m, member_cmp, (void *)p->s);
	for (size_t k = 1; k < n; k++) {
		if (member_cmp(&m[k - 1], &m[k], (void *)p->s) == 0) {
			size_t later = m[k].name > m[k - 1].name ? m[k].name : m[k - 1].name;
			e->rc = perr(p, later - 1, "duplicate object member name");
			goto out;
		}
	}
	put(e, "{", 1);
	for (size_t k = 0; k < n && e->rc == WQ_OK; k++) {
		if (k)
			put(e, ",", 1);
		emit_string(e, m[k].name, m[k].name_end);
		put(e, ":", 1);
		emit_value(e, m[k].value);
	}
	put(e, "}", 1);
out:
	free(m);
	return end;
}

static size_t emit_array(struct emitter *e, size_t i)
{
	const struct parser *p = e->p;
	size_t end = value_end(p, i);
	int first = 1;

	put(e, "[", 1);
	for (i++; e->rc == WQ_OK;) {
		skip_ws(p->s, end, &i);
		if (p->s[i] == ']')
			break;
		if (!first)
			put(e, ",", 1);
		first = 0;
		i = emit_value(e, i);
		skip_ws(p->s, end, &i);
		if (p->s[i] == ',')
			i++;
	}
	put(e, "]", 1);
	return end;
}

/* Writes the value at i; returns one past it. */
static size_t emit_value(struct emitter *e, size_t i)
{
	size_t end;

	switch (e->p->s[i]) {
	case '{':
		return emit_object(e, i);
	case '[':
		return emit_array(e, i);
	case '"':
		end = string_end(e->p->s, i);
		emit_string(e, i + 1, end - 1);
		return end;
	case '-':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		end = value_end(e->p, i);
		emit_number(e, i, end);
		return end;
	default: /* true, false, null */
		end = value_end(e->p, i);
		put(e, e->p->s + i, end - i);
		return end;
	}
}

/* The "C" locale, for strtod and %e: a program that called setlocale() must not get
 * "1,5" (or fail to read "1.5"). (locale_t)0 when it could not be made. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Validates text; with out, also writes its canonical form into *out (malloc'd). */
static wq_rc canonical(const char *text, size_t len, char **out, size_t *outlen, wq_error *err)
{
	struct parser p = {(const unsigned char *)text, len, 0, 0, NULL, 0, 0, err};
	struct emitter e = {&p, {NULL, 0, 0}, WQ_OK, err};
	locale_t caller = (locale_t)0;
	size_t start;
	wq_rc rc;

	if (!text)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload: no text");
	pthread_once(&c_locale_once, make_c_locale);
	if (c_locale)
		caller = uselocale(c_locale); /* this thread only; restored below */
	rc = parse_value(&p);
	if (rc == WQ_OK) {
		skip_ws(p.s, p.n, &p.i);
		if (p.i < p.n)
			rc = perr(&p, p.i, "unexpected text after the JSON value");
	}
	if (rc != WQ_OK)
		goto out;
	/* pass 2 also finds duplicate names, so validation runs it too */
	start = 0;
	skip_ws(p.s, p.n, &start);
	emit_value(&e, start);
	put(&e, "", 0);
	if ((rc = e.rc) != WQ_OK)
		goto out;
	if (out) {
		*out = e.o.b;
		*outlen = e.o.len;
		e.o.b = NULL;
	}
out:
	if (caller)
		uselocale(caller);
	free(e.o.b);
	free(p.cont);
	return rc;
}

wq_rc wq_json_validate(const char *text, size_t len, wq_error *err)
{
	return canonical(text, len, NULL, NULL, err);
}

wq_rc wq_json_canonical(const char *text, size_t len, char **out, wq_error *err)
{
	size_t n;

	return canonical(text, len, out, &n, err);
}

/* ------------------------------------------------------------ hashing ---- */

/* nettle rather than libcrypto (issue 11): a SHA-256 is all the core needs, and
 * libcrypto's ~5,400 symbol relocations were most of every CLI call's start-up. */
/* The two lowercase hex digits of every byte value, "00" .. "ff". */
static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* ctx's digest as 64 lowercase hex digits + NUL: two digits a byte from hex_pairs (a
 * nibble at a time cost ~420 instructions a digest; two digests per enqueue). */
static void sha256_hex_digest(struct sha256_ctx *ctx, char hex[WQ_SHA256_HEX])
{
	uint8_t md[SHA256_DIGEST_SIZE];

	sha256_digest(ctx, sizeof md, md);
	for (unsigned int i = 0; i < SHA256_DIGEST_SIZE; i++)
		memcpy(hex + 2 * i, hex_pairs + 2 * md[i], 2);
	hex[2 * SHA256_DIGEST_SIZE] = '\0';
}

void wq__sha256_hex(const void *data, size_t len, char hex[WQ_SHA256_HEX])
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_hex_digest(&ctx, hex);
}

/* SHA-256 over prefix + body, hashed in two updates (the same digest as over one copy
 * of both, without the copy and its allocation). */
static void sha256_prefixed(const char *prefix, size_t plen, const char *body, size_t blen,
			    char hex[WQ_SHA256_HEX])
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, plen, (const uint8_t *)prefix);
	sha256_update(&ctx, blen, (const uint8_t *)body);
	sha256_hex_digest(&ctx, hex);
}

/* "<head>v<version>\n" into buf (at least 32 bytes), as snprintf "%sv%d\n" writes it,
 * without snprintf (~350 instructions a fingerprint); its length. */
static size_t version_prefix(char *buf, const char *head, int version)
{
	char tmp[16];
	size_t n = strlen(head), k = 0;
	unsigned int u = version < 0 ? 0u - (unsigned int)version : (unsigned int)version;

	memcpy(buf, head, n);
	buf[n++] = 'v';
	if (version < 0)
		buf[n++] = '-';
	do
		tmp[k++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	while (k)
		buf[n++] = tmp[--k];
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

size_t wq__fingerprint_prefix(char buf[32], const char *head, int version)
{
	return version_prefix(buf, head, version);
}

wq_rc wq__fingerprint(const char *payload, size_t len, int version, char hex[WQ_SHA256_HEX],
		      wq_error *err)
{
	char prefix[32], *canon = NULL;
	size_t clen = 0, plen;
	wq_rc rc = canonical(payload, len, &canon, &clen, err);

	if (rc != WQ_OK)
		return rc;
	/* "jcs1\n": the algorithm (a legacy fingerprint starts "v<version>\n" instead, so the
	 * two never hash the same bytes); "v<version>\n": the version is part of the input */
	plen = version_prefix(prefix, "jcs1\n", version);
	sha256_prefixed(prefix, plen, canon, clen, hex);
	free(canon);
	return WQ_OK;
}

/* ------------------------------------------------- legacy (0.1.0) form ---- */

/* Everything below is the fingerprint algorithm of version 0.1.0, unchanged: stored
 * fingerprints were computed with it. Do not "fix" it. */

/* Integral reals become integers, so 1, 1.0 and 1e0 have one canonical form. Only within
 * ±2^53, where a double represents every integer exactly. */
static json_t *legacy_normalise(json_t *v)
{
	const char *k;
	json_t *child;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_REAL: {
		double d = json_real_value(v);
		if (d == (double)(json_int_t)d && d >= -9007199254740992.0 &&
		    d <= 9007199254740992.0) {
			json_t *n = json_integer((json_int_t)d);
			if (n)
				return n;
		}
		return json_incref(v);
	}
	case JSON_OBJECT:
		json_object_foreach(v, k, child) {
			json_t *n = legacy_normalise(child);
			if (!n || json_object_set_new(v, k, n) != 0)
				return NULL;
		}
		return json_incref(v);
	case JSON_ARRAY:
		json_array_foreach(v, i, child) {
			json_t *n = legacy_normalise(child);
			if (!n || json_array_set_new(v, i, n) != 0)
				return NULL;
		}
		return json_incref(v);
	default:
		return json_incref(v);
	}
}

static wq_rc legacy_canonical(const char *text, size_t len, char **out, wq_error *err)
{
	json_error_t jerr;
	json_t *v, *n;
	char *s;

	if (!text)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload: no text");
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!v)
		return wq__err(err, WQ_EINVAL, "invalid JSON payload at line %d, column %d: %s",
			       jerr.line, jerr.column, jerr.text);
	n = legacy_normalise(v);
	json_decref(v);
	if (!n)
		return wq__err(err, WQ_ENOMEM, "out of memory normalising JSON");
	s = json_dumps(n, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	json_decref(n);
	if (!s)
		return wq__err(err, WQ_ENOMEM, "out of memory writing canonical JSON");
	*out = s;
	return WQ_OK;
}

wq_rc wq__fingerprint_legacy(const char *payload, size_t len, int version,
			     char hex[WQ_SHA256_HEX], wq_error *err)
{
	char prefix[32], *canon = NULL;
	wq_rc rc = legacy_canonical(payload, len, &canon, err);

	if (rc != WQ_OK)
		return rc;
	snprintf(prefix, sizeof prefix, "v%d\n", version);
	sha256_prefixed(prefix, strlen(prefix), canon, strlen(canon), hex);
	free(canon);
	return WQ_OK;
}
