/* libnncc_mpi: the runtime's MPI backend, the only code built against an MPI
 * (Open MPI's headers, linked to libmpi). libnncc_runtime dlopens it when a
 * program asks for an MPI communicator (nncc_communicator_create_mpi), so the
 * runtime itself links no MPI and loads without one. Every function returns
 * 0 or writes the MPI error text into `err` and returns nonzero. A `comm`
 * argument is NULL for the world or a handle nncc_mpi_comm_split made. */
#define _GNU_SOURCE /* dladdr */
#include <mpi.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NNCC_MPI_EXPORT __attribute__((visibility("default")))

static int g_initialized_here = 0;

static MPI_Comm comm_of(void *comm) { return comm ? *(MPI_Comm *)comm : MPI_COMM_WORLD; }

static int report(int code, const char *what, char *err, int errlen) {
  if (code == MPI_SUCCESS)
    return 0;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(code, text, &len);
  snprintf(err, (size_t)errlen, "%s failed: %s", what, text);
  return 1;
}

/* MPI_Init_thread (once per process). With `want_threads`, asks for
 * MPI_THREAD_MULTIPLE and sets *threaded when MPI provides at least
 * MPI_THREAD_SERIALIZED: the runtime then runs collectives on its
 * communication thread, one MPI call at a time (only MPI_Abort may come from
 * another thread while one runs). Otherwise FUNNELED: every call comes from
 * the thread that runs the session. Errors on the world communicator are
 * returned instead of aborting, so the runtime can name them. */
NNCC_MPI_EXPORT int nncc_mpi_init(int want_threads, int *rank, int *size, int *threaded, char *err,
                                  int errlen) {
  /* The runtime opened this library (and so libmpi) RTLD_LOCAL; Open MPI's
   * plugins resolve libmpi's symbols globally, so promote it first. */
  Dl_info info;
  if (dladdr((void *)&MPI_Init_thread, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  int initialized = 0, provided = MPI_THREAD_SINGLE;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int required = want_threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
    if (report(MPI_Init_thread(NULL, NULL, required, &provided), "MPI_Init_thread", err, errlen))
      return 1;
    g_initialized_here = 1;
  } else {
    MPI_Query_thread(&provided); /* the program initialized MPI itself */
  }
  *threaded = want_threads && provided >= MPI_THREAD_SERIALIZED;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (report(MPI_Comm_rank(MPI_COMM_WORLD, rank), "MPI_Comm_rank", err, errlen) ||
      report(MPI_Comm_size(MPI_COMM_WORLD, size), "MPI_Comm_size", err, errlen))
    return 1;
  return 0;
}

/* In-place sum of `count` floats over the world, in pieces MPI's int count holds. */
NNCC_MPI_EXPORT int nncc_mpi_allreduce_sum_f32(void *comm, float *data, int64_t count, char *err, int errlen) {
  while (count > 0) {
    int n = count > INT_MAX ? INT_MAX : (int)count;
    if (report(MPI_Allreduce(MPI_IN_PLACE, data, n, MPI_FLOAT, MPI_SUM, comm_of(comm)), "MPI_Allreduce",
               err, errlen))
      return 1;
    data += n;
    count -= n;
  }
  return 0;
}

/* The all-gather and the reduce-scatter are one call each: their parts
 * interleave, so pieces of INT_MAX would not line up; a part beyond MPI's
 * int count is refused. */
static int fits_int(int64_t count, const char *what, char *err, int errlen) {
  if (count <= INT_MAX)
    return 1;
  snprintf(err, (size_t)errlen, "%s: a part of %lld elements is beyond MPI's int count", what, (long long)count);
  return 0;
}

/* In place: rank r's part of `bytes` at data + r * bytes, every part filled. */
NNCC_MPI_EXPORT int nncc_mpi_allgather(void *comm, void *data, int64_t bytes, char *err, int errlen) {
  if (!fits_int(bytes, "MPI_Allgather", err, errlen))
    return 1;
  return report(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, (int)bytes, MPI_BYTE, comm_of(comm)),
                "MPI_Allgather", err, errlen);
}

/* In place: `data` holds size parts of `count` floats; the first `count`
 * become this rank's part of their sum. */
NNCC_MPI_EXPORT int nncc_mpi_reduce_scatter_sum_f32(void *comm, float *data, int64_t count, char *err,
                                                    int errlen) {
  if (!fits_int(count, "MPI_Reduce_scatter_block", err, errlen))
    return 1;
  return report(MPI_Reduce_scatter_block(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, comm_of(comm)),
                "MPI_Reduce_scatter_block", err, errlen);
}

NNCC_MPI_EXPORT int nncc_mpi_broadcast(void *comm, void *data, int64_t bytes, int root, char *err, int errlen) {
  char *p = (char *)data;
  while (bytes > 0) {
    int n = bytes > INT_MAX ? INT_MAX : (int)bytes;
    if (report(MPI_Bcast(p, n, MPI_BYTE, root, comm_of(comm)), "MPI_Bcast", err, errlen))
      return 1;
    p += n;
    bytes -= n;
  }
  return 0;
}

