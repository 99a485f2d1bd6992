/*
 * svg_chart.h — inline SVG charts for the HTML pages (memory timeline,
 * summary report): stacked areas and bars with axes, ticks and a legend.
 * No script, no external resource: the pages open anywhere, offline.
 * Every text that reaches the page is HTML-escaped here.
 */
#ifndef AIP_SVG_CHART_H
#define AIP_SVG_CHART_H

#include "outbuf.h"

typedef struct aip__svg_area {
    int width, height;
    const char *id;               /* element id (plain ASCII) */
    const char *x_label, *y_label;
    const double *x;              /* n points, increasing */
    size_t n;
    const double *const *top;     /* per layer: its top (cumulative), n values */
    const char *const *names;     /* per layer, for the legend */
    const char *const *colors;    /* per layer, CSS colour names */
    size_t layers;
} aip__svg_area;

typedef struct aip__svg_bars {
    int width, height;
    const char *id;
    const char *x_label, *y_label;
    const char *const *labels;    /* per bar, may be NULL */
    const double *values;
    size_t n;
    const char *color;
} aip__svg_bars;

/* Stacked bars: per bar the layers' values (not cumulative) one above the
 * other; marked bars are outlined in red with a bold label. */
typedef struct aip__svg_stack {
    int width, height;
    const char *id;
    const char *x_label, *y_label;
    const char *const *labels;    /* per bar */
    size_t n;
    const double *const *values;  /* per layer: n values */
    const char *const *names;     /* per layer, for the legend */
    const char *const *colors;    /* per layer */
    size_t layers;
    const unsigned char *mark;    /* per bar, may be NULL */
} aip__svg_stack;

/* aip__out_html() : `s` escaped for HTML text or a quoted attribute. */
void aip__out_html(aip__out *o, const char *s, size_t n);
static inline void aip__out_html_str(aip__out *o, const char *s) { aip__out_html(o, s, strlen(s)); }

void aip__svg_area_chart(aip__out *o, const aip__svg_area *c);
void aip__svg_bar_chart(aip__out *o, const aip__svg_bars *c);
void aip__svg_stacked_bars(aip__out *o, const aip__svg_stack *c);

#endif
