# Run as: mpiexec -n 5 python -m mpi4py.futures futures_map.py
# An MPIPoolExecutor on the 4 other ranks maps a function over 100 items; every result is checked,
# and every worker must have taken part.
import time
from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def work(x):
    time.sleep(0.005)   # long enough that one worker cannot take every item
    return x * x + 1, MPI.COMM_WORLD.Get_rank()


def main():
    with MPIPoolExecutor() as pool:
        assert pool.num_workers == 4, f"expected 4 workers, got {pool.num_workers}"
        results = list(pool.map(work, range(100), chunksize=1))
    values = [v for v, _ in results]
    assert values == [x * x + 1 for x in range(100)], "wrong results"
    ranks = {r for _, r in results}
    assert ranks <= {1, 2, 3, 4} and len(ranks) >= 2, f"work ran on ranks {sorted(ranks)}"
    print(f"futures ok: 100 items on 4 workers, ranks used {sorted(ranks)}", flush=True)


if __name__ == "__main__":
    main()
