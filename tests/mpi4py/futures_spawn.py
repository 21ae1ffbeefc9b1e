# Run as: mpiexec -n 1 python futures_spawn.py
# An MPIPoolExecutor that starts its 4 workers with MPI_Comm_spawn maps a function over 100 items;
# every result is checked, and the work must have run in the spawned processes.
import os
import time
from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def work(x):
    time.sleep(0.005)   # long enough that one worker cannot take every item
    return x * x + 1, os.getpid(), MPI.Comm.Get_parent() != MPI.COMM_NULL


def main():
    with MPIPoolExecutor(max_workers=4) as pool:
        assert pool.num_workers == 4, f"expected 4 workers, got {pool.num_workers}"
        results = list(pool.map(work, range(100), chunksize=1))
    values = [v for v, _, _ in results]
    assert values == [x * x + 1 for x in range(100)], "wrong results"
    pids = {p for _, p, _ in results}
    assert os.getpid() not in pids and all(s for _, _, s in results), "work ran outside the spawned workers"
    assert len(pids) >= 2, f"work ran on {len(pids)} worker(s)"
    print(f"futures spawn ok: 100 items on 4 spawned workers, {len(pids)} used", flush=True)


if __name__ == "__main__":
    main()
