# Premature release with nonblocking collectives: communicators, datatypes (Ialltoallw's per-peer
# types too) and user ops freed before the wait (issue 4's object lifetime).
weft_mpi_program(coll_release coll_release.c)
weft_mpi_tests(coll_release NPS 1 2 3 4)
