/*
 * fuzz_raw_reader.c — libFuzzer target for everything that reads raw files:
 * the chunk reader, the model loader (chunk payload decoding), derivation
 * and every exporter: JSON, the CSVs, the memory timeline and summary
 * (written to /dev/null) and the database (a temporary file).
 *
 * Each input is run twice: as given, and with every chunk's CRC repaired.
 * Mutations almost always break a CRC, so without the repaired pass the
 * decoders behind the CRC check would rarely see hostile payloads.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 */
#include "export.h"
#include "memory_timeline.h"
#include "model.h"
#include "raw.h"
#include "summary.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64], db_path[64];
static int devnull = -1;

static void cleanup(void)
{
    if (path[0])
        unlink(path);
    if (db_path[0])
        unlink(db_path);
}

static void setup_once(void)
{
    if (path[0])
        return;
    snprintf(path, sizeof path, "/tmp/aip_fuzz_%ld.raw", (long)getpid());
    snprintf(db_path, sizeof db_path, "/tmp/aip_fuzz_%ld.db", (long)getpid());
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    setenv("AIPROF_QUIET", "1", 1);
    atexit(cleanup);
}

static int write_input(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    close(fd);
    return done == size ? 0 : -1;
}

static void read_chunks(void)
{
    aip__raw_reader *r;
    if (aip__raw_open(path, &r) != AIP_OK)
        return;
    aip__raw_chunk c;
    volatile uint32_t sum = 0;
    while (aip__raw_next(r, &c) == 1)
        for (uint32_t i = 0; i < c.size; i += 64)
            sum += c.payload[i]; /* touch the payload: must be readable */
    (void)aip__raw_problems(r)->first_message[0];
    aip__raw_close(r);
}

static void analyse(void)
{
    aip__model m;
    aip__model_init(&m);
    if (aip__model_load_raw(&m, path) == AIP_OK && aip__model_derive(&m) == AIP_OK &&
        devnull >= 0) {
        aip__out o;
        if (aip__out_init_fd(&o, devnull) == AIP_OK) {
            aip__export_trace_json(&m, &o);
            aip__export_operator_details(&m, &o);
            aip__export_step_trace(&m, &o);
            aip__export_op_statistic(&m, &o);
            aip__export_api_statistic(&m, &o);
            aip__export_memory_record(&m, &o);
            aip__export_operator_memory(&m, &o);
            aip__export_nic_csv(&m, &o);
            aip__export_roce_csv(&m, &o);
            aip__mem_timeline t;
            if (aip__mem_timeline_build(&m, "cpu", &t) == AIP_OK) {
                aip__mem_timeline_html(&t, &o);
                aip__mem_timeline_free(&t);
            }
            m.info.with_stack = m.info.profile_memory = 1; /* every table */
            aip__summary_data sum;
            if (aip__summary_build("fuzz", &m, &sum) == AIP_OK) {
                aip__summary_text(&sum, &o);
                aip__summary_html(&sum, &o);
                aip__summary_free(&sum);
            }
            aip__out_close(&o);
            if (aip__out_target(&o, db_path) == AIP_OK)
                aip__export_pytorch_db(&m, &o);
        }
    }
    aip__model_free(&m);
}

/* Give every chunk-looking header a correct CRC (sizes clamped to the data). */
static int repair(uint8_t *d, size_t size)
{
    int changed = 0;
    size_t off = AIP_RAW_HEADER_SIZE;
    while (off + AIP_CHUNK_HEADER_SIZE <= size) {
        aip__chunk_header h;
        memcpy(&h, d + off, sizeof h);
        if (h.magic != AIP_CHUNK_MAGIC) {
            off += 8;
            continue;
        }
        size_t room = size - off - AIP_CHUNK_HEADER_SIZE;
        if (h.payload_size > room)
            h.payload_size = (uint32_t)room;
        uint32_t crc = aip__chunk_crc(&h, d + off + AIP_CHUNK_HEADER_SIZE, h.payload_size);
        if (crc != h.crc32) {
            h.crc32 = crc;
            changed = 1;
        }
        memcpy(d + off, &h, sizeof h);
        off += AIP_CHUNK_HEADER_SIZE + h.payload_size + aip__chunk_pad(h.payload_size);
    }
    return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup_once();
    if (write_input(data, size) == 0) {
        read_chunks();
        analyse();
    }
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    if (repair(copy, size) && write_input(copy, size) == 0) {
        read_chunks();
        analyse();
    }
    free(copy);
    return 0;
}
