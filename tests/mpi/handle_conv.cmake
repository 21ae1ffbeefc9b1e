# Handles as integers (toint/fromint, c2f/f2c) and status conversions (wm_handle_conv.c).
weft_mpi_program(handle_conv handle_conv.c)
weft_mpi_tests(handle_conv NPS 1 2 ARGS --weft)
