/*
 * train_loop.c — profiling a (tiny, real) C training loop with libaiprof.
 *
 * The program trains a 2-layer MLP on synthetic data the way a framework
 * would, and tells aiprof what it does, using nothing but <aiprof.h>:
 *
 *   main thread "trainer"      forward ops (aten::linear > aten::addmm, aten::relu,
 *                              aten::mse_loss), autograd backward ops
 *                              (AddmmBackward0 ...) linked to their forward ops by
 *                              sequence number and thread id, optimizer aten::add_;
 *                              "forward" / "backward" / "optimizer" annotations;
 *                              one aip_session_step() per training step.
 *   thread "dataloader"        builds batches inside mstx ranges of domain
 *                              "dataloader", marks epoch boundaries, and opens a
 *                              "batch_queued" range that the trainer closes
 *                              when it takes the batch (a cross-thread range).
 *   both                       memory events for every tensor alloc/free.
 *
 * The schedule decides which steps are recorded (default wait=1, warmup=1,
 * active=2, repeat=1: steps 2 and 3), exactly like torch.profiler.schedule.
 * Each finished trace is a `{worker}_{timestamp}_ascend_pt` directory; turn
 * it into trace_view.json and CSVs with `aiprof analyse DIR`.  (The batch
 * queued during the last recorded step is taken after the trace is saved, so
 * the analyser reports one mstx range start without end: that is expected.)
 *
 *   train_loop [--steps N] [--dir DIR] [--wait N] [--warmup N] [--active N]
 *              [--repeat N] [--skip-first N]
 */
#include <aiprof.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Every aiprof call that returns a status is checked; the message from
 * aip_last_error() names the parameter, path or state that was wrong. */
#define CHECK(call)                                                           \
    do {                                                                      \
        aip_status check_st_ = (call);                                        \
        if (check_st_ != AIP_OK) {                                            \
            fprintf(stderr, "train_loop: %s failed: %s: %s\n", #call,         \
                    aip_strerror(check_st_), aip_last_error());               \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

/* Model and batch sizes.  The shape strings given to aiprof below spell
 * these numbers out, as torch's record_shapes would. */
enum { BATCH = 64, IN = 128, HIDDEN = 256, OUT = 16, BATCHES_PER_EPOCH = 4 };
static const float LEARNING_RATE = 0.5f;

/* Call stacks as with_stack would report them: innermost frame first,
 * frames joined by ";\n". */
static const char STACK_FORWARD[] =
    "train_loop.c: mlp_forward;\ntrain_loop.c: train_step;\ntrain_loop.c: main";
static const char STACK_BACKWARD[] =
    "train_loop.c: mlp_backward;\ntrain_loop.c: train_step;\ntrain_loop.c: main";
static const char STACK_OPTIMIZER[] =
    "train_loop.c: sgd_step;\ntrain_loop.c: train_step;\ntrain_loop.c: main";

/* ------------------------------------------------------------------------
 * Command line
 * ---------------------------------------------------------------------- */
struct options {
    int64_t steps;
    const char *dir;
    aip_schedule schedule;
};

static int64_t parse_int(const char *flag, const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text ? text : "", &end, 10);
    if (!text || errno || end == text || *end) {
        fprintf(stderr, "train_loop: %s needs an integer (got \"%s\")\n", flag,
                text ? text : "");
        exit(2);
    }
    return v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    o->steps = 8;
    o->dir = "./aiprof_result";
    o->schedule = (aip_schedule){.skip_first = 0, .wait = 1, .warmup = 1, .active = 2,
                                 .repeat = 1};
    /* Every option takes a value, hence i += 2. */
    for (int i = 1; i < argc; i += 2) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--help") || !strcmp(flag, "-h")) {
            printf("usage: %s [--steps N] [--dir DIR] [--wait N] [--warmup N] [--active N]\n"
                   "          [--repeat N] [--skip-first N]\n", argv[0]);
            exit(0);
        }
        if (!strcmp(flag, "--dir")) {
            if (!value) {
                fprintf(stderr, "train_loop: --dir needs a directory\n");
                exit(2);
            }
            o->dir = value;
        } else if (!strcmp(flag, "--steps")) {
            o->steps = parse_int(flag, value);
        } else if (!strcmp(flag, "--wait")) {
            o->schedule.wait = parse_int(flag, value);
        } else if (!strcmp(flag, "--warmup")) {
            o->schedule.warmup = parse_int(flag, value);
        } else if (!strcmp(flag, "--active")) {
            o->schedule.active = parse_int(flag, value);
        } else if (!strcmp(flag, "--repeat")) {
            o->schedule.repeat = parse_int(flag, value);
        } else if (!strcmp(flag, "--skip-first")) {
            o->schedule.skip_first = parse_int(flag, value);
        } else {
            fprintf(stderr, "train_loop: unknown option %s (try --help)\n", flag);
            exit(2);
        }
    }
    /* Schedule values are left to aiprof to validate, so that a bad one
     * shows the library's own message; the step count is ours. */
    if (o->steps < 0) {
        fprintf(stderr, "train_loop: --steps must be >= 0\n");
        exit(2);
    }
}

