/*
 * cluster_links.h — the link matrix between global ranks that `aiprof
 * cluster` builds from the ranks' communication_matrix.json, its slow-link
 * verdict (cluster_links.c) and the HTML report that shows it
 * (cluster_html.c).
 */
#ifndef AIP_CLUSTER_LINKS_H
#define AIP_CLUSTER_LINKS_H

#include "cluster.h"

typedef struct aip__cluster_link {
    long src, dst;            /* global ranks; src == dst: the rank's own (LOCAL) link */
    char transport[16];       /* LOCAL, SDMA, RDMA, or what the files say */
    double mb, ms;            /* summed Transit Size(MB) and Transit Time(ms) */
    double gbps;              /* mb / ms (MB/ms, the files' GB/s); 0 without time */
    size_t records;           /* the matrix entries summed */
    int slow;                 /* named slow by the verdict */
    double median_gbps;       /* its transport's median (aip__cluster_links_mark); 0: none */
} aip__cluster_link;

typedef struct aip__cluster_links {
    aip__cluster_link *v;     /* sorted by src, dst, transport */
    size_t n;
    size_t unmapped;          /* entries whose local rank has no self link anywhere */
    size_t conflicts;         /* self links claiming a local rank another rank claimed */
} aip__cluster_links;

/* aip__cluster_links_build() : the matrix of the used ranks. */
aip_status aip__cluster_links_build(const aip__cluster *c, aip__cluster_links *out);
void aip__cluster_links_free(aip__cluster_links *l);

/* aip__cluster_links_mark() : the slow-link rule (cluster_links.c):
 * marks the slow links (->slow) and gives every link its transport's
 * median (->median_gbps); returns how many are slow.  The verdict calls it;
 * `aiprof advise` ranks what it marks (src/insight/advise_cluster.c). */
size_t aip__cluster_links_mark(aip__cluster_links *l);
/* aip__cluster_link_slow_end() : the end of `x` the slow-rank rule named
 * slow (c->slow), -1 when neither. */
long aip__cluster_link_slow_end(const aip__cluster *c, const aip__cluster_link *x);

/* aip__cluster_links_verdict() : the slow links with their numbers, to
 * c->fd; marks them (->slow). */
void aip__cluster_links_verdict(const aip__cluster *c, aip__cluster_links *l);

/* aip__cluster_write_html() : cluster_report.html in out_dir: the per-rank
 * step breakdown as stacked bars and the link matrix as a heat map; slow
 * ranks (`slow[i]` for c->r[i]) and slow links highlighted. */
aip_status aip__cluster_write_html(const aip__cluster *c, const aip__cluster_links *l,
                                   const unsigned char *slow, const char *out_dir);

#endif
