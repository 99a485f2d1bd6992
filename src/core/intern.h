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

#include "raw_format.h"

#include <stddef.h>
#include <stdint.h>

#define AIP_STRING_MAX_LEN AIP_RAW_STRING_MAX_LEN /* longer texts are cut, and counted */

/* aip__intern_n() : id of text[0..len) (0 for len 0 or table full). */
uint32_t aip__intern_n(const char *text, size_t len);

/* How many texts were cut to AIP_STRING_MAX_LEN (or up to 3 bytes less,
 * not to split a UTF-8 character) since the process began:
 * every aip__intern_n() of a longer text counts (a relaxed atomic, on that
 * path only).  A trace reports the difference between its start and end. */
uint64_t aip__strings_cut(void);

/* How many distinct texts that are not valid UTF-8 were interned since the
 * process began (counted once, when first interned; a trace reports the
 * difference between its start and end, as for cuts). */
uint64_t aip__strings_invalid_utf8(void);

/* Number of ids handed out so far: ids 1..count are defined. */
uint32_t aip__string_count(void);

/* Text and length of id (1..count), NULL for others. */
const char *aip__string_text(uint32_t id, uint32_t *len);

#endif
