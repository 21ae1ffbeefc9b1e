# Blocking collectives back to back with skewed ranks and nonblocking ones outstanding across them
# (blocking collectives of a communicator share one tag: docs/collectives.md, "Tags").
weft_mpi_program(coll_seq coll_seq.c)
weft_mpi_tests(coll_seq NPS 1 2 3 4 ARGS 60 --weft TIMEOUT 120)
