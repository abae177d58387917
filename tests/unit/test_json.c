/* Payload validation, canonical JSON and operation fingerprints (SPEC §6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void canon_is(const char *in, const char *want)
{
	char *out = NULL;
	wq_error e;
	if (wq_json_canonical(in, strlen(in), &out, &e) != WQ_OK)
		fail_msg("%s: %s", in, e.message);
	if (strcmp(out, want) != 0)
		fail_msg("canonical(%s) = %s, expected %s", in, out, want);
	wq_free(out);
}

static void canonical_forms(void **state)
{
	(void)state;
	canon_is("{ \"b\" : 1, \"a\" : [ 1 , 2 ] }", "{\"a\":[1,2],\"b\":1}");
	canon_is("{\"n\": 1.0, \"m\": 1e0, \"k\": -0.0, \"r\": 0.5}", "{\"k\":0,\"m\":1,\"n\":1,\"r\":0.5}");
	canon_is("\"\\u00e9\\/\\u0041\"", "\"\xc3\xa9/A\"");
	canon_is("{\"z\":{\"y\":true,\"x\":null}}", "{\"z\":{\"x\":null,\"y\":true}}");
	canon_is("42", "42");
}

static void fingerprints(void **state)
{
	char a[WQ_SHA256_HEX], b[WQ_SHA256_HEX], c[WQ_SHA256_HEX];
	const char *p1 = "{\"to\":\"ada\",\"n\":2}", *p2 = "{ \"n\" : 2.0 , \"to\" : \"ada\" }";
	(void)state;
	assert_int_equal(wq__fingerprint(p1, strlen(p1), 1, a, NULL), WQ_OK);
	assert_int_equal(wq__fingerprint(p2, strlen(p2), 1, b, NULL), WQ_OK);
	assert_string_equal(a, b); /* same input, other spelling */
	assert_int_equal(wq__fingerprint(p1, strlen(p1), 2, c, NULL), WQ_OK);
	assert_string_not_equal(a, c); /* the version is part of the identity */
	assert_int_equal(strlen(a), 64);
}

static void invalid_json_names_position(void **state)
{
	wq_error e;
	char *out = (char *)0x1;
	(void)state;
	assert_int_equal(wq_json_validate("{\"a\":1,}", 8, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "line 1, column"));
	assert_int_equal(wq_json_validate("{\"a\":1,\"a\":2}", 13, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "duplicate"));
	assert_int_equal(wq_json_canonical("[1,", 3, &out, &e), WQ_EINVAL);
	assert_ptr_equal(out, (char *)0x1);
}

/* ---- RFC 8259 documents 0.1.0 refused (issue 9) ---- */

static void big_integers_keep_their_digits(void **state)
{
	char a[WQ_SHA256_HEX], b[WQ_SHA256_HEX];
	/* differ only in the last digit, far beyond 2^64 (18446744073709551616) */
	const char *p1 = "{\"n\":123456789012345678901234567890}";
	const char *p2 = "{\"n\":123456789012345678901234567891}";
	(void)state;
	canon_is(p1, p1);
	canon_is("[-98765432109876543210987654321098765432109876543210]",
		 "[-98765432109876543210987654321098765432109876543210]");
	canon_is("[18446744073709551616,9007199254740993,-0]",
		 "[18446744073709551616,9007199254740993,0]");
	assert_int_equal(wq_json_validate(p1, strlen(p1), NULL), WQ_OK);
	assert_int_equal(wq__fingerprint(p1, strlen(p1), 1, a, NULL), WQ_OK);
	assert_int_equal(wq__fingerprint(p2, strlen(p2), 1, b, NULL), WQ_OK);
	assert_string_not_equal(a, b);
	/* and 2^64 vs 2^64 + 1, which a double cannot tell apart */
	assert_int_equal(wq__fingerprint("18446744073709551616", 20, 1, a, NULL), WQ_OK);
	assert_int_equal(wq__fingerprint("18446744073709551617", 20, 1, b, NULL), WQ_OK);
	assert_string_not_equal(a, b);
	/* beyond the double range: exact, in the ES6 exponent form */
	canon_is("[1e400,-12.50e399,0.001e400]", "[1e+400,-1.25e+400,1e+397]");
	canon_is("1e99999999999999999999", "1e+99999999999999999999");
	canon_is("[1e-400,-1.5e-99999999999999999999]", "[0,0]");
}

