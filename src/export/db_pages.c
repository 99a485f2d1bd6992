/*
 * db_pages.c — the big tables of a database written as SQLite b-tree pages
 * directly (see db.h, "direct tables"), without SQLite's per-row work.
 *
 * Why: a profile's tables have millions of rows of integers, and SQLite
 * spends ~250 ns per row of them in its VM and b-tree code, which made the
 * database most of `aiprof analyse`'s time.  Encoding a record and
 * appending it to a page here costs a tenth of that.
 *
 * How: a direct table is created by SQLite as usual (CREATE TABLE gives it
 * an empty root page and its schema row).  Its rows are encoded in SQLite's
 * record format (https://www.sqlite.org/fileformat2.html §2.1) into table
 * leaf pages in memory, rowids 1, 2, ... as SQLite would give them; full
 * leaves go to a private side file (0600), after a reserved front of
 * AIP_DB_SIDE_RESERVE pages.  When SQLite has closed the database
 * (aip__db_close), SQLite's pages are copied into that front (the rest of
 * it becomes free pages) and the side file replaces SQLite's: the big part
 * is written once.  (If SQLite's pages do not fit, the leaves are copied
 * after them instead.)  Then the interior pages are built over the leaves
 * (every leaf at the same depth), the top node replaces the table's empty
 * root page, and the header's page count is updated last.  Leaf pages hold no page numbers, so they can be written
 * before their final place is known.  A table whose rows fit one leaf has
 * that leaf written as its root page.
 *
 * Only tables whose columns are all INTEGER qualify, and values are
 * integers or NULL (what INTEGER affinity stores them as, so the contents
 * are what SQLite's inserts give).  A table with an INTEGER PRIMARY KEY
 * (an alias of the rowid, stored as NULL in the record) must get its rows
 * in ascending key order, which every such table here has by construction
 * (ids counted up); a row out of order is an error, never a broken file.  The
 * database must have no auto-vacuum and no reserved bytes per page; both
 * are checked before anything is changed.
 */
#include "db.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint32_t aip__db_in_place_min_pages = 8 * AIP_DB_SIDE_RESERVE;

struct aip__db_leaf {
    uint32_t idx;             /* page index in the side file */
    int64_t key;              /* its largest rowid */
};

int aip__db_direct_ok(const aip__db_table *t)
{
    for (int i = 0; i < t->n_cols; i++)
        if (strcmp(t->cols[i].type, "INTEGER"))
            return 0;
    return 1;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* SQLite's varint: big-endian 7-bit groups, a ninth byte of 8 bits.
 * (Payload sizes take one or two bytes, rowids up to four.) */
static inline int put_varint(uint8_t *p, uint64_t v)
{
    if (v <= 0x7f) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v <= 0x3fff) {
        p[0] = (uint8_t)(0x80 | v >> 7);
        p[1] = (uint8_t)(v & 0x7f);
        return 2;
    }
    if (v <= 0x1fffff) {
        p[0] = (uint8_t)(0x80 | v >> 14);
        p[1] = (uint8_t)(0x80 | (v >> 7 & 0x7f));
        p[2] = (uint8_t)(v & 0x7f);
        return 3;
    }
    if (v & ((uint64_t)0xff000000 << 32)) {
        p[8] = (uint8_t)v;
        v >>= 8;
        for (int i = 7; i >= 0; i--, v >>= 7)
            p[i] = (uint8_t)((v & 0x7f) | 0x80);
        return 9;
    }
    uint8_t buf[10];
    int n = 0;
    do {
        buf[n++] = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    } while (v);
    buf[0] &= 0x7f;
    for (int i = 0; i < n; i++)
        p[i] = buf[n - 1 - i];
    return n;
}

/* Serial type and size of an integer, as SQLite 3.x (file format 4)
 * chooses them: 0 and 1 have no body, others the fewest bytes that hold
 * the value with its sign: by the bit length of v or ~v (tables below),
 * no chain of comparisons per column (millions of rows of a dozen). */
