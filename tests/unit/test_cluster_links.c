/*
 * test_cluster_links.c — the parts of `aiprof cluster` built on the ranks'
 * summaries, on clusters made in memory: msprof-analyze's double_hash and
 * Megatron DP/PP/TP indices (expected values printed by msprof-analyze's
 * own Python), the link matrix between global ranks (local → global through
 * self links, a transfer counted once from its sender, the receiver's view
 * only when the sender's is missing, per-op statistics skipped, RDMA across
 * hosts, unmapped entries counted), the slow-link rule, and the rows of
 * cluster_analysis.db (written twice: our tables replaced, another
 * writer's kept).
 */
#include "aip_test.h"
#include "cluster.h"
#include "cluster_links.h"
#include "tmp_dir.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_double_hash(void)
{
    ASSERT_TRUE(aip__cluster_double_hash("0") == 206158430256ull);
    ASSERT_TRUE(aip__cluster_double_hash("10.0.0.1%enp_pp0") == 9930691779850313517ull);
    ASSERT_TRUE(aip__cluster_double_hash("hccl_world_group") == 7415574198778220483ull);
    ASSERT_TRUE(aip__cluster_double_hash("") == 0);
}

/* A used rank with one step row (Computing, Free) and optional JSON. */
static void rank_init(aip__rank_dir *r, long rank, double comp, const char *matrix,
                      const char *meta, const char *host)
{
    memset(r, 0, sizeof *r);
    char path[64];
    snprintf(path, sizeof path, "/tmp/none/w%ld_ascend_pt", rank);
    r->path = strdup(path);
    r->rank = rank;
    r->n_cols = 2;
    r->cols = calloc(2, sizeof *r->cols);
    r->cols[0] = strdup("Computing");
    r->cols[1] = strdup("Free");
    r->n_rows = 1;
    r->rows = calloc(1, sizeof *r->rows);
    r->rows[0].step = strdup("1");
    r->rows[0].v = calloc(2, sizeof(double));
    r->rows[0].v[0] = comp;
    r->rows[0].v[1] = 10;
    r->matrix = matrix ? json_loads(matrix, 0, NULL) : NULL;
    r->meta = meta ? json_loads(meta, 0, NULL) : NULL;
    r->host_name = host ? strdup(host) : NULL;
}

static void cluster_free(aip__cluster *c)
{
    for (size_t i = 0; i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        free(r->cols[0]);
        free(r->cols[1]);
        free(r->cols);
        free(r->rows[0].step);
        free(r->rows[0].v);
        free(r->rows);
        json_decref(r->matrix);
        json_decref(r->comm);
        aip__cluster_free_meta(r);
        free(r->path);
    }
    aip__cluster_parallel_free(&c->par);
    free(c->r);
}

static void test_megatron(void)
{
    aip__cluster c = {.dir = "/tmp/none", .fd = -1, .progress_fd = -1};
    c.n = 8;
    c.r = calloc(8, sizeof *c.r);
    for (long i = 0; i < 8; i++)
        rank_init(&c.r[i], i, 1, NULL,
                  i == 3 ? "{\"distributed_args\": {\"world_size\": 8, "
                           "\"tensor_model_parallel_size\": 2, "
                           "\"pipeline_model_parallel_size\": 2, \"data_parallel_size\": 2}}"
                         : "{\"distributed_args\": {}}",
                  "h");
    ASSERT_EQ(aip__cluster_parallel_build(&c), AIP_OK);
    ASSERT_TRUE(c.par.ptd_ok);
    /* msprof-analyze: [(0,0,0),(0,0,1),(1,0,0),(1,0,1),(0,1,0),(0,1,1),(1,1,0),(1,1,1)] */
    static const long want[8][3] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1},
                                    {0, 1, 0}, {0, 1, 1}, {1, 1, 0}, {1, 1, 1}};
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++)
            ASSERT_EQ(c.par.ptd[i][k], want[i][k]);
    aip__cluster_parallel_free(&c.par);
    /* context parallelism where the layout raises IndexError there: no columns */
    json_object_set_new(c.r[3].meta, "distributed_args",
                        json_pack("{s:i, s:i, s:i, s:i, s:i}", "world_size", 8,
                                  "tensor_model_parallel_size", 2,
                                  "pipeline_model_parallel_size", 1, "data_parallel_size", 4,
                                  "context_parallel_size", 2));
    ASSERT_EQ(aip__cluster_parallel_build(&c), AIP_OK);
    ASSERT_TRUE(!c.par.ptd_ok);
    aip__cluster_parallel_free(&c.par);
    /* a world smaller than the ranks found: "parallel params ... is error" */
    json_object_set_new(c.r[3].meta, "distributed_args",
                        json_pack("{s:i, s:i}", "world_size", 4, "data_parallel_size", 4));
    ASSERT_EQ(aip__cluster_parallel_build(&c), AIP_OK);
    ASSERT_TRUE(!c.par.ptd_ok);
    cluster_free(&c);
}