/* ------------------------------------------------------------------------
 * Tensors with memory events
 *
 * A stand-in for a framework's caching allocator: every allocation and free
 * is reported with the running totals, and "reserved" memory grows in 1 MiB
 * segments that are kept, as a caching allocator keeps them.  The totals are
 * updated and reported under one lock so that consecutive events from the two
 * threads carry consistent totals.
 * ---------------------------------------------------------------------- */
typedef struct tensor {
    float *data;
    int rows, cols;
} tensor;

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t total_allocated, total_reserved;
enum { SEGMENT = 1 << 20 };

static tensor tensor_new(int rows, int cols)
{
    tensor t = {calloc((size_t)rows * cols, sizeof(float)), rows, cols};
    if (!t.data) {
        fprintf(stderr, "train_loop: out of memory\n");
        exit(1);
    }
    int64_t bytes = (int64_t)rows * cols * (int64_t)sizeof(float);
    pthread_mutex_lock(&alloc_lock);
    total_allocated += bytes;
    while (total_reserved < total_allocated)
        total_reserved += SEGMENT;
    /* CPU tensors have device index -1 in torch's memory records. */
    aip_memory_event((uint64_t)(uintptr_t)t.data, bytes, total_allocated, total_reserved,
                     AIP_DEVICE_CPU, -1);
    pthread_mutex_unlock(&alloc_lock);
    return t;
}

static void tensor_free(tensor *t)
{
    int64_t bytes = (int64_t)t->rows * t->cols * (int64_t)sizeof(float);
    pthread_mutex_lock(&alloc_lock);
    total_allocated -= bytes;
    aip_memory_event((uint64_t)(uintptr_t)t->data, -bytes, total_allocated, total_reserved,
                     AIP_DEVICE_CPU, -1);
    pthread_mutex_unlock(&alloc_lock);
    free(t->data);
    t->data = NULL;
}

/* c = a(T?) * b(T?), plain loops: small real work so op durations mean something. */
static void matmul(const tensor *a, int ta, const tensor *b, int tb, tensor *c)
{
    int n = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols, m = tb ? b->rows : b->cols;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            float sum = 0;
            for (int p = 0; p < k; p++) {
                float x = ta ? a->data[p * a->cols + i] : a->data[i * a->cols + p];
                float y = tb ? b->data[j * b->cols + p] : b->data[p * b->cols + j];
                sum += x * y;
            }
            c->data[i * c->cols + j] = sum;
        }
}

/* ------------------------------------------------------------------------
 * Ops: thin wrappers that keep the op descriptions in one place.
 * ---------------------------------------------------------------------- */
static uint64_t trainer_tid;   /* forward thread of every backward op */
static int64_t next_sequence;  /* autograd sequence numbers, as torch numbers nodes */