static const uint8_t len_of_bits[65] = {
    1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
    4, 4, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
static const uint8_t type_of_len[9] = {0, 1, 2, 3, 4, 0, 5, 0, 6};

static inline int int_type(int64_t v, int *len)
{
    if ((uint64_t)v <= 1) {
        *len = 0;
        return 8 + (int)v;
    }
    uint64_t u = (uint64_t)(v ^ (v >> 63)); /* v, or ~v when negative */
    int bits = u ? 64 - __builtin_clzll(u) : 0;
    *len = len_of_bits[bits];
    return type_of_len[*len];
}

static aip_status direct_fail(aip__db *d, aip_status code, const char *what)
{
    if (!d->status)
        d->status = aip__fail(code, "%s: %s", d->path, what);
    return d->status;
}

aip_status aip__db_direct_open(aip__db *d, const aip__db_table *t, aip__db_direct **out)
{
    *out = NULL;
    if (d->status)
        return d->status;
    for (size_t i = 0; i < d->n_direct; i++)
        if (!strcmp(d->direct[i]->name, t->name)) {
            *out = d->direct[i];
            return AIP_OK;
        }
    sqlite3_stmt *st = NULL;
    int root = 0, page = 0;
    if (sqlite3_prepare_v2(d->db, "SELECT rootpage FROM main.sqlite_master WHERE type='table' "
                           "AND name=?1", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        root = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(d->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        page = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (root < 2 || page < 512 || page > 65536 || (d->page_size && (uint32_t)page != d->page_size))
        return direct_fail(d, AIP_ERR_STATE, "no root page for a directly written table");
    d->page_size = (uint32_t)page;
    aip__db_direct *s = calloc(1, sizeof *s);
    aip__db_direct **grown = realloc(d->direct, (d->n_direct + 1) * sizeof *grown);
    if (grown)
        d->direct = grown;
    if (!s || !grown || !(s->leaf = malloc(d->page_size))) {
        free(s);
        return direct_fail(d, AIP_ERR_NOMEM, "no memory for a table's pages");
    }
    snprintf(s->name, sizeof s->name, "%s", t->name);
    s->root = (uint32_t)root;
    s->pk_col = t->pk_col;
    s->content = d->page_size;
    d->direct[d->n_direct++] = s;
    *out = s;
    return AIP_OK;
}

static aip_status write_all(aip__db *d, int fd, const void *buf, size_t n, off_t at,
                            const char *file)
{
    const char *p = buf;
    while (n) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!d->status)
                d->status = aip__fail(AIP_ERR_IO, "cannot write %s: %s", file,
                                      w < 0 ? strerror(errno) : "no progress");
            return d->status;
        }
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return AIP_OK;
}

/* The header of `s`'s current leaf: type 13, no free blocks; the unused
 * space zeroed (it held an earlier page: the file must be a function of
 * the data). */
static void leaf_header(aip__db_direct *s)
{
    uint8_t *pg = s->leaf;
    size_t used = 8 + 2 * (size_t)s->n_cells;
    memset(pg + used, 0, s->content - used);
    pg[0] = 13;
    put_be(pg + 1, 0, 2);
    put_be(pg + 3, (uint64_t)s->n_cells, 2);
    put_be(pg + 5, s->content == 65536 ? 0 : s->content, 2);
    pg[7] = 0;
}

/* Finish the current leaf of `s` and move it to the side file. */
static aip_status spill(aip__db *d, aip__db_direct *s)
{
    uint8_t *pg = s->leaf;
    leaf_header(s);
    if (d->side_fd <= 0) {
        if (snprintf(d->side, sizeof d->side, "%s.pages", d->tmp) >= (int)sizeof d->side)
            return direct_fail(d, AIP_ERR_PATH, "path too long");
        unlink(d->side);
        d->side_fd = open(d->side, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (d->side_fd < 0) {
            d->side_fd = 0;
            if (!d->status)
                d->status = aip__fail(AIP_ERR_IO, "cannot create %s: %s", d->side,
                                      strerror(errno));
            d->side[0] = 0;
            return d->status;
        }
    }
    if (s->n_leaves == s->cap_leaves) {
        size_t cap = s->cap_leaves ? 2 * s->cap_leaves : 64;
        struct aip__db_leaf *g = realloc(s->leaves, cap * sizeof *g);
        if (!g)
            return direct_fail(d, AIP_ERR_NOMEM, "no memory for a table's pages");
        s->leaves = g;
        s->cap_leaves = cap;
    }
    if (write_all(d, d->side_fd, pg, d->page_size,
                  ((off_t)AIP_DB_SIDE_RESERVE + d->side_pages) * d->page_size, d->side))
        return d->status;
    s->leaves[s->n_leaves++] = (struct aip__db_leaf){d->side_pages++, s->rowid};
    s->n_cells = 0;
    s->content = d->page_size;
    return AIP_OK;
}

void aip__db_direct_row(aip__db *d, aip__db_direct *s, const aip__db_val *col, int n)
{
    if (d->status)
        return;
    int64_t rowid = s->rowid + 1;
    if (s->pk_col >= 0) {
        const aip__db_val *k = &col[s->pk_col];
        if (k->kind != AIP_DBV_INT || (s->rows && k->u.i <= s->rowid)) {
            direct_fail(d, AIP_ERR_STATE, "a directly written table's keys are not ascending");
            return;
        }
        rowid = k->u.i;
    }
    /* the cell, built once: payload size and rowid (varints), then the
     * record: its header (its size, a serial type per column; n + 1 < 128,
     * so a byte each) and the bodies; 8 bytes of slack for whole-word
     * stores */
    uint8_t cell[18 + 1 + AIP_DB_MAX_COLS * 9 + 8];
    uint8_t bodies[AIP_DB_MAX_COLS * 8 + 8]; /* one pass: bodies here, copied after the header */
    uint8_t *hdr = cell + 18; /* after the largest two varints; moved below */
    uint8_t *bp = bodies;
    hdr[0] = (uint8_t)(1 + n);
    for (int i = 0; i < n; i++) {
        const aip__db_val *v = &col[i];
        if (v->kind == AIP_DBV_INT && i != s->pk_col) {
            int len;
            hdr[1 + i] = (uint8_t)int_type(v->u.i, &len);
            if (len) {
                /* big-endian, the value's low len bytes: one 8-byte store */
                uint64_t be = __builtin_bswap64((uint64_t)v->u.i << (64 - 8 * len));
                memcpy(bp, &be, 8);
                bp += len;
            }
        } else if (v->kind == AIP_DBV_NULL || i == s->pk_col) {
            hdr[1 + i] = 0;
        } else {
            direct_fail(d, AIP_ERR_INVALID_ARG, "a directly written table got a non-integer value");
            return;
        }
    }
    int body = (int)(bp - bodies);
    memcpy(hdr + 1 + n, bodies, (size_t)body);
    int plen = 1 + n + body;
    uint8_t pre[18];
    int np = put_varint(pre, (uint64_t)plen);
    np += put_varint(pre + np, (uint64_t)rowid);
    uint8_t *start = hdr - np;
    memcpy(start, pre, (size_t)np);
    int c = np + plen;
    if (s->n_cells && (int64_t)s->content - c < 8 + 2 * ((int64_t)s->n_cells + 1) && spill(d, s))
        return;
    s->content -= (uint32_t)c;
    memcpy(s->leaf + s->content, start, (size_t)c);
    put_be(s->leaf + 8 + 2 * s->n_cells, (uint64_t)s->content, 2);
    s->n_cells++;
    s->rowid = rowid;
    s->rows++;
}

static void direct_free(aip__db_direct *s)
{
    free(s->leaf);
    free(s->leaves);
    free(s);
}

void aip__db_direct_discard(aip__db *d)
{
    for (size_t i = 0; i < d->n_direct; i++)
        direct_free(d->direct[i]);
    free(d->direct);
    d->direct = NULL;
    d->n_direct = 0;
    if (d->side_fd > 0)
        close(d->side_fd);
    d->side_fd = 0;
    if (d->side[0])
        unlink(d->side);
    d->side[0] = 0;
}

/* Copy `len` bytes of `src` from `from` to `dst` at `at`. */
static aip_status copy_range(aip__db *d, int src, off_t from, int dst, off_t at, size_t left,
                             const char *src_name, const char *dst_name)
{
    char *buf = NULL;
    while (left && !d->status) {
        ssize_t n = copy_file_range(src, &from, dst, &at, left, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* no in-kernel copy here (or across these files): read and write */
            if (!buf && !(buf = malloc(1 << 20)))
                return direct_fail(d, AIP_ERR_NOMEM, "no memory to copy pages");
            size_t want = left < (1u << 20) ? left : (1u << 20);
            ssize_t r = pread(src, buf, want, from);
            if (r <= 0) {
                if (!d->status)
                    d->status = aip__fail(AIP_ERR_IO, "cannot read %s: %s", src_name,
                                          r < 0 ? strerror(errno) : "short file");
                break;
            }
            if (write_all(d, dst, buf, (size_t)r, at, dst_name))
                break;
            n = r;
            from += r;
            at += r;
        }
        left -= (size_t)n;
    }
    free(buf);
    return d->status;
}

/* Interior pages over `level` (page numbers and largest rowids; n > 1),
 * the top one at `root`, others from *next on. */
static aip_status build_tree(aip__db *d, int fd, const char *name, aip__db_direct *s,
                             struct aip__db_leaf *level, size_t n, uint32_t *next)
{
    uint32_t U = d->page_size;
    size_t cap = (U - 12) / 15 + 1; /* children per page: 4-byte pointer, 9-byte key, 2 */
    uint8_t *pg = malloc(U);
    if (!pg)
        return direct_fail(d, AIP_ERR_NOMEM, "no memory for a table's pages");
    while (n > 1 && !d->status) {
        size_t groups = (n + cap - 1) / cap, at = 0;
        for (size_t g = 0; g < groups && !d->status; g++) {
            /* even groups: never an interior page with no cell */
            size_t k = n / groups + (g < n % groups);
            memset(pg, 0, U);
            uint32_t content = U;
            for (size_t i = 0; i + 1 < k; i++) {
                uint8_t cell[13];
                put_be(cell, level[at + i].idx, 4);
                int c = 4 + put_varint(cell + 4, (uint64_t)level[at + i].key);
                content -= (uint32_t)c;
                memcpy(pg + content, cell, (size_t)c);
                put_be(pg + 12 + 2 * i, content, 2);
            }
            pg[0] = 5;
            put_be(pg + 3, k - 1, 2);
            put_be(pg + 5, content == 65536 ? 0 : content, 2);
            put_be(pg + 8, level[at + k - 1].idx, 4);
            uint32_t page = groups == 1 ? s->root : (*next)++;
            write_all(d, fd, pg, U, (off_t)(page - 1) * U, name);
            level[g] = (struct aip__db_leaf){page, level[at + k - 1].key};
            at += k;
        }
        n = groups;
    }
    free(pg);
    return d->status;
}

/* Free pages first+1 .. last-1 listed on trunk page `first` (the trunk
 * counts as free too): the part of the side file's reserved front that
 * SQLite's pages did not fill.  One trunk holds U/4 - 2 entries. */
static aip_status free_pages(aip__db *d, int fd, uint32_t first, uint32_t last, uint8_t *h)
{
    uint32_t U = d->page_size;
    uint8_t *pg = calloc(1, U);
    if (!pg)
        return direct_fail(d, AIP_ERR_NOMEM, "no memory for a table's pages");
    uint32_t n = last - first; /* leaves of the trunk */
    put_be(pg + 4, n, 4);
    for (uint32_t i = 0; i < n; i++)
        put_be(pg + 8 + 4 * i, first + 1 + i, 4);
    write_all(d, fd, pg, U, (off_t)(first - 1) * U, d->side);
    free(pg);
    put_be(h + 32, first, 4);
    put_be(h + 36, n + 1, 4);
    return d->status;
}

aip_status aip__db_direct_splice(aip__db *d)
{
    if (d->status || !d->n_direct)
        return d->status;
    uint32_t U = d->page_size;
    int fd = open(d->tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    uint8_t h[100];
    if (fd < 0 || fstat(fd, &st) || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
        if (fd >= 0)
            close(fd);
        return d->status = aip__fail(AIP_ERR_IO, "cannot reopen %s: %s", d->tmp, strerror(errno));
    }
    uint32_t hdr_page = (uint32_t)h[16] << 8 | h[17];
    if ((hdr_page == 1 ? 65536u : hdr_page) != U || h[20] || h[52] || h[53] || h[54] || h[55] ||
        st.st_size % U) {
        close(fd);
        return direct_fail(d, AIP_ERR_UNSUPPORTED, "unexpected database layout for direct tables");
    }
    uint32_t n_pages = (uint32_t)(st.st_size / U);
    /* the last leaf of a table that has several goes with the others */
    for (size_t i = 0; i < d->n_direct && !d->status; i++)
        if (d->direct[i]->n_leaves && d->direct[i]->n_cells)
            spill(d, d->direct[i]);
    /* Where the leaves are: SQLite's pages usually fit the side file's
     * reserved front, and then the side file becomes the database (its
     * leaves stay where they are; the rest of the front is free pages);
     * otherwise, or when the leaves are too few for the free pages to be
     * worth it, the leaves are copied after SQLite's pages. */
    int freelist = h[32] || h[33] || h[34] || h[35] || h[36] || h[37] || h[38] || h[39];
    int in_place = d->side_pages && d->side_pages >= aip__db_in_place_min_pages &&
                   n_pages <= AIP_DB_SIDE_RESERVE && !freelist;
    int out = fd;
    const char *out_name = d->tmp;
    uint32_t first_leaf = n_pages + 1;
    if (!d->status && in_place) {
        copy_range(d, fd, 0, d->side_fd, 0, (size_t)n_pages * U, d->tmp, d->side);
        if (n_pages < AIP_DB_SIDE_RESERVE)
            free_pages(d, d->side_fd, n_pages + 1, AIP_DB_SIDE_RESERVE, h);
        out = d->side_fd;
        out_name = d->side;
        first_leaf = AIP_DB_SIDE_RESERVE + 1;
    } else if (!d->status && d->side_pages) {
        copy_range(d, d->side_fd, (off_t)AIP_DB_SIDE_RESERVE * U, fd, (off_t)n_pages * U,
                   (size_t)d->side_pages * U, d->side, d->tmp);
    }
    uint32_t next = first_leaf + d->side_pages;
    for (size_t i = 0; i < d->n_direct && !d->status; i++) {
        aip__db_direct *s = d->direct[i];
        if (!s->n_leaves) {
            if (s->n_cells) { /* one leaf: it is the root */
                leaf_header(s);
                write_all(d, out, s->leaf, U, (off_t)(s->root - 1) * U, out_name);
            }
            continue;
        }
        for (size_t j = 0; j < s->n_leaves; j++)
            s->leaves[j].idx += first_leaf; /* side file index -> page number */
        if (s->n_leaves == 1) {
            /* cannot happen (a spill needs a second leaf) but would leave
             * a page unused: refuse rather than write a broken file */
            direct_fail(d, AIP_ERR_STATE, "a table of one spilled leaf");
            break;
        }
        build_tree(d, out, out_name, s, s->leaves, s->n_leaves, &next);
    }
    if (!d->status) {
        /* page count, valid because the change counter matches */
        uint32_t counter = ((uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27]) + 1;
        put_be(h + 24, counter, 4);
        put_be(h + 28, next - 1, 4);
        put_be(h + 92, counter, 4);
        write_all(d, out, h, sizeof h, 0, out_name);
    }
    if (!d->status && in_place) {
        /* the side file, with the database's mode, replaces SQLite's */
        if (fchmod(d->side_fd, st.st_mode & 07777) || rename(d->side, d->tmp))
            d->status = aip__fail(AIP_ERR_IO, "cannot replace %s: %s", d->tmp, strerror(errno));
        else
            d->side[0] = 0;
    }
    if (close(fd) && !d->status)
        d->status = aip__fail(AIP_ERR_IO, "cannot write %s: %s", d->tmp, strerror(errno));
    return d->status;
}
