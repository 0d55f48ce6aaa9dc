/*
 * romio_errclass: ROMIO's error-code maker (MPIO_Err_create_code, patch 0006)
 * given an invalid error class, as a buggy driver might pass one. Linked
 * with libromio.a itself (the function is internal to the library), with
 * stand-ins for the stripefs driver's symbols, and run without the library.
 *
 * Each case must come back as an error code whose class is valid (MPI_ERR_IO
 * for the invalid ones) and whose string keeps the driver's message; before
 * the guard, Open MPI aborted the job in MPI_Add_error_code. Prints one
 * "ok: ..." or "FAIL: ..." line per case; exit status 0 if all are ok.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int MPIO_Err_create_code(int lastcode, int fatal, const char fcname[], int line, int error_class,
                         const char generic_msg[], const char specific_msg[], ...);

/* what libromio.a references of the stripefs driver (never called here) */
char ADIO_STRIPEFS_operations[1024];
void ADIOI_STRIPEFS_Get_shared_fp(void);
void ADIOI_STRIPEFS_Set_shared_fp(void);
void ADIOI_STRIPEFS_Get_shared_fp(void)
{
}
void ADIOI_STRIPEFS_Set_shared_fp(void)
{
}

static int failures;

static void check(const char *what, int error_class, int expect_class)
{
    char msg[MPI_MAX_ERROR_STRING], text[128];
    int  code, cls = -1, len = 0;

    snprintf(text, sizeof(text), "driver message for %s", what);
    code =
        MPIO_Err_create_code(MPI_SUCCESS, 0, "romio_errclass", __LINE__, error_class, "**io", text);
    if (code == MPI_SUCCESS || MPI_Error_class(code, &cls) != MPI_SUCCESS) {
        printf("FAIL: %s: code %d has no class\n", what, code);
        failures++;
        return;
    }
    msg[0] = '\0';
    MPI_Error_string(code, msg, &len);
    if (cls != expect_class || strstr(msg, text) == NULL) {
        printf("FAIL: %s: class %d (expected %d), string '%s'\n", what, cls, expect_class, msg);
        failures++;
        return;
    }
    printf("ok: %s: class %d, string '%s'\n", what, cls, msg);
}

int main(int argc, char **argv)
{
    int user_class, user_code;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Add_error_class(&user_class);
    MPI_Add_error_code(MPI_ERR_IO, &user_code);

    check("a predefined class", MPI_ERR_NO_SPACE, MPI_ERR_NO_SPACE);
    check("a class made by MPI_Add_error_class", user_class, user_class);
    check("MPI_UNDEFINED as the class", MPI_UNDEFINED, MPI_ERR_IO);
    check("-1 as the class", -1, MPI_ERR_IO);
    check("a code (not a class) as the class", user_code, MPI_ERR_IO);
    check("a class above the last code in use", user_code + 1000, MPI_ERR_IO);
    printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
