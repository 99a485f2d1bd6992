/*
 * schedule.c — torch.profiler.schedule in C.
 *
 * The arithmetic mirrors torch.profiler.schedule exactly (including the
 * division-based repeat check), so that a program moved from torch to aiprof
 * records the same steps; tests/fixtures/schedule_cases.json holds actions
 * generated from torch itself.
 */
#include "aiprof.h"
#include "error.h"

#include <stdint.h>

static int schedule_invalid(const aip_schedule *s)
{
    return s->wait < 0 || s->warmup < 0 || s->active <= 0 || s->repeat < 0 || s->skip_first < 0 ||
           s->wait > INT64_MAX - s->warmup || s->wait + s->warmup > INT64_MAX - s->active;
}

aip_status aip_schedule_validate(const aip_schedule *s)
{
    if (!s)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule is NULL");
    if (s->wait < 0)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule wait must be >= 0 (got %lld)",
                         (long long)s->wait);
    if (s->warmup < 0)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule warmup must be >= 0 (got %lld)",
                         (long long)s->warmup);
    if (s->active <= 0)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule active must be > 0 (got %lld)",
                         (long long)s->active);
    if (s->repeat < 0)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule repeat must be >= 0 (got %lld)",
                         (long long)s->repeat);
    if (s->skip_first < 0)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule skip_first must be >= 0 (got %lld)",
                         (long long)s->skip_first);
    if (s->wait > INT64_MAX - s->warmup || s->wait + s->warmup > INT64_MAX - s->active)
        return aip__fail(AIP_ERR_INVALID_ARG, "schedule wait + warmup + active overflows");
    return AIP_OK;
}

aip_action aip_schedule_action(const aip_schedule *s, int64_t step)
{
    if (!s || step < 0 || schedule_invalid(s))
        return AIP_ACTION_NONE;
    if (step < s->skip_first)
        return AIP_ACTION_NONE;
    step -= s->skip_first;
    int64_t cycle = s->wait + s->warmup + s->active;
    /* torch: `repeat > 0 and step / num_steps >= repeat` in floating point;
     * integer division gives the same answer for every step below 2^53
     * (beyond that torch's own division rounds). */
    if (s->repeat > 0 && step / cycle >= s->repeat)
        return AIP_ACTION_NONE;
    int64_t mod = step % cycle;
    if (mod < s->wait)
        return AIP_ACTION_NONE;
    if (mod < s->wait + s->warmup)
        return AIP_ACTION_WARMUP;
    return mod < cycle - 1 ? AIP_ACTION_RECORD : AIP_ACTION_RECORD_AND_SAVE;
}
