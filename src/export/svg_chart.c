/*
 * svg_chart.c — the SVG charts of the HTML pages (see svg_chart.h).
 *
 * Coordinates are printed with one decimal: enough for a screen, and the
 * page stays small.  Ticks are "nice" numbers (1, 2, 5 × 10^k), about six
 * per axis.  A layer of a stacked area is one polygon: its top left to
 * right, then the layer below it right to left.
 */
#include "svg_chart.h"
#include "text_escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ML 84 /* margins: left, right, top, bottom */
#define MR 20
#define MT 20
#define MB 50

void aip__out_html(aip__out *o, const char *s, size_t n)
{
    size_t max = AIP_HTML_ESC_MAX(n);
    if (max <= AIP_OUT_CAP / 2) {
        char *d = aip__out_reserve(o, max);
        aip__out_commit(o, d + aip__html_escape(s, n, d));
        return;
    }
    char *buf = malloc(max);
    if (!buf)
        return;
    aip__out_put(o, buf, aip__html_escape(s, n, buf));
    free(buf);
}

static double nice_step(double range)
{
    if (!(range > 0))
        return 1;
    double raw = range / 6, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* A tick value without noise digits ("0.3", not "0.30000000000000004"). */
static void put_tick(aip__out *o, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    aip__out_printf(o, "%.*f", dec > 9 ? 9 : dec, fabs(v) < step / 1e6 ? 0.0 : v);
}

typedef struct frame {
    double x0, x1, y0, y1;    /* data ranges */
    int w, h;
} frame;

static double px(const frame *f, double x)
{
    return ML + (x - f->x0) / (f->x1 - f->x0) * (f->w - ML - MR);
}

static double py(const frame *f, double y)
{
    return f->h - MB - (y - f->y0) / (f->y1 - f->y0) * (f->h - MT - MB);
}

static void axes(aip__out *o, const frame *f, const char *xl, const char *yl, int x_ticks)
{
    aip__out_printf(o, "<g class=\"axes\" stroke=\"#333\" stroke-width=\"1\">"
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
                    ML, f->h - MB, f->w - MR, f->h - MB, ML, MT, ML, f->h - MB);
    AIP_OUT_LIT(o, "<g class=\"ticks\" font-size=\"11\" fill=\"#333\">");
    double ys = nice_step(f->y1 - f->y0);
    for (double v = ceil(f->y0 / ys) * ys; v <= f->y1 + ys / 1e6 && v < f->y1 + 20 * ys; v += ys) {
        aip__out_printf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", ML - 6, py(f, v) + 4);
        put_tick(o, v, ys);
        aip__out_printf(o, "</text><line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                        "stroke=\"#ddd\"/>", ML, py(f, v), f->w - MR, py(f, v));
    }
    if (x_ticks) {
        double xs = nice_step(f->x1 - f->x0);
        for (double v = ceil(f->x0 / xs) * xs; v <= f->x1 + xs / 1e6 && v < f->x1 + 20 * xs;
             v += xs) {
            aip__out_printf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", px(f, v),
                            f->h - MB + 16);
            put_tick(o, v, xs);
            AIP_OUT_LIT(o, "</text>");
        }
    }
    AIP_OUT_LIT(o, "</g>\n");
    aip__out_printf(o, "<text class=\"xlabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                    "font-size=\"13\">", (ML + f->w - MR) / 2, f->h - 8);
    aip__out_html_str(o, xl);
    aip__out_printf(o, "</text><text class=\"ylabel\" transform=\"translate(14,%d) rotate(-90)\" "
                    "text-anchor=\"middle\" font-size=\"13\">", (MT + f->h - MB) / 2);
    aip__out_html_str(o, yl);
    AIP_OUT_LIT(o, "</text>\n");
}

static void svg_open(aip__out *o, const char *id, int w, int h)
{
    AIP_OUT_LIT(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"");
    aip__out_html_str(o, id);
    aip__out_printf(o, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
                    "font-family=\"sans-serif\">\n", w, h, w, h);
}

void aip__svg_area_chart(aip__out *o, const aip__svg_area *c)
{
    frame f = {0, 1, 0, 1, c->width, c->height};
    if (c->n) {
        f.x0 = c->x[0];
        f.x1 = c->x[c->n - 1] > f.x0 ? c->x[c->n - 1] : f.x0 + 1;
    }
    double ymax = 0;
    for (size_t i = 0; i < c->n && c->layers; i++)
        if (c->top[c->layers - 1][i] > ymax)
            ymax = c->top[c->layers - 1][i];
    f.y1 = ymax > 0 ? ymax * 1.05 : 1;
    svg_open(o, c->id, c->width, c->height);
    for (size_t l = 0; l < c->layers && c->n; l++) {
        AIP_OUT_LIT(o, "<polygon class=\"layer\" fill=\"");
        aip__out_html_str(o, c->colors[l]);
        AIP_OUT_LIT(o, "\" fill-opacity=\"0.7\" stroke=\"none\" points=\"");
        for (size_t i = 0; i < c->n; i++)
            aip__out_printf(o, "%.1f,%.1f ", px(&f, c->x[i]), py(&f, c->top[l][i]));
        for (size_t i = c->n; i-- > 0;)
            aip__out_printf(o, "%.1f,%.1f ", px(&f, c->x[i]), py(&f, l ? c->top[l - 1][i] : 0));
        AIP_OUT_LIT(o, "\"><title>");
        aip__out_html_str(o, c->names[l]);
        AIP_OUT_LIT(o, "</title></polygon>\n");
    }
    axes(o, &f, c->x_label, c->y_label, 1);
    AIP_OUT_LIT(o, "<g class=\"legend\" font-size=\"11\">");
    for (size_t l = 0; l < c->layers; l++) {
        int y = MT + 4 + 15 * (int)l;
        aip__out_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"",
                        c->width - MR - 150, y);
        aip__out_html_str(o, c->colors[l]);
        aip__out_printf(o, "\" fill-opacity=\"0.7\"/><text x=\"%d\" y=\"%d\">",
                        c->width - MR - 135, y + 9);
        aip__out_html_str(o, c->names[l]);
        AIP_OUT_LIT(o, "</text>");
    }
    AIP_OUT_LIT(o, "</g></svg>\n");
}

