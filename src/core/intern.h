/*
 * intern.h — the process-wide string table behind aip_intern().
 *
 * Names, domains, shapes and call stacks are interned once to small ids;
 * records carry ids and the writer streams the id→text table into STRINGS
 * chunks.  Lookups are lock-free (readers walk bucket chains published with
 * release stores); first sight of a text takes a mutex.  Entries live for
 * the process lifetime, so a text pointer from aip__string_text() stays valid.
 */
#ifndef AIP_INTERN_H
#define AIP_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define AIP_STRING_MAX_LEN (64u * 1024u)   /* longer texts are truncated */

/* aip__intern_n() : id of text[0..len) (0 for len 0 or table full). */
uint32_t aip__intern_n(const char *text, size_t len);

/* Number of ids handed out so far: ids 1..count are defined. */
uint32_t aip__string_count(void);

/* Text and length of id (1..count), NULL for others. */
const char *aip__string_text(uint32_t id, uint32_t *len);

#endif
