# Process topologies (docs/topologies.md): every program checks its results exactly and runs
# under MPICH too (validate_mpich.sh, without --weft).
foreach(p topo_cart topo_graph)
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(topo_cart NPS 1 2 3 4 ARGS --weft)
weft_mpi_tests(topo_graph NPS 1 2 3 4 ARGS --weft)
