# Process topologies and neighborhood collectives (docs/topologies.md): every program checks its
# results exactly and runs under MPICH too (validate_mpich.sh, without --weft).
foreach(p topo_cart topo_graph coll_neighbor)
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(topo_cart NPS 1 2 3 4 ARGS --weft)
weft_mpi_tests(topo_graph NPS 1 2 3 4 ARGS --weft)
# Neighbor_allgather(v), Neighbor_alltoall(v,w), blocking and nonblocking, on Cartesian grids
# (periodic, not, a periodic dimension of 1), a graph and two distributed graphs; blocks of 1 B
# to 40000 B (rendezvous, single copy from 32 KiB).
weft_mpi_tests(coll_neighbor NPS 1 2 3 4 ARGS 40000 --weft TIMEOUT 120)
