/*
 * cluster_progress.c — the progress of `aiprof cluster` on a terminal: one
 * line, rewritten in place ("\r"), saying how many rank directories are
 * analysed or read out of how many, with a bar; the line ends when the
 * count is complete.  Only when the caller gave a terminal
 * (aip_cluster_options.progress_fd); otherwise the plain lines of
 * cluster.c are the progress.  Redrawn only when the bar or the percentage
 * changes, so 10,000 directories cost ~100 writes, not 10,000.
 */
#include "cluster.h"

#include <stdio.h>
#include <unistd.h>

#define WIDTH 30

void aip__cluster_progress(const aip__cluster *c, const char *what, size_t done, size_t total)
{
    if (c->progress_fd < 0 || !total)
        return;
    size_t pct = done * 100 / total, prev = done ? (done - 1) * 100 / total : (size_t)-1;
    if (done && done < total && pct == prev)
        return;
    char bar[WIDTH + 1];
    size_t fill = done * WIDTH / total;
    for (size_t i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = 0;
    char line[160];
    int n = snprintf(line, sizeof line, "\r[%s] %3zu%%  %zu/%zu rank directories %s%s", bar, pct,
                     done, total, what, done == total ? "\n" : "");
    if (n > 0) {
        ssize_t w = write(c->progress_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w; /* a progress line that cannot be shown is not an error */
    }
}
