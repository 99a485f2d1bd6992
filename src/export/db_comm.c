/*
 * db_comm.c — COMMUNICATION_OP of ascend_pytorch_profiler.db (the table
 * torch_npu inherits from msprof, reference §2.4), one row per recorded
 * communication op, when any was recorded (host-only databases keep their
 * tables):
 *
 * - opName: the op's name as communication.json keys it
 *   ("hcom_allReduce__3_0_1", comm_derive.c); opType: its type
 *   ("allReduce", "send", ...); groupName: the group's recorded name;
 *   dataType: the recorded element type's text ("MPI_FLOAT", "float32"),
 *   since msprof's ENUM_HCCL_DATA_TYPE does not name MPI's or torch's
 *   types; algType: "N/A" (MPI and gloo do not tell their algorithm) —
 *   all ids into STRING_IDS (msprof's range, from 0, as the device tables);
 * - startNs / endNs: the op's launch and completion; opId counted across
 *   the model from 0; count: elements; rankSize: the group's size;
 *   deviceId -1 (host communication; RANK_DEVICE_MAP's "no device");
 *   connectionId NULL (no CANN API call launched it); relay / retry 0.
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
    if (!aip__db_has_comm(m))
        return AIP_OK;
    aip__db_insert ins;
    aip_status s = aip__db_insert_begin(d, &tbl_comm_op, &ins);
    if (s)
        return AIP_OK; /* the database's status reports it */
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
            id_or_null(&ins, 4, g ? aip__dbs_raw(str, pi, g->name) : -1);
            aip__db_i64(&ins, 5, op_id++);
            aip__db_i64(&ins, 6, 0);
            aip__db_i64(&ins, 7, 0);
            id_or_null(&ins, 8, e->dtype ? aip__dbs_raw(str, pi, e->dtype) : -1);
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
