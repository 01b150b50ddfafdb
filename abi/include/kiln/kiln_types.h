/*
 * kiln_types.h: the plain C types shared by the C API (kiln.h) and the plugin
 * API (kiln_plugin.h): status codes, element types, devices, opaque handles
 * and named attributes. It declares no function of the library, so a plugin
 * that includes it (through kiln_plugin.h) cannot link against libkiln.so by
 * accident: plugins reach the runtime only through the host table.
 */
#ifndef KILN_KILN_TYPES_H
#define KILN_KILN_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums below have int as their underlying type: a C caller may
 * pass any int where an enum is expected (the library refuses an unknown
 * value with an error), and C++ may read every int from an enum only when its
 * type is fixed. The size and the calling convention are those of C's. */
#ifdef __cplusplus
#define KILN_ENUM_INT : int
#else
#define KILN_ENUM_INT
#endif

/* ---- status ---------------------------------------------------------------- */

typedef enum kiln_status KILN_ENUM_INT {
  KILN_OK = 0,
  KILN_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad value, an unknown attribute */
  KILN_ERR_SHAPE_MISMATCH = 2,
  KILN_ERR_DTYPE_MISMATCH = 3,
  KILN_ERR_DEVICE_MISMATCH = 4, /* also: the device does not exist */
  KILN_ERR_NOT_FOUND = 5,       /* an unknown op, layer, optimizer, ... name */
  KILN_ERR_OUT_OF_MEMORY = 6,
  KILN_ERR_INVALID_STATE = 7, /* e.g. backward through a freed graph */
  KILN_ERR_UNSUPPORTED = 8,   /* no kernel for this dtype/device, feature not built */
  KILN_ERR_IO = 9,            /* a file that cannot be read or written, or is malformed */
  KILN_ERR_INTERNAL = 10,
  KILN_ERR_PLUGIN_REFUSED = 11, /* a plugin library the loader would not take (the message says why) */
  KILN_ERR_SCRIPT = 12,         /* a script raised an error (the message carries its traceback) */
  KILN_ERR_TIMEOUT = 13,        /* a wait (for a peer, a store key, a collective) ran past its timeout */
  KILN_ERR_PEER = 14            /* another process of a distributed job failed, left or sent malformed data */
} kiln_status;

/* ---- element types and devices ---------------------------------------------- */

typedef enum kiln_dtype KILN_ENUM_INT {
  KILN_F32 = 0,
  KILN_F64 = 1,
  KILN_F16 = 2,
  KILN_BF16 = 3,
  KILN_I32 = 4,
  KILN_I64 = 5,
  KILN_U8 = 6,
  KILN_BOOL = 7
} kiln_dtype;

typedef enum kiln_device_type KILN_ENUM_INT { KILN_DEVICE_CPU = 0, KILN_DEVICE_CUDA = 1 } kiln_device_type;

#define KILN_MAX_DIMS 8

/* The shape and element type of a tensor, without its data. */
typedef struct kiln_tensor_desc {
  int rank;
  int64_t dims[KILN_MAX_DIMS];
  kiln_dtype dtype;
} kiln_tensor_desc;

/* ---- logging ------------------------------------------------------------------ */

typedef enum kiln_log_level KILN_ENUM_INT {
  KILN_LOG_DEBUG = 0,
  KILN_LOG_INFO = 1,
  KILN_LOG_WARNING = 2,
  KILN_LOG_ERROR = 3
} kiln_log_level;

/* Receives one message (without a trailing newline); `message` is valid
 * during the call only. May be called from any thread. */
typedef void (*kiln_log_fn)(void* user_data, kiln_log_level level, const char* message);

/* ---- opaque handles (see kiln.h for their rules) ------------------------------ */

