/*
 * nvtx_prog.c — a program that speaks NVTX through NVIDIA's NVTX v3 C API
 * (the header-only library, built against the headers found on this
 * machine; never part of aiprof's sources), for tests/e2e/test_nvtx.sh.
 * nvtx_prog knows nothing of aiprof (profiled by `aiprof run`);
 * nvtx_prog_linked (AIP_LINKED) links libaiprof and records its own session
 * into $NVTX_AIP_DIR.  Each run, per step of 3:
 *   default domain: push "step" / pop around everything, push W "wide_ü"
 *   domain "train": push (registered string "forward") / pop, around a
 *     mark "tick" (nvtxMarkA, default domain) and a domain mark "dmark"
 *   start "async_default" ended by another thread; domain start "async_train"
 * and prints the levels push/pop returned ("levels 0 1 1 0" per step).
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef AIP_LINKED
#include "aiprof.h"
#endif

static volatile double sink;

static void work(void)
{
    double x = 0;
    for (int i = 0; i < 200000; i++)
        x += i * 0.5;
    sink = x;
}

static void *ender(void *arg)
{
    nvtxRangeEnd(*(nvtxRangeId_t *)arg);
    return NULL;
}

static nvtxEventAttributes_t attr(void)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

int main(void)
{
#ifdef AIP_LINKED
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = getenv("NVTX_AIP_DIR");
    cfg.mstx = 1;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "nvtx_prog: %s\n", aip_last_error());
        return 1;
    }
#endif
    nvtxDomainHandle_t train = nvtxDomainCreateA("train");
    nvtxStringHandle_t forward = nvtxDomainRegisterStringA(train, "forward");
    for (int step = 0; step < 3; step++) {
        int l0 = nvtxRangePushA("step");
        nvtxEventAttributes_t a = attr();
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = forward;
        int l1 = nvtxDomainRangePushEx(train, &a);
        nvtxMarkA("tick");
        a = attr();
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "dmark";
        nvtxDomainMarkEx(train, &a);
        work();
        int p1 = nvtxDomainRangePop(train);
        nvtxRangePushW(L"wide_\u00fc");
        work();
        nvtxRangePop();
        int p0 = nvtxRangePop();
        printf("levels %d %d %d %d\n", l0, l1, p1, p0);

        nvtxRangeId_t id = nvtxRangeStartA("async_default");
        a = attr();
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "async_train";
        nvtxRangeId_t did = nvtxDomainRangeStartEx(train, &a);
        work();
        nvtxDomainRangeEnd(train, did);
        pthread_t t;
        if (pthread_create(&t, NULL, ender, &id) == 0)
            pthread_join(t, NULL);
    }
    nvtxDomainDestroy(train);
#ifdef AIP_LINKED
    aip_session_stop(s);
    aip_session_destroy(s);
#endif
    return 0;
}