static void nul_and_lone_surrogates_accepted(void **state)
{
	const char *nul = "{\"k\\u0000\":\"a\\u0000b\"}";
	(void)state;
	assert_int_equal(wq_json_validate(nul, strlen(nul), NULL), WQ_OK);
	canon_is(nul, "{\"k\\u0000\":\"a\\u0000b\"}");
	/* RFC 8259 §8.2 allows them; JCS has no form: they stay (lowercase) escapes */
	canon_is("[\"\\uDC00\",\"x\\uD83Dy\"]", "[\"\\udc00\",\"x\\ud83dy\"]");
	canon_is("\"\\uD83D\\uDE00\"", "\"\xf0\x9f\x98\x80\"");
}

/* RFC 8785 Appendix B: IEEE 754 bit patterns and their ES6 serialisation. */
static void jcs_numbers(void **state)
{
	static const struct { uint64_t bits; const char *want; } v[] = {
		{0x0000000000000000u, "0"},
		{0x8000000000000000u, "0"},
		{0x0000000000000001u, "5e-324"},
		{0x8000000000000001u, "-5e-324"},
		{0x7fefffffffffffffu, "1.7976931348623157e+308"},
		{0xffefffffffffffffu, "-1.7976931348623157e+308"},
		{0x4340000000000000u, "9007199254740992"},
		{0xc340000000000000u, "-9007199254740992"},
		{0x4430000000000000u, "295147905179352830000"},
		{0x44b52d02c7e14af5u, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6u, "1e+23"},
		{0x44b52d02c7e14af7u, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4eu, "999999999999999700000"},
		{0x444b1ae4d6e2ef4fu, "999999999999999900000"},
		{0x444b1ae4d6e2ef50u, "1e+21"},
		{0x3eb0c6f7a0b5ed8cu, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8du, "0.000001"},
		{0x41b3de4355555553u, "333333333.3333332"},
		{0x41b3de4355555554u, "333333333.33333325"},
		{0x41b3de4355555555u, "333333333.3333333"},
		{0x41b3de4355555556u, "333333333.3333334"},
		{0x41b3de4355555557u, "333333333.33333343"},
		{0xbecbf647612f3696u, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959u, "1424953923781206.2"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char in[64];
		double d;
		memcpy(&d, &v[i].bits, sizeof d);
		snprintf(in, sizeof in, "%.17e", d); /* an exponent: not an integer literal */
		canon_is(in, v[i].want);
	}
	canon_is("[1e21,0.000001,1e-7,-0.0,1E30,4.50,2e-3,0.000000000000000000000000001]",
		 "[1e+21,0.000001,1e-7,0,1e+30,4.5,0.002,1e-27]");
	canon_is("[1e20,100000000000000000000.0,0.1,1.5e300,-0.0000001]",
		 "[100000000000000000000,100000000000000000000,0.1,1.5e+300,-1e-7]");
}

/* RFC 8785 §3.2.3 (sorting by UTF-16 code units) and §3.2.4 (the worked example). */
static void jcs_keys_and_strings(void **state)
{
	(void)state;
	/* U+20AC sorts before U+1F600 (D83D DE00) in UTF-16, after it in code points */
	canon_is("{\"\\ud83d\\ude00\":2,\"\\u20ac\":1}",
		 "{\"\xe2\x82\xac\":1,\"\xf0\x9f\x98\x80\":2}");
	canon_is("{\"\\ufb33\":7,\"\\ud83d\\ude00\":6,\"\\u20ac\":5,\"\\u00f6\":4,"
		 "\"\\u0080\":3,\"1\":2,\"\\r\":1}",
		 "{\"\\r\":1,\"1\":2,\"\xc2\x80\":3,\"\xc3\xb6\":4,\"\xe2\x82\xac\":5,"
		 "\"\xf0\x9f\x98\x80\":6,\"\xef\xac\xb3\":7}");
	/* minimal escaping: controls as \u00xx in lowercase, '/' and DEL as they are */
	canon_is("\"\\u001F\\u0001\\/\x7f\\u2028\"", "\"\\u001f\\u0001/\x7f\xe2\x80\xa8\"");
	canon_is("{\n  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n"
		 "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
		 "  \"literals\": [null, true, false]\n}",
		 "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,"
		 "1e-27],\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
}

/* Golden values of version 0.1.0's algorithm (SHA-256 of "v<version>\n" + jansson's
 * sorted compact form), computed with that code before the change: operations stored by
 * it must keep replaying, so wq__fingerprint_legacy must give exactly these. */
static void legacy_fingerprints_unchanged(void **state)
{
	static const struct { const char *payload; int version; const char *hex; } g[] = {
		{"{\"to\":\"ada\",\"n\":2}", 1, "b9774feac4780556fc230c72168811af406f70ba6534ac4b365e879e5b899c56"},
		{"{\"to\":\"ada\",\"n\":2}", 2, "36ced3a2eea5dfeb9f359e04c2f77e7e63e7895e5217b5ebc65b65ae1f5206e3"},
		{"{}", 1, "fb367f591ca61e8e67fb21c87ccaf605ab9d223d89c9e5fbfaec34fc8ab90d40"},
		{"[1,2.5,\"x\",null,true]", 1, "97e78563b32f5ef0ad4f57fe066f3a0282b2c979c9aafb867d8d57c56e4d1c27"},
		{"{\"n\":0.1,\"m\":1e21,\"k\":123456789012}", 1, "c71eae187a636737476a4c41c81a2380ce7e68ed4c3a8ed49eab89808bf95065"},
		{"\"caf\\u00e9 \\ud83d\\ude00\"", 1, "b8150565faa2ef411e84cf5050b0eca7729777e002cb44791ec43a761c5f8ee7"},
		{"9007199254740993", 1, "00a66c0030f33fd1ab35dd1fbb322074a707e4c7c30bd5302f388c1d0e053297"},
		{"1.5e300", 1, "f235edcdd14f6abfecd407bcc801b86f70da2cbbdf4daab3c465d69d06854ea0"},
	};
	char hex[WQ_SHA256_HEX], now[WQ_SHA256_HEX];
	wq_error e;
	(void)state;
	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		if (wq__fingerprint_legacy(g[i].payload, strlen(g[i].payload), g[i].version, hex,
					   &e) != WQ_OK)
			fail_msg("legacy(%s): %s", g[i].payload, e.message);
		assert_string_equal(hex, g[i].hex);
		/* the new algorithm hashes other bytes ("jcs1\n" first): never equal */
		assert_int_equal(wq__fingerprint(g[i].payload, strlen(g[i].payload), g[i].version,
						 now, NULL), WQ_OK);
		assert_string_not_equal(now, hex);
	}
	/* what 0.1.0 refused has no legacy fingerprint */
	assert_int_equal(wq__fingerprint_legacy("123456789012345678901234567890", 30, 1, hex, NULL),
			 WQ_EINVAL);
	assert_int_equal(wq__fingerprint_legacy("\"\\u0000\"", 8, 1, hex, NULL), WQ_EINVAL);
}

/* The new algorithm, pinned: SHA-256 of "jcs1\nv<version>\n" + JCS (computed independently
 * with Python's hashlib over the canonical text), so a client can reproduce it. */
static void jcs_fingerprint_pinned(void **state)
{
	char hex[WQ_SHA256_HEX];
	const char *p = "{ \"to\" : \"ada\", \"n\" : 2.0 }";
	(void)state;
	assert_int_equal(wq__fingerprint(p, strlen(p), 1, hex, NULL), WQ_OK);
	assert_string_equal(hex, "e27c82593bfd8a5a606863809570cae8997e68614ad2531bf5a4d3307c9a8c9a");
	assert_int_equal(wq__fingerprint("123456789012345678901234567890", 30, 1, hex, NULL), WQ_OK);
	assert_string_equal(hex, "1646f6a850083adedd49c5580b1e2d8bedff4733fb1ae4f689214c5eba2dbcd0");
}

/* The fingerprint's prefix is written by hand: it must be what snprintf wrote. */
static void fingerprint_prefix_matches_snprintf(void **state)
{
	static const int versions[] = {0, 1, 9, 10, 99, 100, 12345, INT_MAX, -1, -10, INT_MIN};
	static const char *heads[] = {"jcs1\n", ""};
	char got[32], want[32];

	(void)state;
	for (size_t h = 0; h < 2; h++)
		for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
			size_t n = wq__fingerprint_prefix(got, heads[h], versions[i]);

			snprintf(want, sizeof want, "%sv%d\n", heads[h], versions[i]);
			assert_string_equal(got, want);
			assert_int_equal(n, strlen(want));
		}
}