typedef struct kiln_runtime kiln_runtime;
typedef struct kiln_tensor kiln_tensor;
typedef struct kiln_op kiln_op;
typedef struct kiln_module kiln_module;
typedef struct kiln_optimizer kiln_optimizer;
typedef struct kiln_lr_schedule kiln_lr_schedule;
typedef struct kiln_data_source kiln_data_source;
typedef struct kiln_transform kiln_transform;
typedef struct kiln_example kiln_example;
typedef struct kiln_strategy kiln_strategy;
typedef struct kiln_loader kiln_loader;
typedef struct kiln_trainer kiln_trainer;
typedef struct kiln_process_group kiln_process_group; /* the ranks of a distributed job (kiln_dist.h) */
typedef struct kiln_work kiln_work;                   /* an operation of a process group in flight */

/* A gradient-ready hook (kiln_tensor_add_grad_hook): `leaf` is borrowed for
 * the call. A status other than KILN_OK fails the backward that ran it. */
typedef kiln_status (*kiln_grad_hook_fn)(void* user, kiln_tensor* leaf);

/* How a collective combines the ranks' values. Bool tensors: sum and max
 * are logical or, min is logical and. */
typedef enum kiln_reduce_op KILN_ENUM_INT {
  KILN_REDUCE_SUM = 0,
  KILN_REDUCE_MEAN = 1, /* the sum divided by the number of ranks; floating dtypes only */
  KILN_REDUCE_MAX = 2,  /* NaN wins, as in torch.maximum */
  KILN_REDUCE_MIN = 3
} kiln_reduce_op;

/* ---- named attributes ---------------------------------------------------------- */

/* Values equal the runtime's attribute types; an integer is accepted where a
 * float is expected, and integers where floats are; in configurations, one
 * number is also accepted for a list of one. KILN_ATTR_TENSOR is for
 * configurations (an in-memory data source's tensors), never for op calls. */
typedef enum kiln_attr_type KILN_ENUM_INT {
  KILN_ATTR_INT = 0,
  KILN_ATTR_FLOAT = 1,
  KILN_ATTR_BOOL = 2,
  KILN_ATTR_INTS = 3,
  KILN_ATTR_FLOATS = 4,
  KILN_ATTR_STRING = 5,
  KILN_ATTR_DTYPE = 6,
  KILN_ATTR_TENSOR = 7
} kiln_attr_type;

/* One named attribute: of an op call, or of the configuration of a layer,
 * optimizer, schedule, data source or transform. Everything it points to is
 * read during the call only. Attributes not given take their defaults. */
typedef struct kiln_attr {
  const char* name;
  kiln_attr_type type;
  union {
    int64_t i;
    double f;
    int b;
    struct {
      const int64_t* data;
      size_t len;
    } ints;
    struct {
      const double* data;
      size_t len;
    } floats;
    const char* s;
    kiln_dtype dtype;
    kiln_tensor* tensor;
  } value;
} kiln_attr;

/* Attribute constructors. The attribute points at `name` (and at `data` or
 * `s`), which must stay valid until the call that uses it returns. */
static inline kiln_attr kiln_attr_int(const char* name, int64_t v) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_INT;
  a.value.i = v;
  return a;
}
static inline kiln_attr kiln_attr_float(const char* name, double v) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_FLOAT;
  a.value.f = v;
  return a;
}
static inline kiln_attr kiln_attr_bool(const char* name, int v) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_BOOL;
  a.value.b = v;
  return a;
}
static inline kiln_attr kiln_attr_ints(const char* name, const int64_t* data, size_t len) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_INTS;
  a.value.ints.data = data;
  a.value.ints.len = len;
  return a;
}
static inline kiln_attr kiln_attr_floats(const char* name, const double* data, size_t len) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_FLOATS;
  a.value.floats.data = data;
  a.value.floats.len = len;
  return a;
}
static inline kiln_attr kiln_attr_string(const char* name, const char* s) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_STRING;
  a.value.s = s;
  return a;
}
static inline kiln_attr kiln_attr_dtype(const char* name, kiln_dtype dtype) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_DTYPE;
  a.value.dtype = dtype;
  return a;
}

static inline kiln_attr kiln_attr_tensor(const char* name, kiln_tensor* t) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_TENSOR;
  a.value.tensor = t;
  return a;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_TYPES_H */
