/*
 * config_names.c — names of configuration values read back from text
 * (profiler_info.json, a rank's metadata): the profiler level, the export
 * type, and the locale-free word comparison they use.  In src/common
 * because the result reader and `aiprof cluster` both parse them.
 */
#include "config_names.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

/* ASCII case folding, not strcasecmp(): the words are ASCII, and the answer
 * must not depend on the locale the profiled program set. */
int aip__same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        if (x != *b)
            return 0;
    }
    return *a == *b;
}

unsigned aip__export_type_parse(const char *text)
{
    if (!text)
        return 0;
    const char *dot = strrchr(text, '.'); /* "ExportType.Text" */
    const char *v = dot ? dot + 1 : text;
    if (aip__same_word(v, "text"))
        return AIP_EXPORT_TEXT;
    if (aip__same_word(v, "db"))
        return AIP_EXPORT_DB;
    return 0;
}

int aip__profiler_level_parse(const char *text, aip_profiler_level *out)
{
    if (!text)
        return -1;
    const char *dot = strrchr(text, '.'); /* "ProfilerLevel.Level1" */
    const char *v = dot ? dot + 1 : text;
#define LEVEL_ROW(value, name) {name, value},
    static const struct { const char *name; aip_profiler_level level; } names[] = {
        AIP__PROFILER_LEVELS(LEVEL_ROW)};
#undef LEVEL_ROW
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char lower[32]; /* aip__same_word() wants its second word in lower case */
        size_t k = 0;
        for (; names[i].name[k] && k + 1 < sizeof lower; k++)
            lower[k] = (char)tolower((unsigned char)names[i].name[k]);
        lower[k] = '\0';
        if (aip__same_word(v, lower)) {
            *out = names[i].level;
            return 0;
        }
    }
    return -1;
}

