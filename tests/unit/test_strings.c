/*
 * test_strings.c — interning: same text → same id from any thread, ids are
 * dense and stable, texts round-trip exactly (embedded bytes, long texts
 * truncated at the documented limit), and concurrent first sightings agree.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "intern.h"

#include <pthread.h>

#define NTHREADS 4
#define NNAMES 5000

static aip_string_id ids[NTHREADS][NNAMES];

static void *intern_all(void *arg)
{
    int t = (int)(intptr_t)arg;
    char name[64];
    for (int i = 0; i < NNAMES; i++) {
        /* Threads walk the names in different orders to race on first sight. */
        int k = (t & 1) ? NNAMES - 1 - i : i;
        snprintf(name, sizeof name, "op_%d", k);
        ids[t][k] = aip_intern(name);
    }
    return NULL;
}

static void test_concurrent_interning_agrees(void)
{
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, intern_all, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < NNAMES; i++) {
        ASSERT_TRUE(ids[0][i] != 0);
        for (int t = 1; t < NTHREADS; t++)
            ASSERT_EQ(ids[t][i], ids[0][i]);
        char name[64];
        snprintf(name, sizeof name, "op_%d", i);
        uint32_t len;
        const char *text = aip__string_text(ids[0][i], &len);
        ASSERT_TRUE(text != NULL);
        ASSERT_EQ(len, strlen(name));
        ASSERT_STREQ(text, name);
    }
    ASSERT_TRUE(aip__string_count() >= NNAMES);
}

static void test_edge_texts(void)
{
    ASSERT_EQ(aip_intern(NULL), 0);
    ASSERT_EQ(aip_intern(""), 0);
    aip_string_id a = aip_intern("quote\" comma, newline\n </script> =cmd");
    ASSERT_EQ(aip_intern("quote\" comma, newline\n </script> =cmd"), a);
    ASSERT_TRUE(aip_intern("quote") != a);
    const char bin[] = {'a', '\0', 'b'};
    uint32_t id = aip__intern_n(bin, 3), len;
    const char *t = aip__string_text(id, &len);
    ASSERT_EQ(len, 3);
    ASSERT_TRUE(memcmp(t, bin, 3) == 0);
    ASSERT_TRUE(aip__string_text(0, NULL) == NULL);
    ASSERT_TRUE(aip__string_text(aip__string_count() + 1, NULL) == NULL);

    size_t big = AIP_STRING_MAX_LEN + 100;
    char *s = malloc(big + 1);
    memset(s, 'x', big);
    s[big] = 0;
    id = aip_intern(s);
    aip__string_text(id, &len);
    ASSERT_EQ(len, AIP_STRING_MAX_LEN);
    free(s);
}

TEST_MAIN(TEST_CASE(test_concurrent_interning_agrees), TEST_CASE(test_edge_texts))