static void forward_op(const char *name, int64_t seq, const char *shapes, const char *dtypes)
{
    aip_op_info op = {.name = name, .sequence_number = seq, .input_shapes = shapes,
                      .input_dtypes = dtypes, .call_stack = STACK_FORWARD};
    aip_op_begin(&op);
}

/* A backward node names its forward op by (fwd_thread_id, sequence_number),
 * which is how analysis links the two ("fwdbwd" flow events). */
static void backward_op(const char *name, int64_t fwd_seq, const char *shapes,
                        const char *dtypes)
{
    aip_op_info op = {.name = name, .sequence_number = fwd_seq, .fwd_thread_id = trainer_tid,
                      .input_shapes = shapes, .input_dtypes = dtypes,
                      .call_stack = STACK_BACKWARD, .is_backward = 1};
    aip_op_begin(&op);
}

/* Ops that autograd does not record (inside backward, in the optimizer). */
static void plain_op(const char *name, const char *shapes, const char *dtypes,
                     const char *stack, int is_backward)
{
    aip_op_info op = {.name = name, .sequence_number = -1, .input_shapes = shapes,
                      .input_dtypes = dtypes, .call_stack = stack, .is_backward = is_backward};
    aip_op_begin(&op);
}

/* ------------------------------------------------------------------------
 * Dataloader thread: a bounded queue of batches
 * ---------------------------------------------------------------------- */
typedef struct batch {
    tensor x, y;
    uint64_t queued;     /* cross-thread range: in the queue until taken */
} batch;

/* One ready batch waits in the queue while the dataloader builds the next
 * one and the trainer works on the current one. */
enum { QUEUE_CAP = 1 };
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    batch items[QUEUE_CAP];
    int head, count;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static void queue_put(batch b)
{
    pthread_mutex_lock(&queue.lock);
    while (queue.count == QUEUE_CAP)
        pthread_cond_wait(&queue.changed, &queue.lock);
    /* "batch_queued" runs from here to the trainer's queue_take(), on the
     * other thread.  It starts under the queue lock so that the trainer
     * cannot take the batch before its range id is stored.  aip_range_start
     * never blocks, so calling it under a lock is fine; it returns 0 when
     * nothing records, and aip_range_end(0) does nothing. */
    b.queued = aip_range_start("dataloader", "batch_queued");
    queue.items[(queue.head + queue.count++) % QUEUE_CAP] = b;
    pthread_cond_broadcast(&queue.changed);
    pthread_mutex_unlock(&queue.lock);
}

static batch queue_take(void)
{
    pthread_mutex_lock(&queue.lock);
    while (queue.count == 0)
        pthread_cond_wait(&queue.changed, &queue.lock);
    batch b = queue.items[queue.head];
    queue.head = (queue.head + 1) % QUEUE_CAP;
    queue.count--;
    pthread_cond_broadcast(&queue.changed);
    pthread_mutex_unlock(&queue.lock);
    return b;
}

/* A uniform random number in [-0.5, 0.5]. */
static float uniform(unsigned *seed) { return (float)((double)rand_r(seed) / RAND_MAX) - 0.5f; }

/* The function the MLP learns: a fixed linear mix of two inputs per output. */
static float teacher(const float *x, int o) { return 0.5f * x[o] - 0.25f * x[o + OUT] + 0.1f; }

