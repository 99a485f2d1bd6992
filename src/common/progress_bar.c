/*
 * progress_bar.c — the progress bar (progress_bar.h): one line on a
 * terminal, rewritten with "\r".  The line never gets shorter as the
 * count grows (the percentage is padded, the failure count only appears
 * and grows), so no erase is needed for it; a failure line, which may be
 * shorter than the bar it replaces, erases the line first (ESC [ K).
 */
#include "progress_bar.h"

#include <stdio.h>
#include <unistd.h>

#define WIDTH 30

static void put(int fd, const char *s, int n, size_t cap)
{
    if (n <= 0)
        return;
    ssize_t w = write(fd, s, (size_t)n < cap ? (size_t)n : cap - 1);
    (void)w; /* a progress line that cannot be shown is not an error */
}

void aip__progress_bar(int fd, const char *label, size_t done, size_t total, size_t failed,
                       const char *failed_dir)
{
    if (fd < 0 || !total)
        return;
    char line[1200];
    if (failed_dir) {
        /* A directory's name is anyone's bytes: none of them may move the
         * cursor or change the terminal. */
        char name[1001];
        size_t i = 0;
        for (; failed_dir[i] && i < sizeof name - 1; i++) {
            unsigned char ch = (unsigned char)failed_dir[i];
            name[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
        }
        name[i] = 0;
        put(fd, line, snprintf(line, sizeof line, "\r\033[K[%zu/%zu] FAILED %s\n", done, total,
                               name), sizeof line);
    }
    size_t pct = done * 100 / total, prev = done ? (done - 1) * 100 / total : (size_t)-1;
    if (!failed_dir && done && done < total && pct == prev)
        return;
    char bar[WIDTH + 1];
    size_t fill = done * WIDTH / total;
    for (size_t i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = 0;
    char more[48] = "";
    if (failed)
        snprintf(more, sizeof more, ", %zu failed", failed);
    put(fd, line, snprintf(line, sizeof line, "\r[%s] %3zu%%  %zu/%zu %.200s%s%s", bar, pct, done,
                           total, label, more, done == total ? "\n" : ""), sizeof line);
}
