// mpi.h seen from C++: it must compile cleanly (-pedantic -Werror), give C linkage to every
// function, and keep the layout C sees.
#include <mpi.h>
#include <cstddef>
#include <cstdio>

static_assert(sizeof(MPI_Status) == 32, "MPI_Status is 8 ints");
static_assert(offsetof(MPI_Status, MPI_ERROR) == 8, "MPI_ERROR third");
static_assert(MPI_ANY_TAG == -2 && MPI_THREAD_MULTIPLE == 4096, "constants");

int main()
{
    int major = -1, minor = -1;
    if (MPI_Get_version(&major, &minor) != MPI_SUCCESS || major != MPI_VERSION ||
        minor != MPI_SUBVERSION) {
        std::fprintf(stderr, "test_abi_header: MPI_Get_version gave %d.%d, expected %d.%d\n",
                     major, minor, MPI_VERSION, MPI_SUBVERSION);
        return 1;
    }
    if (MPI_COMM_WORLD == MPI_COMM_NULL || MPI_INT == MPI_DATATYPE_NULL) {
        std::fprintf(stderr, "test_abi_header: predefined handles collide\n");
        return 1;
    }
    std::printf("test_abi_header: mpi.h works from C++\n");
    return 0;
}
