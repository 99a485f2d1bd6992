/*
 * db_comm.c — COMMUNICATION_OP of ascend_pytorch_profiler.db (the table
 * torch_npu inherits from msprof, reference §2.4), one row per recorded
 * communication op, when any was recorded (host-only databases keep their
 * tables):
 *
 * - opName: the op's name as communication.json keys it
 *   ("hcom_allReduce__3_0_1", comm_derive.c); opType: its type
 *   ("allReduce", "send", ...); groupName: the group's name as the
 *   communication outputs write it (aip__comm_group_label: the hash of its
 *   parallel_group_info key, msprof-analyze's join); algType: "N/A" (MPI
 *   and gloo do not tell their algorithm) — all ids into STRING_IDS
 *   (msprof's range, from 0, as the device tables);
 * - dataType: an id of ENUM_HCCL_DATA_TYPE (HCCL's HcclDataType numbers,
 *   which msprof-analyze's slow_link and computational_op_masking join to
 *   size the data): the recorded MPI or torch element type mapped onto it
 *   by size and kind ("MPI_FLOAT", "float32" -> FP32); a type HCCL has no
 *   name for (bool, complex, derived MPI types) -> 255 RESERVED, never a
 *   guess; NULL when no type was recorded;
 * - startNs / endNs: the op's launch and completion; opId counted across
 *   the model from 0; count: elements; rankSize: the group's size;
 *   deviceId -1 (host communication; RANK_DEVICE_MAP's "no device");
 *   connectionId NULL (no CANN API call launched it); relay / retry 0.
 *
 * COMMUNICATION_OP and ENUM_HCCL_DATA_TYPE exist in every database, empty
 * when nothing communicated, as in torch_npu's (msprof creates them for
 * every device profile): msprof-analyze's recipes (free_analysis,
 * slow_rank, cluster_time_summary, hccl_sum, ...) query them without
 * asking whether they exist.
 *
 * It is written at every profiler_level, unlike communication.json,
 * communication_matrix.json and analysis.db's CommAnalyzer* tables
 * (Level1+): COMMUNICATION_OP is the op-level record (msprof has the HCCL
 * ops at task_time l0; the task-level COMMUNICATION_TASK_INFO and the
 * analyze output need Level1's HCCL trace, msprof-analyze's p2p_pairing
 * says "check whether the data level is at level1" of the latter), and
 * step_trace_time's communication columns, written at Level0 too, rest on
 * the same ops.
 */
#include "db_pytorch.h"
#include "comm_derive.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

static const aip__db_col comm_op_cols[] = {
    {"opName", "INTEGER"},  {"startNs", "INTEGER"}, {"endNs", "INTEGER"},
    {"connectionId", "INTEGER"}, {"groupName", "INTEGER"}, {"opId", "INTEGER"},
    {"relay", "INTEGER"},   {"retry", "INTEGER"},   {"dataType", "INTEGER"},
    {"algType", "INTEGER"}, {"count", "NUMERIC"},   {"opType", "INTEGER"},
    {"deviceId", "INTEGER"}, {"rankSize", "INTEGER"}};
static const aip__db_table tbl_comm_op = {"COMMUNICATION_OP", comm_op_cols, 14, 5};
static const aip__db_col enum_cols[] = {{"id", "INTEGER"}, {"name", "TEXT"}};
static const aip__db_table tbl_enum_hccl_dtype = {"ENUM_HCCL_DATA_TYPE", enum_cols, 2, 0};

/* HCCL's HcclDataType (hccl_types.h), msprof's ENUM_HCCL_DATA_TYPE rows. */
static const struct { int id; const char *name; } hccl_types[] = {
    {0, "INT8"},   {1, "INT16"},  {2, "INT32"},   {3, "FP16"},  {4, "FP32"},
    {5, "INT64"},  {6, "UINT64"}, {7, "UINT8"},   {8, "UINT16"}, {9, "UINT32"},
    {10, "FP64"},  {11, "BFP16"}, {12, "INT128"}, {255, "RESERVED"}};
#define HCCL_RESERVED 255

/* MPI's predefined type names (MPI_Type_get_name) and torch's dtype names
 * (Python's, "float32") -> HcclDataType.  C's int/long/short sizes are
 * the LP64 ones every platform aiprof builds on has. */
