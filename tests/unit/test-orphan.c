/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/orphan/orphan.c: classification, durations, the state file and the persistence rule with a fake now. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/orphan/orphan.h"
#include "macro.h"
#include "time-util.h"
#include "string-util.h"

static void test_classify(void **state) {
        static const struct {
                CURLcode code;
                long status;
                OrphanClass want;
        } cases[] = {
                { CURLE_OK, 200, ORPHAN_HEALTHY },
                { CURLE_OK, 204, ORPHAN_HEALTHY },
                { CURLE_OK, 404, ORPHAN_NODE_MISSING },
                { CURLE_OK, 401, ORPHAN_UNAUTHORIZED },
                { CURLE_OK, 403, ORPHAN_UNAUTHORIZED },
                { CURLE_OK, 500, ORPHAN_API_ERROR },
                { CURLE_OK, 503, ORPHAN_API_ERROR },
                { CURLE_OK, 429, ORPHAN_API_ERROR },
                { CURLE_OK, 302, ORPHAN_API_ERROR },
                /* A status decides even when the transfer failed after it. */
                { CURLE_RECV_ERROR, 200, ORPHAN_HEALTHY },
                { CURLE_OPERATION_TIMEDOUT, 404, ORPHAN_NODE_MISSING },
                { CURLE_PEER_FAILED_VERIFICATION, 0, ORPHAN_CA_MISMATCH },
                { CURLE_SSL_ISSUER_ERROR, 0, ORPHAN_CA_MISMATCH },
                { CURLE_SSL_PINNEDPUBKEYNOTMATCH, 0, ORPHAN_CA_MISMATCH },
                { CURLE_COULDNT_RESOLVE_HOST, 0, ORPHAN_UNREACHABLE },
                { CURLE_COULDNT_CONNECT, 0, ORPHAN_UNREACHABLE },
                { CURLE_OPERATION_TIMEDOUT, 0, ORPHAN_UNREACHABLE },
                { CURLE_SSL_CONNECT_ERROR, 0, ORPHAN_UNREACHABLE },
                { CURLE_GOT_NOTHING, 0, ORPHAN_UNREACHABLE },
                { CURLE_RECV_ERROR, 0, ORPHAN_UNREACHABLE },
                { CURLE_COULDNT_RESOLVE_PROXY, 0, ORPHAN_UNREACHABLE },
                /* This node's own configuration is broken: no evidence about the control plane. */
                { CURLE_SSL_CACERT_BADFILE, 0, _ORPHAN_CLASS_INVALID },
                { CURLE_SSL_CERTPROBLEM, 0, _ORPHAN_CLASS_INVALID },
                { CURLE_URL_MALFORMAT, 0, _ORPHAN_CLASS_INVALID },
                { CURLE_UNSUPPORTED_PROTOCOL, 0, _ORPHAN_CLASS_INVALID },
                { CURLE_OUT_OF_MEMORY, 0, _ORPHAN_CLASS_INVALID },
                { CURLE_OK, 0, _ORPHAN_CLASS_INVALID },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (orphan_classify(cases[i].code, cases[i].status) != cases[i].want)
                        fail_msg("curl %d, HTTP %ld: got %d, want %d", (int) cases[i].code, cases[i].status,
                                 (int) orphan_classify(cases[i].code, cases[i].status), (int) cases[i].want);
}

static void test_class_names(void **state) {
        for (int c = 0; c < _ORPHAN_CLASS_MAX; c++) {
                assert_non_null(orphan_class_to_string(c));
                assert_int_equal(orphan_class_from_string(orphan_class_to_string(c)), c);
        }
        assert_string_equal(orphan_class_to_string(ORPHAN_CA_MISMATCH), "ca-mismatch");
        assert_string_equal(orphan_class_to_string(ORPHAN_NOT_A_NODE), "not-a-node");
        assert_null(orphan_class_to_string(_ORPHAN_CLASS_INVALID));
        assert_int_equal(orphan_class_from_string("orphaned"), _ORPHAN_CLASS_INVALID);

        assert_true(orphan_class_is_evidence(ORPHAN_NODE_MISSING));
        assert_true(orphan_class_is_evidence(ORPHAN_UNAUTHORIZED));
        assert_true(orphan_class_is_evidence(ORPHAN_CA_MISMATCH));
        assert_true(orphan_class_is_evidence(ORPHAN_UNREACHABLE));
        assert_false(orphan_class_is_evidence(ORPHAN_HEALTHY));
        assert_false(orphan_class_is_evidence(ORPHAN_API_ERROR));
        assert_false(orphan_class_is_evidence(ORPHAN_NOT_A_NODE));
}

static void check_duration(const char *s, int r, uint64_t want) {
        uint64_t v = 12345;

        assert_int_equal(duration_parse(s, &v), r);
        if (r == 0)
                assert_int_equal(v, want);
        else
                assert_int_equal(v, 12345);
}

static void test_duration(void **state) {
        char buf[32];

        check_duration("90s", 0, 90);
        check_duration("30m", 0, 1800);
        check_duration("2h", 0, 7200);
        check_duration("1d", 0, 86400);
        check_duration("1h30m", 0, 5400);
        check_duration("1d2h3m4s", 0, 93784);
        check_duration("45", 0, 45);
        check_duration("0", 0, 0);
        check_duration("366d", 0, 366 * 86400);
        check_duration("", -EINVAL, 0);
        check_duration("1h30", -EINVAL, 0);
        check_duration("m", -EINVAL, 0);
        check_duration("-5m", -EINVAL, 0);
        check_duration("5x", -EINVAL, 0);
        check_duration("1.5h", -EINVAL, 0);
        check_duration("5 m", -EINVAL, 0);
        check_duration("367d", -ERANGE, 0);
        check_duration("99999999999999999999999", -ERANGE, 0);

        duration_format(5400, buf, sizeof buf);
        assert_string_equal(buf, "1h30m");
        duration_format(0, buf, sizeof buf);
        assert_string_equal(buf, "0s");
        duration_format(90061, buf, sizeof buf);
        assert_string_equal(buf, "1d1h1m1s");
        duration_format(90, buf, sizeof buf);
        assert_string_equal(buf, "1m30s");
}

static void test_state_file(void **state) {
        OrphanState s = { .first_seen = 1000, .last_seen = 2000, .class = ORPHAN_CA_MISMATCH }, t;
        cleanup_free char *text = NULL;

        assert_int_equal(orphan_state_format(&s, &text), 0);
        assert_int_equal(orphan_state_parse(text, &t), 0);
        assert_int_equal(t.first_seen, 1000);
        assert_int_equal(t.last_seen, 2000);
        assert_int_equal(t.class, ORPHAN_CA_MISMATCH);

        /* Hand-written: comments, CRLF, a key of a later version, no last_seen (taken as the first). */
        assert_int_equal(orphan_state_parse("# x\r\nfirst_seen=5\r\n\nfuture=1\nclass=node-missing\n", &t), 0);
        assert_int_equal(t.first_seen, 5);
        assert_int_equal(t.last_seen, 5);
        assert_int_equal(t.class, ORPHAN_NODE_MISSING);
        assert_int_equal(orphan_state_parse("first_seen=5", &t), 0);
        assert_int_equal(t.class, ORPHAN_UNREACHABLE);

        assert_int_equal(orphan_state_parse("", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("last_seen=5\n", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("first_seen=yesterday\n", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("first_seen=-5\n", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("first_seen=5x\n", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("first_seen\n", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("first_seen=5\nclass=healthy\n", &t), -EBADMSG);
        assert_int_equal(orphan_state_parse("first_seen=5\nclass=bogus\n", &t), -EBADMSG);
}

/* The timer fires every 10 minutes; --for 30m. */
static void test_persistence(void **state) {
        const uint64_t t0 = 1700000000, m = 60, for_sec = 30 * m;
        OrphanState s = {};

        /* A single blip never triggers, and healthy clears it. */
        assert_false(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0, for_sec));
        assert_int_equal(s.first_seen, t0);
        assert_false(orphan_state_update(&s, ORPHAN_HEALTHY, t0 + 10 * m, for_sec));
        assert_int_equal(s.first_seen, 0);

        /* Persisting for 30 minutes, whatever the non-healthy class: orphaned at the fourth check. */
        assert_false(orphan_state_update(&s, ORPHAN_CA_MISMATCH, t0, for_sec));
        assert_false(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0 + 10 * m, for_sec));
        assert_false(orphan_state_update(&s, ORPHAN_CA_MISMATCH, t0 + 20 * m, for_sec));
        assert_true(orphan_state_update(&s, ORPHAN_NODE_MISSING, t0 + 30 * m, for_sec));
        assert_int_equal(s.first_seen, t0);
        assert_int_equal(s.last_seen, t0 + 30 * m);
        assert_int_equal(s.class, ORPHAN_NODE_MISSING);
        assert_true(orphan_state_update(&s, ORPHAN_UNAUTHORIZED, t0 + 40 * m, for_sec));

        /* api-error (our control plane answered) and not-a-node clear it too. */
        assert_false(orphan_state_update(&s, ORPHAN_API_ERROR, t0 + 50 * m, for_sec));
        assert_int_equal(s.first_seen, 0);
        assert_int_equal(s.class, ORPHAN_API_ERROR);
        s = (OrphanState) { .first_seen = t0, .last_seen = t0 + 40 * m, .class = ORPHAN_UNREACHABLE };
        assert_false(orphan_state_update(&s, ORPHAN_NOT_A_NODE, t0 + 50 * m, for_sec));
        assert_int_equal(s.first_seen, 0);

        /* A node that was off for a week: the old first sighting does not count, it starts over. */
        s = (OrphanState) { .first_seen = t0, .last_seen = t0 + 10 * m, .class = ORPHAN_UNREACHABLE };
        assert_false(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0 + 7 * 86400, for_sec));
        assert_int_equal(s.first_seen, t0 + 7 * 86400);
        /* A gap of exactly --for still counts as continuous. */
        s = (OrphanState) { .first_seen = t0, .last_seen = t0 + 10 * m, .class = ORPHAN_UNREACHABLE };
        assert_true(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0 + 40 * m, for_sec));

        /* The clock was set back: sightings in the future start over. */
        s = (OrphanState) { .first_seen = t0 + 86400, .last_seen = t0 + 86400, .class = ORPHAN_UNREACHABLE };
        assert_false(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0, for_sec));
        assert_int_equal(s.first_seen, t0);
        s = (OrphanState) { .first_seen = t0 - 3600, .last_seen = t0 + 60, .class = ORPHAN_UNREACHABLE };
        assert_false(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0, for_sec));
        assert_int_equal(s.first_seen, t0);
        /* Nonsense (last before first) starts over too. */
        s = (OrphanState) { .first_seen = t0 - 100, .last_seen = t0 - 200, .class = ORPHAN_UNREACHABLE };
        assert_false(orphan_state_update(&s, ORPHAN_UNREACHABLE, t0, for_sec));
        assert_int_equal(s.first_seen, t0);

        /* --for 90s: two checks 90 s apart. */
        s = (OrphanState) {};
        assert_false(orphan_state_update(&s, ORPHAN_CA_MISMATCH, t0, 90));
        assert_false(orphan_state_update(&s, ORPHAN_CA_MISMATCH, t0 + 89, 90));
        assert_true(orphan_state_update(&s, ORPHAN_CA_MISMATCH, t0 + 90, 90));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_class_names),
                cmocka_unit_test(test_duration),
                cmocka_unit_test(test_state_file),
                cmocka_unit_test(test_persistence),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
