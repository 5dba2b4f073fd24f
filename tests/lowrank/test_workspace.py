"""The workspace: entries made once per owner and key while one is active, none kept outside."""

import multiprocessing as mp

import numpy as np

import kbench
from kbench.lowrank.workspace import active


def _counted():
    made = []

    def make():
        made.append(1)
        return np.arange(3)
    return made, make


def test_an_entry_is_made_once_per_owner_and_key_while_a_workspace_is_active():
    made, make = _counted()
    first, second = kbench.load_dataset("synthetic:friedman1",
                                        n=100), kbench.load_dataset("synthetic:friedman1", n=100)
    with kbench.Workspace() as workspace:
        a = kbench.cached((first,), "k", make)
        assert kbench.cached((first,), "k", make) is a and len(made) == 1
        kbench.cached((second,), "k", make)  # an equal dataset is another owner: its own entry
        kbench.cached((first,), "other", make)
        assert len(made) == 3 and len(workspace) == 3
        workspace.release(first)
        assert len(workspace) == 1
    kbench.cached((first,), "k", make)
    kbench.cached((first,), "k", make)  # outside a workspace: made anew each time, nothing kept
    assert len(made) == 5 and active() is None


def test_a_workspace_entered_again_is_the_same_one_and_the_outer_one_comes_back():
    made, make = _counted()
    outer, inner = kbench.Workspace(), kbench.Workspace()
    with outer:
        kbench.cached(("x",), "k", make)
        with inner:
            assert active() is inner
            kbench.cached(("x",), "k", make)
        assert active() is outer
        with outer:  # a job entering its context's workspace again
            kbench.cached(("x",), "k", make)
    assert len(made) == 2 and active() is None


def _child(workspace, report):
    with workspace:
        report.send(len(workspace))


def test_a_forked_job_sees_what_was_prepared_before_the_fork():
    workspace = kbench.Workspace()
    with workspace:
        kbench.cached(("data",), "exact", lambda: np.zeros(4))
    receive, send = mp.get_context("fork").Pipe(duplex=False)
    process = mp.get_context("fork").Process(target=_child, args=(workspace, send))
    process.start()
    assert receive.recv() == 1
    process.join()


def test_one_workspace_entered_by_several_threads_at_once():
    """A ``with`` block is its thread's: two threads entering one workspace, and leaving it in
    the other order, each find it active inside and none after."""
    import threading

    workspace, inside, gate, seen = kbench.Workspace(), threading.Barrier(2), threading.Event(), []

    def work(first: bool) -> None:
        with workspace:
            inside.wait(timeout=30)  # both inside at once
            if first:
                gate.wait(timeout=30)  # the second leaves first
            seen.append(active() is workspace)
            if not first:
                gate.set()
        seen.append(active() is None)

    threads = [threading.Thread(target=work, args=(first,)) for first in (True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert seen == [True, True, True, True] and active() is None