void aip__svg_bar_chart(aip__out *o, const aip__svg_bars *c)
{
    frame f = {0, c->n ? (double)c->n : 1, 0, 1, c->width, c->height};
    double ymax = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->values[i] > ymax)
            ymax = c->values[i];
    f.y1 = ymax > 0 ? ymax * 1.05 : 1;
    svg_open(o, c->id, c->width, c->height);
    double slot = (double)(c->width - ML - MR) / (c->n ? (double)c->n : 1);
    size_t every = c->n > 30 ? (c->n + 29) / 30 : 1; /* at most ~30 labels */
    for (size_t i = 0; i < c->n; i++) {
        double x = px(&f, (double)i) + slot * 0.1, y = py(&f, c->values[i]);
        AIP_OUT_LIT(o, "<rect class=\"bar\" fill=\"");
        aip__out_html_str(o, c->color);
        aip__out_printf(o, "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", x, y,
                        slot * 0.8, py(&f, 0) - y);
        if (c->labels && c->labels[i])
            aip__out_html_str(o, c->labels[i]);
        aip__out_printf(o, ": %.3f</title></rect>\n", c->values[i]);
        if (c->labels && c->labels[i] && i % every == 0) {
            aip__out_printf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">",
                            x + slot * 0.4, c->height - MB + 16);
            aip__out_html_str(o, c->labels[i]);
            AIP_OUT_LIT(o, "</text>\n");
        }
    }
    axes(o, &f, c->x_label, c->y_label, 0);
    AIP_OUT_LIT(o, "</svg>\n");
}

void aip__svg_stacked_bars(aip__out *o, const aip__svg_stack *c)
{
    frame f = {0, c->n ? (double)c->n : 1, 0, 1, c->width, c->height};
    double ymax = 0;
    for (size_t i = 0; i < c->n; i++) {
        double t = 0;
        for (size_t l = 0; l < c->layers; l++)
            t += c->values[l][i] > 0 ? c->values[l][i] : 0;
        ymax = t > ymax ? t : ymax;
    }
    /* headroom above the tallest bar for the legend (top right) */
    double plot_h = c->height - MT - MB, legend_h = 15.0 * (double)c->layers + 10;
    f.y1 = ymax > 0 ? ymax * (plot_h > 2 * legend_h ? plot_h / (plot_h - legend_h) : 1.05) : 1;
    svg_open(o, c->id, c->width, c->height);
    double slot = (double)(c->width - ML - MR) / (c->n ? (double)c->n : 1);
    size_t every = c->n > 40 ? (c->n + 39) / 40 : 1; /* at most ~40 labels */
    for (size_t i = 0; i < c->n; i++) {
        double x = px(&f, (double)i) + slot * 0.1, base = 0;
        int mark = c->mark && c->mark[i];
        aip__out_printf(o, "<g class=\"stack%s\">", mark ? " marked" : "");
        for (size_t l = 0; l < c->layers; l++) {
            double v = c->values[l][i] > 0 ? c->values[l][i] : 0;
            double y = py(&f, base + v);
            AIP_OUT_LIT(o, "<rect class=\"seg\" fill=\"");
            aip__out_html_str(o, c->colors[l]);
            aip__out_printf(o, "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
                            x, y, slot * 0.8, py(&f, base) - y);
            aip__out_html_str(o, c->labels[i]);
            AIP_OUT_LIT(o, " ");
            aip__out_html_str(o, c->names[l]);
            aip__out_printf(o, ": %.3f</title></rect>", v);
            base += v;
        }
        if (mark)
            aip__out_printf(o, "<rect fill=\"none\" stroke=\"red\" stroke-width=\"2\" x=\"%.1f\" "
                            "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                            x, py(&f, base), slot * 0.8, py(&f, 0) - py(&f, base));
        AIP_OUT_LIT(o, "</g>\n");
        if (i % every == 0) {
            aip__out_printf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\"%s>",
                            x + slot * 0.4, c->height - MB + 16,
                            mark ? " font-weight=\"bold\" fill=\"red\"" : "");
            aip__out_html_str(o, c->labels[i]);
            AIP_OUT_LIT(o, "</text>\n");
        }
    }
    axes(o, &f, c->x_label, c->y_label, 0);
    AIP_OUT_LIT(o, "<g class=\"legend\" font-size=\"11\">");
    for (size_t l = 0; l < c->layers; l++) {
        int y = MT + 4 + 15 * (int)l;
        aip__out_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"",
                        c->width - MR - 250, y);
        aip__out_html_str(o, c->colors[l]);
        aip__out_printf(o, "\"/><text x=\"%d\" y=\"%d\">", c->width - MR - 235, y + 9);
        aip__out_html_str(o, c->names[l]);
        AIP_OUT_LIT(o, "</text>");
    }
    AIP_OUT_LIT(o, "</g></svg>\n");
}