static const struct { const char *name; int id; } dtype_map[] = {
    {"MPI_CHAR", 0},           {"MPI_SIGNED_CHAR", 0},  {"MPI_INT8_T", 0},
    {"MPI_SHORT", 1},          {"MPI_INT16_T", 1},      {"MPI_INT", 2},
    {"MPI_INT32_T", 2},        {"MPI_FLOAT", 4},        {"MPI_LONG", 5},
    {"MPI_LONG_LONG", 5},      {"MPI_LONG_LONG_INT", 5}, {"MPI_INT64_T", 5},
    {"MPI_UNSIGNED_LONG", 6},  {"MPI_UNSIGNED_LONG_LONG", 6}, {"MPI_UINT64_T", 6},
    {"MPI_BYTE", 7},           {"MPI_UNSIGNED_CHAR", 7}, {"MPI_UINT8_T", 7},
    {"MPI_UNSIGNED_SHORT", 8}, {"MPI_UINT16_T", 8},     {"MPI_UNSIGNED", 9},
    {"MPI_UINT32_T", 9},       {"MPI_DOUBLE", 10},
    {"int8", 0},    {"int16", 1},   {"short", 1},    {"int32", 2},   {"int", 2},
    {"float16", 3}, {"half", 3},    {"float32", 4},  {"float", 4},   {"int64", 5},
    {"long", 5},    {"uint64", 6},  {"uint8", 7},    {"uint16", 8},  {"uint32", 9},
    {"float64", 10}, {"double", 10}, {"bfloat16", 11}};

int aip__hccl_data_type(const char *dtype, size_t n)
{
    for (size_t i = 0; i < sizeof dtype_map / sizeof *dtype_map; i++)
        if (strlen(dtype_map[i].name) == n && !memcmp(dtype_map[i].name, dtype, n))
            return dtype_map[i].id;
    return HCCL_RESERVED;
}

static void enum_hccl_dtype(aip__db *d)
{
    aip__db_insert ins;
    if (aip__db_insert_begin(d, &tbl_enum_hccl_dtype, &ins))
        return;
    for (size_t i = 0; i < sizeof hccl_types / sizeof *hccl_types; i++) {
        aip__db_i64(&ins, 0, hccl_types[i].id);
        aip__db_text(&ins, 1, hccl_types[i].name, strlen(hccl_types[i].name));
        aip__db_row(&ins);
    }
    aip__db_insert_end(&ins);
}

int aip__db_has_comm(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].comm_ops.n)
            return 1;
    return 0;
}

static void id_or_null(aip__db_insert *ins, int col, int64_t id)
{
    if (id < 0)
        aip__db_null(ins, col);
    else
        aip__db_i64(ins, col, id);
}

aip_status aip__db_write_comm(aip__db *d, const aip__model *m, aip__db_strings *str)
{
    enum_hccl_dtype(d);
    aip__db_insert ins;
    aip_status s = aip__db_insert_begin(d, &tbl_comm_op, &ins);
    if (s)
        return AIP_OK; /* the database's status reports it */
    if (!aip__db_has_comm(m)) {
        aip__db_insert_end(&ins); /* the table, empty */
        return str->status;
    }
    int64_t na = aip__dbs_text(str, "N/A", 3), op_id = 0;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        aip__comm_name *names;
        s = aip__comm_op_names(p, &names);
        for (size_t k = 0; k < p->comm_ops.n && !s; k++) {
            const aip__comm_event *e = &p->comm_ops.v[k];
            const aip__comm_group_info *g = aip__model_comm_group(p, e->group);
            id_or_null(&ins, 0, aip__dbs_text(str, names[k].s, strlen(names[k].s)));
            aip__db_i64(&ins, 1, e->start);
            aip__db_i64(&ins, 2, e->end);
            aip__db_null(&ins, 3);
            id_or_null(&ins, 4, g ? aip__dbs_text(str, g->label, strlen(g->label)) : -1);
            aip__db_i64(&ins, 5, op_id++);
            aip__db_i64(&ins, 6, 0);
            aip__db_i64(&ins, 7, 0);
            size_t dn = 0;
            const char *dt = e->dtype ? aip__model_str(p, e->dtype, &dn) : "";
            id_or_null(&ins, 8, dn ? aip__hccl_data_type(dt, dn) : -1);
            id_or_null(&ins, 9, na);
            aip__db_i64(&ins, 10, (int64_t)e->count);
            id_or_null(&ins, 11, aip__dbs_text(str, names[k].type, strlen(names[k].type)));
            aip__db_i64(&ins, 12, -1);
            if (g)
                aip__db_i64(&ins, 13, g->n_ranks);
            else
                aip__db_null(&ins, 13);
            aip__db_row(&ins);
        }
        free(names);
    }
    aip__db_insert_end(&ins);
    return s ? s : str->status;
}
