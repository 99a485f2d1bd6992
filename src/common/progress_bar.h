/*
 * progress_bar.h — the one progress bar of aiprof's long passes: `aiprof
 * analyse` and `aiprof cluster` (through aip_analyse_dirs()) and the
 * cluster pass's reading of the rank directories.  A line rewritten in
 * place on a terminal, "[#####.....]  50%  32/64 analysed, 1 failed", with
 * a line above it for each directory that failed.
 */
#ifndef AIP_PROGRESS_BAR_H
#define AIP_PROGRESS_BAR_H

#include <stddef.h>

/* aip__progress_bar() : show `done` of `total` `label` ("analysed", "rank
 * directories read"), `failed` of them failed, on `fd` (< 0 or total 0:
 * nothing).  `failed_dir` non-NULL: that one just failed, said on a line
 * of its own above the bar.  The bar is redrawn only when its percentage
 * changes, something failed, or the count is complete (then the line
 * ends), so 10,000 directories cost ~100 writes, not 10,000.  A bar that
 * cannot be written is not an error. */
void aip__progress_bar(int fd, const char *label, size_t done, size_t total, size_t failed,
                       const char *failed_dir);

#endif
