"""check_opencl.py — compares what ocl_prog saw itself (its OUT file) with
what the analyser's model holds (ocl_dump's lines); used by
tests/e2e/test_opencl.sh.  Exits 1 with the differences.

Usage: check_opencl.py MODE run|linked PROGRAM_OUT DUMP [KERNELS_PER_THREAD]
(linked: ocl_prog_linked, whose timed commands run inside an annotation
"step", their launching calls' parent)
"""
import sys

APP_EVENT = 0x04              # AIP_TASKF_APP_EVENT
PROFILING_INFO_NOT_AVAILABLE = -7
ERROR_BOUND_NS = 5000         # the alignment target


def read_program(path):
    timed, info = [], {"kernel": []}
    for line in open(path):
        key, *values = line.split()
        value = values[0]
        if len(values) > 1:
            info[key] = [int(v) for v in values]
        elif key == "kernel":
            info["kernel"].append(value)
        elif key.startswith("cl"):
            timed.append((key, int(value)))
        else:
            info[key] = int(value)
    return timed, info


def read_dump(path):
    d = {"device": [], "call": [], "task": [], "memory": []}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] in ("align", "stats"):
            d[f[0]] = [int(x) for x in f[1:]]
        else:
            d[f[0]].append(f[1:])
    return d


def main():
    mode, how, prog_out, dump_path = sys.argv[1:5]
    timed, info = read_program(prog_out)
    d = read_dump(dump_path)
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    tasks, calls = d["task"], d["call"]
    n_tasks, with_call, unaligned, bad, dropped = d["stats"]
    launches = info["launches"]
    # Every enqueue once: one task and one launching call per enqueue.
    expect(n_tasks == launches, f"{n_tasks} device tasks for {launches} enqueues")
    expect(with_call == launches, f"{with_call} tasks linked to their call, {launches} enqueues")
    launching = sum(1 for c in calls if int(c[3]) != 0)
    expect(launching == launches, f"{launching} calls with a correlation id, {launches} enqueues")
    expect(unaligned == 0 and bad == 0 and dropped == 0,
           f"unaligned {unaligned}, bad records {bad}, dropped {dropped}")
    early, late, checked = d["align"]
    expect(early == 0 and checked == n_tasks,
           f"alignment: {early} of {checked} tasks start before their enqueue began")
    # Where every command is waited for by the next wait of its thread (not
    # in "bad": an out-of-order queue finished at the end; nor "threads":
    # a thread's next clFinish may be another queue's; nor "batches", which
    # waits by blocking reads, and for its last commands not at all).
    expect(late == 0 or mode in ("bad", "threads", "batches"),
           f"alignment: {late} of {checked} tasks end after the next wait returned")
    expect(len(d["device"]) == 1, f"devices: {d['device']}")
    for dev in d["device"]:
        err = int(dev[5])
        expect(0 <= err <= ERROR_BOUND_NS, f"device {dev[1]}: error bound {err} ns")

    if mode == "accuracy":
        # Durations equal OpenCL's own, to the ns, command by command.
        first_queue = tasks[0][4]
        mine = [(t[0], int(t[5])) for t in tasks
                if int(t[13]) & APP_EVENT and t[4] == first_queue]
        expect(mine == timed, "durations differ from the program's own:\n  program " +
               str(timed) + "\n  aiprof  " + str(mine))
        expect(info.get("plain_profiling") == PROFILING_INFO_NOT_AVAILABLE,
               f"the queue without profiling answered {info.get('plain_profiling')}")
        kernels = [t for t in tasks if t[1] == "vadd" and t[10] == "64"]
        expect(kernels and kernels[0][7:10] == ["4096", "0", "0"],
               f"vadd work sizes: {kernels[:1]}")
        expect(any(t[1] == "scale" and t[7] == "1" for t in tasks), "scale (clEnqueueTask)")
        reads = [t for t in tasks if t[0] == "clEnqueueReadBuffer"]
        expect(reads and all(t[1:4] == ["Memcpy DtoH", "2", "2"] and t[6] == "16384"
                             for t in reads), f"reads: {reads[:1]}")
        image_copies = [t for t in tasks if t[0] in ("clEnqueueWriteImage", "clEnqueueReadImage")]
        expect(all(t[6] == "16384" for t in image_copies), f"image copies: {image_copies}")
        if "image2d_bytes" in info:  # clCreateImage2D: an allocation of its size
            expect(any(int(m[1]) == info["image2d_bytes"] for m in d["memory"]),
                   f"no {info['image2d_bytes']}-byte allocation for clCreateImage2D")
        native = [t for t in tasks if t[0] == "clEnqueueNativeKernel"]
        expect(all(t[1] == "NativeKernel" for t in native), f"native kernels: {native}")
        allocs = sum(1 for m in d["memory"] if int(m[1]) > 0)
        frees = sum(1 for m in d["memory"] if int(m[1]) < 0)
        expect(allocs >= 4 and allocs == frees, f"memory: {allocs} allocations, {frees} frees")
        in_step = sum(1 for c in calls if int(c[3]) != 0 and c[4] == "step")
        if how == "linked":
            expect(in_step == len(timed), f"{in_step} launching calls have the annotation "
                   f"'step' as parent, {len(timed)} were enqueued inside it")
    elif mode == "batches":
        # The kept events' durations equal OpenCL's own (the program read
        # them itself, in enqueue order).
        mine = [(t[0], int(t[5])) for t in tasks if int(t[13]) & APP_EVENT]
        expect(mine == timed, "durations differ from the program's own:\n  program " +
               str(timed) + "\n  aiprof  " + str(mine))
        expect(len(timed) == 100, f"{len(timed)} kept events")
        queues = {t[4] for t in tasks if t[0] == "clEnqueueNDRangeKernel"}
        expect(len(queues) == 3, f"kernels on queues {queues}")
    elif mode == "threads":
        queues = {t[4] for t in tasks}
        expect(len(queues) == 4, f"queues {queues}")
        per_thread = int(sys.argv[5])
        expect(launches == 4 * (per_thread + 2), f"launches {launches}")
        app = sum(1 for t in tasks if int(t[13]) & APP_EVENT)
        expect(app == 4 * (per_thread // 2), f"{app} tasks with the application's event")
    elif mode == "reuse":
        # A kernel or queue at a released one's address is known afresh.
        names = [t[1] for t in tasks if t[0] == "clEnqueueNDRangeKernel"]
        expect(names == info["kernel"], f"kernel names {names}, launched {info['kernel']}")
        labels = [t[4] for t in tasks if t[0] == "clEnqueueNDRangeKernel"]
        expect(len(set(labels)) == len(labels), f"queues {labels}")
        print(f"check_opencl.py reuse: {info['reused_kernels']} kernel and "
              f"{info['reused_queues']} queue addresses reused")
    elif mode == "errors":
        # The failed enqueues on a valid queue are recorded as calls that
        # launched nothing (a NULL queue is not one: passed through); the
        # one that worked has its task.
        failed = [c[0] for c in calls if c[0].startswith("clEnqueue") and c[3] == "0"]
        expect(failed == ["clEnqueueNDRangeKernel", "clEnqueueReadBuffer", "clEnqueueReadBuffer",
                          "clEnqueueMapBuffer"], f"failed enqueues recorded: {failed}")
    elif mode == "bad":
        expect(info["plain_properties"] == 0, f"plain queue properties {info['plain_properties']}")
        expect(info["ooo_properties"] == 1, f"out-of-order queue properties {info['ooo_properties']}")
        expect(info["plain_profiling"] == PROFILING_INFO_NOT_AVAILABLE,
               f"profiling info on the plain queue: {info['plain_profiling']}")
        expect(info["event_status"] == 0, f"event status {info['event_status']}")

    if errors:
        print("check_opencl.py " + mode + ":\n  " + "\n  ".join(errors))
        return 1
    print(f"check_opencl.py {mode}: {n_tasks} tasks, {checked} aligned within the bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
