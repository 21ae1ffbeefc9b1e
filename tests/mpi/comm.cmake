# Communicators and groups (docs/communicators.md): every program checks results exactly and runs
# under MPICH too (validate_mpich.sh).
set(comm_programs group_ops comm_dup comm_split comm_inter comm_nodes)
foreach(p ${comm_programs})
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(group_ops NPS 1 2 3 4 ARGS --weft)
weft_mpi_tests(comm_dup NPS 1 2 4 ARGS --weft)
weft_mpi_tests(comm_split NPS 1 2 3 4 ARGS --weft)
weft_mpi_tests(comm_inter NPS 2 3 4 ARGS --weft)
# Split_type by node (one node here; tests/ofi runs it on several with WEFT_NODE_SPLIT)
weft_mpi_tests(comm_nodes NPS 1 2 4 ARGS --weft)
