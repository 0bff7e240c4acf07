/* SPDX-License-Identifier: MIT */
/* EsError helpers: the first cause of a failure is kept, context is prepended. */
#include "es-error.h"

#include <stdio.h>
#include <string.h>

void
es_error_clear (EsError *error)
{
  if (error == NULL)
    return;
  error->code = ES_OK;
  error->message[0] = '\0';
}

bool
es_error_setv (EsError *error, EsErrorCode code, const char *format, va_list args)
{
  if (error == NULL || error->code != ES_OK)
    return false;
  error->code = code;
  vsnprintf (error->message, sizeof error->message, format, args);
  return false;
}

bool
es_error_set (EsError *error, EsErrorCode code, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  es_error_setv (error, code, format, args);
  va_end (args);
  return false;
}

void
es_error_prefix (EsError *error, const char *format, ...)
{
  char prefix[256];
  size_t prefix_len, message_len;
  va_list args;

  if (error == NULL || error->code == ES_OK)
    return;
  va_start (args, format);
  vsnprintf (prefix, sizeof prefix, format, args);
  va_end (args);
  /* "prefix: message", truncating the message's tail if the whole is too long. */
  prefix_len = strlen (prefix) + 2;
  message_len = strlen (error->message);
  if (prefix_len + message_len >= sizeof error->message)
    message_len = sizeof error->message - 1 - prefix_len;
  memmove (error->message + prefix_len, error->message, message_len);
  memcpy (error->message, prefix, prefix_len - 2);
  memcpy (error->message + prefix_len - 2, ": ", 2);
  error->message[prefix_len + message_len] = '\0';
}

const char *
es_error_code_name (EsErrorCode code)
{
  switch (code)
    {
    case ES_OK: return "ok";
    case ES_ERROR_INVALID: return "invalid argument";
    case ES_ERROR_IO: return "input/output error";
    case ES_ERROR_FORMAT: return "malformed file";
    case ES_ERROR_LIMIT: return "over the size limit";
    case ES_ERROR_NO_MEMORY: return "out of memory";
    case ES_ERROR_COMPUTE: return "compute error";
    case ES_ERROR_UNAVAILABLE: return "unavailable";
    case ES_ERROR_CANCELLED: return "cancelled";
    }
  return "unknown error";
}