static void *dataloader_main(void *arg)
{
    int64_t batches = *(const int64_t *)arg;
    unsigned seed = 12345;
    aip_thread_name("dataloader");
    for (int64_t i = 0; i < batches; i++) {
        if (i % BATCHES_PER_EPOCH == 0) {
            char msg[64];
            snprintf(msg, sizeof msg, "epoch %" PRId64 " begin", i / BATCHES_PER_EPOCH);
            aip_mark("dataloader", msg);
        }
        AIP_RANGE_PUSH("dataloader", "load_batch");
        batch b = {tensor_new(BATCH, IN), tensor_new(BATCH, OUT), 0};
        for (int r = 0; r < BATCH; r++) {
            float *x = &b.x.data[r * IN];
            for (int c = 0; c < IN; c++)
                x[c] = uniform(&seed);
            for (int o = 0; o < OUT; o++)
                b.y.data[r * OUT + o] = teacher(x, o);
        }
        aip_range_pop();
        queue_put(b);
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * The model
 * ---------------------------------------------------------------------- */
typedef struct mlp {
    tensor w1, b1, w2, b2;
} mlp;

typedef struct activations {
    tensor h, out;
    float loss;
    int64_t seq_addmm1, seq_relu, seq_addmm2, seq_mse;
} activations;

typedef struct gradients {
    tensor dout, dw2, db2, dh, dw1, db1;
} gradients;

static void mlp_forward(const mlp *m, const batch *b, activations *a)
{
    AIP_ANNOTATION_PUSH("forward");
    a->h = tensor_new(BATCH, HIDDEN);
    a->out = tensor_new(BATCH, OUT);

    forward_op("aten::linear", -1, "[[64, 128], [128, 256], [256]]", "[float, float, float]");
    a->seq_addmm1 = next_sequence++;
    forward_op("aten::addmm", a->seq_addmm1, "[[256], [64, 128], [128, 256]]",
               "[float, float, float]");
    matmul(&b->x, 0, &m->w1, 0, &a->h);
    for (int i = 0; i < BATCH * HIDDEN; i++)
        a->h.data[i] += m->b1.data[i % HIDDEN];
    aip_op_end();
    aip_op_end();

    a->seq_relu = next_sequence++;
    forward_op("aten::relu", a->seq_relu, "[[64, 256]]", "[float]");
    for (int i = 0; i < BATCH * HIDDEN; i++)
        a->h.data[i] = a->h.data[i] > 0 ? a->h.data[i] : 0;
    aip_op_end();

    forward_op("aten::linear", -1, "[[64, 256], [256, 16], [16]]", "[float, float, float]");
    a->seq_addmm2 = next_sequence++;
    forward_op("aten::addmm", a->seq_addmm2, "[[16], [64, 256], [256, 16]]",
               "[float, float, float]");
    matmul(&a->h, 0, &m->w2, 0, &a->out);
    for (int i = 0; i < BATCH * OUT; i++)
        a->out.data[i] += m->b2.data[i % OUT];
    aip_op_end();
    aip_op_end();

    a->seq_mse = next_sequence++;
    forward_op("aten::mse_loss", a->seq_mse, "[[64, 16], [64, 16]]", "[float, float]");
    double sum = 0;
    for (int i = 0; i < BATCH * OUT; i++) {
        double d = a->out.data[i] - b->y.data[i];
        sum += d * d;
    }
    a->loss = (float)(sum / (BATCH * OUT));
    aip_op_end();
    aip_annotation_pop();
}

static void bias_grad(const tensor *d, tensor *db)
{
    for (int c = 0; c < d->cols; c++) {
        float s = 0;
        for (int r = 0; r < d->rows; r++)
            s += d->data[r * d->cols + c];
        db->data[c] = s;
    }
}

/* Backward runs in reverse order of the forward ops, one autograd node per
 * recorded forward op, each carrying that op's sequence number. */
static void mlp_backward(const mlp *m, const batch *b, const activations *a, gradients *g)
{
    AIP_ANNOTATION_PUSH("backward");
    g->dout = tensor_new(BATCH, OUT);
    g->dw2 = tensor_new(HIDDEN, OUT);
    g->db2 = tensor_new(1, OUT);
    g->dh = tensor_new(BATCH, HIDDEN);
    g->dw1 = tensor_new(IN, HIDDEN);
    g->db1 = tensor_new(1, HIDDEN);

    backward_op("MseLossBackward0", a->seq_mse, "[[], [64, 16], [64, 16]]",
                "[float, float, float]");
    plain_op("aten::mse_loss_backward", "[[], [64, 16], [64, 16]]", "[float, float, float]",
             STACK_BACKWARD, 1);
    for (int i = 0; i < BATCH * OUT; i++)
        g->dout.data[i] = 2.0f * (a->out.data[i] - b->y.data[i]) / (BATCH * OUT);
    aip_op_end();
    aip_op_end();

    backward_op("AddmmBackward0", a->seq_addmm2, "[[64, 16]]", "[float]");
    plain_op("aten::mm", "[[256, 64], [64, 16]]", "[float, float]", STACK_BACKWARD, 1);
    matmul(&a->h, 1, &g->dout, 0, &g->dw2);
    aip_op_end();
    plain_op("aten::mm", "[[64, 16], [16, 256]]", "[float, float]", STACK_BACKWARD, 1);
    matmul(&g->dout, 0, &m->w2, 1, &g->dh);
    aip_op_end();
    plain_op("aten::sum", "[[64, 16]]", "[float]", STACK_BACKWARD, 1);
    bias_grad(&g->dout, &g->db2);
    aip_op_end();
    aip_op_end();

    backward_op("ReluBackward0", a->seq_relu, "[[64, 256]]", "[float]");
    plain_op("aten::threshold_backward", "[[64, 256], [64, 256], []]", "[float, float, Scalar]",
             STACK_BACKWARD, 1);
    for (int i = 0; i < BATCH * HIDDEN; i++)
        if (a->h.data[i] <= 0)
            g->dh.data[i] = 0;
    aip_op_end();
    aip_op_end();

    backward_op("AddmmBackward0", a->seq_addmm1, "[[64, 256]]", "[float]");
    plain_op("aten::mm", "[[128, 64], [64, 256]]", "[float, float]", STACK_BACKWARD, 1);
    matmul(&b->x, 1, &g->dh, 0, &g->dw1);
    aip_op_end();
    plain_op("aten::sum", "[[64, 256]]", "[float]", STACK_BACKWARD, 1);
    bias_grad(&g->dh, &g->db1);
    aip_op_end();
    aip_op_end();
    aip_annotation_pop();
}

static void sgd_update(tensor *param, const tensor *grad, const char *shapes)
{
    plain_op("aten::add_", shapes, "[float, float, Scalar]", STACK_OPTIMIZER, 0);
    for (int i = 0; i < param->rows * param->cols; i++)
        param->data[i] -= LEARNING_RATE * grad->data[i];
    aip_op_end();
}

static void sgd_step(mlp *m, const gradients *g)
{
    AIP_ANNOTATION_PUSH("optimizer");
    AIP_ANNOTATION_PUSH("Optimizer.step#SGD.step");
    sgd_update(&m->w1, &g->dw1, "[[128, 256], [128, 256], []]");
    sgd_update(&m->b1, &g->db1, "[[256], [256], []]");
    sgd_update(&m->w2, &g->dw2, "[[256, 16], [256, 16], []]");
    sgd_update(&m->b2, &g->db2, "[[16], [16], []]");
    aip_annotation_pop();
    aip_annotation_pop();
}

static float train_step(mlp *m)
{
    batch b = queue_take();
    aip_range_end(b.queued);

    activations a;
    gradients g;
    mlp_forward(m, &b, &a);
    mlp_backward(m, &b, &a, &g);
    sgd_step(m, &g);

    /* Free everything this step allocated, including the dataloader's batch,
     * so allocations and frees balance. */
    tensor *done[] = {&g.db1, &g.dw1, &g.dh, &g.db2, &g.dw2, &g.dout,
                      &a.out, &a.h, &b.y, &b.x};
    for (size_t i = 0; i < sizeof done / sizeof done[0]; i++)
        tensor_free(done[i]);
    return a.loss;
}

/* ------------------------------------------------------------------------
 * Profiling session
 * ---------------------------------------------------------------------- */
static void on_trace_ready(aip_session *session, const char *result_dir, void *user_data)
{
    int *traces = user_data;
    ++*traces;
    printf("trace %d ready: %s\n", *traces, result_dir);
}

static const char *action_name(aip_action a)
{
    switch (a) {
    case AIP_ACTION_NONE: return "NONE";
    case AIP_ACTION_WARMUP: return "WARMUP";
    case AIP_ACTION_RECORD: return "RECORD";
    case AIP_ACTION_RECORD_AND_SAVE: return "RECORD_AND_SAVE";
    }
    return "?";
}

static void init_params(mlp *m)
{
    unsigned seed = 7;
    m->w1 = tensor_new(IN, HIDDEN);
    m->b1 = tensor_new(1, HIDDEN);
    m->w2 = tensor_new(HIDDEN, OUT);
    m->b2 = tensor_new(1, OUT);
    for (int i = 0; i < IN * HIDDEN; i++)
        m->w1.data[i] = uniform(&seed) * 0.2f;
    for (int i = 0; i < HIDDEN * OUT; i++)
        m->w2.data[i] = uniform(&seed) * 0.2f;
}

int main(int argc, char **argv)
{
    struct options opt;
    parse_options(argc, argv, &opt);

    int traces = 0;
    aip_config config;
    aip_config_init(&config);
    /* This machine has no NPU: ask only for CPU activity so that no
     * "unsupported activity" warning is logged. */
    config.activities = AIP_ACTIVITY_CPU;
    config.has_schedule = 1;
    config.schedule = opt.schedule;
    config.record_shapes = 1;
    config.profile_memory = 1;
    config.with_stack = 1;
    config.mstx = 1;
    config.dir_name = opt.dir;
    config.on_trace_ready = on_trace_ready;
    config.on_trace_ready_data = &traces;

    aip_session *session = NULL;
    CHECK(aip_session_create(&config, &session));
    CHECK(aip_session_add_metadata(session, "model", "mlp-128-256-16"));
    CHECK(aip_session_add_metadata(session, "optimizer", "SGD"));
    CHECK(aip_session_add_metadata_json(session, "hyperparameters",
                                        "{\"batch_size\": 64, \"lr\": 0.5}"));

    trainer_tid = (uint64_t)syscall(SYS_gettid);
    aip_thread_name("trainer");

    /* Parameters live for the whole run, outside any step. */
    mlp model;
    init_params(&model);

    CHECK(aip_session_start(session));

    pthread_t loader;
    int err = pthread_create(&loader, NULL, dataloader_main, &opt.steps);
    if (err) {
        fprintf(stderr, "train_loop: pthread_create: %s\n", strerror(err));
        return 1;
    }

    for (int64_t step = 0; step < opt.steps; step++) {
        aip_action action = aip_session_current_action(session);
        float loss = train_step(&model);
        printf("step %3" PRId64 "  loss %.5f  %s\n", step, loss, action_name(action));
        /* Ends step N: a RECORD_AND_SAVE step's trace is written here and
         * on_trace_ready runs on this thread. */
        CHECK(aip_session_step(session));
    }

    err = pthread_join(loader, NULL);
    if (err) {
        fprintf(stderr, "train_loop: pthread_join: %s\n", strerror(err));
        return 1;
    }
    /* Saves a trace that is still being recorded (a loop shorter than the
     * schedule) and discards one that is only warming up. */
    CHECK(aip_session_stop(session));

    uint64_t dropped = aip_session_dropped_events(session);
    const char *last = aip_session_result_dir(session);
    printf("%d trace(s) saved%s%s; %" PRIu64 " event(s) dropped\n", traces,
           last ? ", last in " : "", last ? last : "", dropped);
    aip_session_destroy(session);

    tensor *params[] = {&model.b2, &model.w2, &model.b1, &model.w1};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        tensor_free(params[i]);
    return 0;
}
