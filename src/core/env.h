/*
 * env.h — facts about the running process: host, program, rank, and the
 * environment variables the seed says a profile records (ENV_VARIABLES).
 */
#ifndef AIP_ENV_H
#define AIP_ENV_H

#include "aiprof.h"
#include <jansson.h>
#include <time.h>

const char *aip__hostname(void);         /* cached; "localhost" if unknown */
const char *aip__program_name(void);     /* "Python" for python interpreters */
int aip__rank(void);                     /* RANK / OMPI_COMM_WORLD_RANK / PMI_RANK, -1 */
json_t *aip__env_variables(void);        /* new object of the recorded variables */
/* localtime_r(t), remembered per thread for the last second asked: a
 * trace's start asks twice (its directory's stamp, its log line). */
void aip__localtime(time_t t, struct tm *out);

#endif