/* Group g: global ranks 5, 7, 9 are its local 0, 1, 2. */
static const char *const M5 =
    "{\"step1\": {\"p2p\": {"
    "\"send-total@g\": {\"0-0\": {\"Transport Type\": \"LOCAL\", \"Transit Size(MB)\": 0, "
    "\"Transit Time(ms)\": 0}, \"0-2\": {\"Transport Type\": \"SDMA\", \"Transit Size(MB)\": 3, "
    "\"Transit Time(ms)\": 3}},"
    "\"send-top1@g\": {\"0-2\": {\"Transport Type\": \"SDMA\", \"Transit Size(MB)\": 99, "
    "\"Transit Time(ms)\": 1}},"
    "\"receive-total@g\": {\"1-0\": {\"Transport Type\": \"SDMA\", \"Transit Size(MB)\": 2, "
    "\"Transit Time(ms)\": 4}, \"3-0\": {\"Transport Type\": \"SDMA\", \"Transit Size(MB)\": 1, "
    "\"Transit Time(ms)\": 1}}}}}";
static const char *const M7 =
    "{\"step1\": {\"collective\": {\"allreduce-total@g\": {\"1-1\": {\"Transport Type\": "
    "\"LOCAL\", \"Transit Size(MB)\": 5, \"Transit Time(ms)\": 10}}}}}";
static const char *const M9 =
    "{\"step1\": {\"p2p\": {\"receive-total@g\": {\"2-2\": {\"Transport Type\": \"LOCAL\", "
    "\"Transit Size(MB)\": 0, \"Transit Time(ms)\": 0}, \"0-2\": {\"Transport Type\": "
    "\"SDMA\", \"Transit Size(MB)\": 3, \"Transit Time(ms)\": 6}}}}}";

static const aip__cluster_link *find(const aip__cluster_links *l, long s, long d)
{
    for (size_t k = 0; k < l->n; k++)
        if (l->v[k].src == s && l->v[k].dst == d)
            return &l->v[k];
    return NULL;
}

static void links_cluster(aip__cluster *c)
{
    memset(c, 0, sizeof *c);
    c->dir = "/tmp/none";
    c->fd = c->progress_fd = -1;
    c->n = 3;
    c->r = calloc(3, sizeof *c->r);
    rank_init(&c->r[0], 5, 1, M5, NULL, "a");
    rank_init(&c->r[1], 7, 2, M7, NULL, "a");
    rank_init(&c->r[2], 9, 3, M9, NULL, "b");
}

static void test_link_matrix(void)
{
    aip__cluster c;
    links_cluster(&c);
    aip__cluster_links l;
    ASSERT_EQ(aip__cluster_links_build(&c, &l), AIP_OK);
    ASSERT_EQ(l.unmapped, 1); /* local 3: no rank reported its self link */
    ASSERT_EQ(l.n, 5);        /* 5-5, 5-9, 7-5, 7-7, 9-9 */
    const aip__cluster_link *x = find(&l, 5, 9);
    ASSERT_TRUE(x != NULL);
    ASSERT_STREQ(x->transport, "RDMA"); /* hosts a and b */
    ASSERT_TRUE(x->mb == 3 && x->ms == 3 && x->records == 1); /* the sender's, not 6 ms; no top1 */
    x = find(&l, 7, 5);
    ASSERT_TRUE(x != NULL);
    ASSERT_STREQ(x->transport, "SDMA"); /* same host */
    ASSERT_TRUE(x->mb == 2 && x->ms == 4 && x->gbps == 0.5); /* only the receiver saw it */
    x = find(&l, 7, 7);
    ASSERT_TRUE(x != NULL && !strcmp(x->transport, "LOCAL") && x->mb == 5 && x->ms == 10);
    /* sorted by src, dst */
    for (size_t k = 1; k < l.n; k++)
        ASSERT_TRUE(l.v[k - 1].src < l.v[k].src ||
                    (l.v[k - 1].src == l.v[k].src && l.v[k - 1].dst < l.v[k].dst));
    aip__cluster_links_verdict(&c, &l);
    /* one link per transport: nothing to compare with */
    for (size_t k = 0; k < l.n; k++)
        ASSERT_TRUE(!l.v[k].slow);
    aip__cluster_links_free(&l);
    /* two SDMA links, one at a quarter of the other's bandwidth: it is slow */
    free(c.r[2].host_name);
    c.r[2].host_name = strdup("a");
    ASSERT_EQ(aip__cluster_links_build(&c, &l), AIP_OK);
    aip__cluster_links_verdict(&c, &l);
    ASSERT_TRUE(find(&l, 7, 5)->slow && !find(&l, 5, 9)->slow);
    aip__cluster_links_free(&l);
    cluster_free(&c);
}