/* The digest's hex digits come from a table of byte pairs: the known SHA-256 vectors. */
static void sha256_hex_vectors(void **state)
{
	char hex[WQ_SHA256_HEX];

	(void)state;
	wq__sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	wq__sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	wq__sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void still_invalid(void **state)
{
	static const char dup[] = "{\"a\":1,\"\\u0061\":2}"; /* one name, two spellings */
	static const char *bad[] = {
		"", " ", "01", "[1,]", "{\"a\":1,}", "1.", "-", "1e", ".5", "+1", "[1 2]", "tru",
		"\"\\x\"", "\"\\u12\"", "\"a\x01\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
		"\"abc", "{\"a\" 1}", "{1:2}", "[1]]", "NaN", "Infinity", "\xef\xbb\xbf{}",
		dup,
	};
	wq_error e;
	char *deep;
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (wq_json_validate(bad[i], strlen(bad[i]), &e) != WQ_EINVAL)
			fail_msg("accepted invalid JSON <%s>", bad[i]);
	assert_int_equal(wq_json_validate(dup, strlen(dup), &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "duplicate"));
	assert_int_equal(wq_json_validate("[1,\n  2,\n  x]", 13, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "line 3, column 3"));
	/* 256 levels of nesting are fine, 257 are refused (RFC 8259 §9 allows a limit) */
	deep = malloc(2 * 257 + 1);
	assert_non_null(deep);
	memset(deep, '[', 256);
	memset(deep + 256, ']', 256);
	assert_int_equal(wq_json_validate(deep, 512, NULL), WQ_OK);
	memset(deep, '[', 257);
	memset(deep + 257, ']', 257);
	assert_int_equal(wq_json_validate(deep, 514, &e), WQ_EINVAL);
	assert_non_null(strstr(e.message, "256 levels"));
	free(deep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(canonical_forms),
		cmocka_unit_test(fingerprints),
		cmocka_unit_test(invalid_json_names_position),
		cmocka_unit_test(big_integers_keep_their_digits),
		cmocka_unit_test(nul_and_lone_surrogates_accepted),
		cmocka_unit_test(jcs_numbers),
		cmocka_unit_test(jcs_keys_and_strings),
		cmocka_unit_test(legacy_fingerprints_unchanged),
		cmocka_unit_test(jcs_fingerprint_pinned),
		cmocka_unit_test(still_invalid),
		cmocka_unit_test(fingerprint_prefix_matches_snprintf),
		cmocka_unit_test(sha256_hex_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
