/*
 * aip_test.h — a tiny test harness: ASSERT macros print both values and
 * the location on failure; TEST_MAIN runs the listed tests and ends with
 * "N passed, N failed".
 */
#ifndef AIP_TEST_H
#define AIP_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int aip_test_failed_asserts;

#define ASSERT_TRUE(c)                                                          \
    do {                                                                        \
        if (!(c)) {                                                             \
            fprintf(stderr, "%s:%d: ASSERT_TRUE(%s) failed\n", __FILE__, __LINE__, #c); \
            aip_test_failed_asserts++;                                          \
            return;                                                             \
        }                                                                       \
    } while (0)

#define ASSERT_EQ(a, b)                                                         \
    do {                                                                        \
        long long aip_a = (long long)(a), aip_b = (long long)(b);               \
        if (aip_a != aip_b) {                                                   \
            fprintf(stderr, "%s:%d: ASSERT_EQ(%s, %s) failed: %lld != %lld\n",   \
                    __FILE__, __LINE__, #a, #b, aip_a, aip_b);                  \
            aip_test_failed_asserts++;                                          \
            return;                                                             \
        }                                                                       \
    } while (0)

#define ASSERT_STREQ(a, b)                                                      \
    do {                                                                        \
        const char *aip_a = (a), *aip_b = (b);                                  \
        if (!aip_a || !aip_b || strcmp(aip_a, aip_b) != 0) {                    \
            fprintf(stderr, "%s:%d: ASSERT_STREQ(%s, %s) failed: \"%s\" != \"%s\"\n", \
                    __FILE__, __LINE__, #a, #b, aip_a ? aip_a : "(null)",       \
                    aip_b ? aip_b : "(null)");                                  \
            aip_test_failed_asserts++;                                          \
            return;                                                             \
        }                                                                       \
    } while (0)

typedef struct aip_test_case {
    const char *name;
    void (*fn)(void);
} aip_test_case;

#define TEST_CASE(fn) { #fn, fn }

static inline int aip_test_run(const aip_test_case *cases, size_t n)
{
    int passed = 0, failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep output if a sanitizer ends the run */
    for (size_t i = 0; i < n; i++) {
        int before = aip_test_failed_asserts;
        cases[i].fn();
        if (aip_test_failed_asserts != before) {
            failed++;
            printf("FAIL %s\n", cases[i].name);
        } else {
            passed++;
            printf("ok   %s\n", cases[i].name);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* The whole file at `path`, NUL-terminated, for the caller to free;
 * *len (if len) its size.  NULL if it cannot be opened. */
static inline char *aip_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = buf ? fread(buf, 1, (size_t)(n > 0 ? n : 0), f) : 0;
    if (buf)
        buf[got] = 0;
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

#define TEST_MAIN(...)                                                          \
    int main(void)                                                              \
    {                                                                           \
        static const aip_test_case aip_cases[] = {__VA_ARGS__};                 \
        return aip_test_run(aip_cases, sizeof aip_cases / sizeof aip_cases[0]); \
    }

#endif
