/* SPDX-License-Identifier: MIT */
/* Errors as values: a code and a one-line message, never exit() in a library. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ES_OK = 0,
  ES_ERROR_INVALID,     /* a bad parameter or job (usage) */
  ES_ERROR_IO,          /* a file could not be read or written */
  ES_ERROR_FORMAT,      /* a file's contents are malformed or unsupported */
  ES_ERROR_LIMIT,       /* an image is larger than the configured limits */
  ES_ERROR_NO_MEMORY,   /* host or device memory could not be had */
  ES_ERROR_COMPUTE,     /* a kernel or backend failed */
  ES_ERROR_UNAVAILABLE, /* a requested backend is not usable here */
  ES_ERROR_CANCELLED,   /* the caller cancelled the job (es_control_cancel) */
} EsErrorCode;

typedef struct {
  EsErrorCode code;
  char message[512];
} EsError;

/* Each function below accepts error == NULL and then does nothing. */
void es_error_clear (EsError *error);
/* Sets code and message unless an error is already set (the first cause wins).
 * Always returns false so that callers can write `return es_error_set (...)`. */
bool es_error_set (EsError *error, EsErrorCode code, const char *format, ...) __attribute__ ((format (printf, 3, 4)));
bool es_error_setv (EsError *error, EsErrorCode code, const char *format, va_list args);
/* Prepends context such as a file name: "photo.png: <message>". */
void es_error_prefix (EsError *error, const char *format, ...) __attribute__ ((format (printf, 2, 3)));
const char *es_error_code_name (EsErrorCode code);

#ifdef __cplusplus
}
#endif
