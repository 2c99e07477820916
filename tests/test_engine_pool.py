"""The pool self-play and rescoring hand their work to: one engine a worker, built once."""

import operator
import os
from functools import partial

import pytest

from protocol.training.engine_pool import EnginePool


def _pid_and_engine(engine: object, item: int) -> tuple[int, int, int]:
    return os.getpid(), id(engine), item


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_order_or_all_of_them(workers):
    with EnginePool(partial(int, "7"), operator.add, workers) as pool:
        assert list(pool.map(range(50))) == [7 + i for i in range(50)]
        assert sorted(pool.map(range(50), ordered=False)) == [7 + i for i in range(50)]


def test_each_worker_builds_its_engine_once():
    with EnginePool(object, _pid_and_engine, 2) as pool:
        seen = list(pool.map(range(40)))
    engines = {pid: set() for pid, _, _ in seen}
    for pid, engine, _ in seen:
        engines[pid].add(engine)
    assert all(pid != os.getpid() for pid in engines)
    assert all(len(ids) == 1 for ids in engines.values())  # one engine per process
    assert [item for _, _, item in seen] == list(range(40))


def test_one_worker_runs_here_on_one_engine():
    with EnginePool(object, _pid_and_engine, 1) as pool:
        seen = list(pool.map(range(5))) + list(pool.map(range(5, 10)))
    assert {pid for pid, _, _ in seen} == {os.getpid()}
    assert len({engine for _, engine, _ in seen}) == 1
    assert [item for _, _, item in seen] == list(range(10))
