"""aiprof and torch.profiler in one process: what aiprof installs to label
optimizer memory (profile_memory wraps Optimizer._optimizer_step_code, see
_memory_labels.py) must not break torch.profiler afterwards.  torch's
with_stack reads that function's __code__ at every start; a wrapper without
one made torch.profiler.profile(with_stack=True).start() raise
AttributeError (found by bench/python_start.py)."""
import textwrap

from conftest import needs_torch, run_python


@needs_torch
def test_torch_with_stack_after_aiprof_profile_memory():
    code = textwrap.dedent("""
        import torch, aiprof
        model = torch.nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 8)
        def step():
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        P = aiprof.profiler
        with P.profile(activities=[P.ProfilerActivity.CPU], profile_memory=True,
                       on_trace_ready=P.tensorboard_trace_handler("./a", analyse_flag=False)):
            step()
        step_code = torch.optim.Optimizer._optimizer_step_code
        assert isinstance(step_code, aiprof._C.StepHook), type(step_code)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    with_stack=True, profile_memory=True) as prof:
            step()
        names = {e.name for e in prof.events()}
        assert any(n.startswith("Optimizer.step#") for n in names), sorted(names)[:20]
        print("ok")
    """)
    proc = run_python(code)
    assert proc.stdout.strip().endswith("ok")