NNCC_MPI_EXPORT int nncc_mpi_barrier(void *comm, char *err, int errlen) {
  return report(MPI_Barrier(comm_of(comm)), "MPI_Barrier", err, errlen);
}

/* Point to point in pieces MPI's int count holds; a message of any size is
 * the same pieces on both sides, and MPI keeps the order of the messages
 * between two ranks of a communicator (one tag), so sends and receives pair
 * up in the order each side makes them. */
#define NNCC_MPI_PIECES(bytes) ((bytes) <= 0 ? 1 : ((bytes) + INT_MAX - 1) / INT_MAX)

typedef struct nncc_mpi_send {
  int64_t pieces;
  MPI_Request requests[];
} nncc_mpi_send;

/* MPI_Isend of `bytes` of `data` to `peer`: returns at once (the data must
 * stay unchanged until nncc_mpi_wait_send on *pending). */
NNCC_MPI_EXPORT int nncc_mpi_isend(void *comm, const void *data, int64_t bytes, int peer, void **pending,
                                   char *err, int errlen) {
  int64_t pieces = NNCC_MPI_PIECES(bytes);
  nncc_mpi_send *s = (nncc_mpi_send *)malloc(sizeof(nncc_mpi_send) + (size_t)pieces * sizeof(MPI_Request));
  if (!s) {
    snprintf(err, (size_t)errlen, "out of memory");
    return 1;
  }
  s->pieces = 0;
  const char *p = (const char *)data;
  for (int64_t i = 0; i < pieces; ++i) {
    int n = bytes - i * INT_MAX > INT_MAX ? INT_MAX : (int)(bytes - i * INT_MAX);
    if (n < 0)
      n = 0;
    if (report(MPI_Isend(p, n, MPI_BYTE, peer, 0, comm_of(comm), &s->requests[i]), "MPI_Isend", err, errlen)) {
      MPI_Waitall((int)s->pieces, s->requests, MPI_STATUSES_IGNORE);
      free(s);
      return 1;
    }
    s->pieces = i + 1;
    p += n;
  }
  *pending = s;
  return 0;
}

/* Waits for a send of nncc_mpi_isend and frees its handle. */
NNCC_MPI_EXPORT int nncc_mpi_wait_send(void *pending, char *err, int errlen) {
  nncc_mpi_send *s = (nncc_mpi_send *)pending;
  int code = MPI_Waitall((int)s->pieces, s->requests, MPI_STATUSES_IGNORE);
  free(s);
  return report(code, "MPI_Waitall (a send)", err, errlen);
}

/* MPI_Recv of `bytes` from `peer` into `data`; a message of another size
 * is an error (the two sides' plans disagree). */
NNCC_MPI_EXPORT int nncc_mpi_recv(void *comm, void *data, int64_t bytes, int peer, char *err, int errlen) {
  int64_t pieces = NNCC_MPI_PIECES(bytes);
  char *p = (char *)data;
  for (int64_t i = 0; i < pieces; ++i) {
    int n = bytes - i * INT_MAX > INT_MAX ? INT_MAX : (int)(bytes - i * INT_MAX);
    if (n < 0)
      n = 0;
    MPI_Status status;
    if (report(MPI_Recv(p, n, MPI_BYTE, peer, 0, comm_of(comm), &status), "MPI_Recv", err, errlen))
      return 1;
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != n) {
      snprintf(err, (size_t)errlen, "MPI_Recv from rank %d: a message of %d bytes where %d were expected", peer,
               got, n);
      return 1;
    }
    p += n;
  }
  return 0;
}

/* MPI_Comm_split of `comm`: *out is a new handle (nncc_mpi_comm_free), with
 * this process's rank and size in it. Errors on it are returned too. */
NNCC_MPI_EXPORT int nncc_mpi_comm_split(void *comm, int color, int key, void **out, int *rank, int *size,
                                        char *err, int errlen) {
  MPI_Comm *sub = (MPI_Comm *)malloc(sizeof(MPI_Comm));
  if (!sub) {
    snprintf(err, (size_t)errlen, "out of memory");
    return 1;
  }
  if (report(MPI_Comm_split(comm_of(comm), color, key, sub), "MPI_Comm_split", err, errlen)) {
    free(sub);
    return 1;
  }
  MPI_Comm_set_errhandler(*sub, MPI_ERRORS_RETURN);
  if (report(MPI_Comm_rank(*sub, rank), "MPI_Comm_rank", err, errlen) ||
      report(MPI_Comm_size(*sub, size), "MPI_Comm_size", err, errlen)) {
    MPI_Comm_free(sub);
    free(sub);
    return 1;
  }
  *out = sub;
  return 0;
}

/* Frees a handle of nncc_mpi_comm_split (before MPI is finalized). */
NNCC_MPI_EXPORT void nncc_mpi_comm_free(void *comm) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Comm_free((MPI_Comm *)comm);
  free(comm);
}

/* Ends every process of the job (MPI_Abort): how a rank that fails stops
 * the others, which would otherwise wait in a collective for it forever. */
NNCC_MPI_EXPORT void nncc_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

/* MPI_Finalize, when this library initialized MPI. */
NNCC_MPI_EXPORT void nncc_mpi_finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_initialized_here && !finalized)
    MPI_Finalize();
}
