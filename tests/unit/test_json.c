/* Payload validation, canonical JSON and operation fingerprints (SPEC §6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(canonical_forms),
		cmocka_unit_test(fingerprints),
		cmocka_unit_test(invalid_json_names_position),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