static long long count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    long long n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return n;
}

static void test_db_rows(void)
{
    aip__cluster c;
    links_cluster(&c);
    c.r[0].host_uid = strdup("u1");
    c.r[0].devices = calloc(2, sizeof *c.r[0].devices);
    c.r[0].devices[0] = 0;
    c.r[0].devices[1] = 1;
    c.r[0].n_devices = 2;
    c.r[1].meta = json_loads("{\"distributed_args\": {\"rank\": 1, \"world_size\": 3, "
                             "\"data_parallel_size\": 3}, \"parallel_group_info\": {\"g\": "
                             "{\"group_name\": \"pp_x\", \"global_ranks\": [9, 5, 7]}}}",
                             0, NULL);
    ASSERT_EQ(aip__cluster_parallel_build(&c), AIP_OK);
    char dir[PATH_MAX];
    make_tmpdir(dir, sizeof dir, "cluster_db");
    ASSERT_TRUE(dir[0]);
    ASSERT_EQ(aip__cluster_write_db(&c, dir), AIP_OK);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cluster_analysis.db", dir);
    sqlite3 *db = NULL;
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE ClusterCommunicationMatrix (x)", NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    ASSERT_EQ(aip__cluster_write_db(&c, dir), AIP_OK); /* again: replaced, not appended */
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(count(db, "SELECT count(*) FROM ClusterStepTraceTime WHERE type = 'rank'"), 3);
    /* world 3 maps ranks 0..2; ranks 5, 7, 9 lie beyond it: NA (msprof-analyze
     * raises there) */
    ASSERT_EQ(count(db, "SELECT count(*) FROM ClusterStepTraceTime WHERE step = '1' AND "
                        "dp_index = 'NA' AND pp_index = 'NA' AND tp_index = 'NA'"),
              3);
    ASSERT_EQ(count(db, "SELECT computing FROM ClusterStepTraceTime WHERE \"index\" = '7'"), 2);
    /* p2p group g matched by name (aiprof's own records), pg_name pp_x */
    ASSERT_EQ(count(db, "SELECT count(*) FROM CommunicationGroupMapping WHERE type = 'p2p' AND "
                        "group_name = 'g' AND group_id = 'g' AND pg_name = 'pp_x' AND "
                        "rank_set = '(5,7,9)'"),
              1);
    ASSERT_EQ(count(db, "SELECT count(*) FROM HostInfo"), 3); /* (u1,a), (NULL,a), (NULL,b) */
    ASSERT_EQ(count(db, "SELECT count(*) FROM RankDeviceMap WHERE rankId = 5 AND hostUid = "
                        "'u1'"),
              2);
    ASSERT_EQ(count(db, "SELECT count(*) FROM ClusterBaseInfo WHERE key = 'distributed_args' "
                        "AND value = '{\"world_size\": 3, \"data_parallel_size\": 3}'"),
              1);
    ASSERT_EQ(count(db, "SELECT count(*) FROM sqlite_master WHERE name = "
                        "'ClusterCommunicationMatrix'"),
              1);
    sqlite3_close(db);
    /* a symbolic link where the database goes is refused */
    unlink(path);
    ASSERT_EQ(symlink("/tmp/aiprof_nowhere.db", path), 0);
    ASSERT_TRUE(aip__cluster_write_db(&c, dir) != AIP_OK);
    ASSERT_TRUE(access("/tmp/aiprof_nowhere.db", F_OK) != 0);
    rm_rf(dir);
    cluster_free(&c);
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_double_hash),
        TEST_CASE(test_megatron),
        TEST_CASE(test_link_matrix),
        TEST_CASE(test_db_rows),
    };
    return aip_test_run(cases, sizeof cases / sizeof cases[0]);
}
