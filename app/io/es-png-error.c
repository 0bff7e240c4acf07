/* SPDX-License-Identifier: MIT */
/* libpng's error and warning callbacks, shared by the PNG reader and writer. */
#include <stdio.h>

#include "es-png-error.h"

void
es_png_error (png_structp png, png_const_charp message)
{
  EsPngErrors *errors = png_get_error_ptr (png);

  snprintf (errors->message, sizeof errors->message, "%s", message);
  png_longjmp (png, 1);
}

void
es_png_warning (png_structp png, png_const_charp message)
{
  EsPngErrors *errors = png_get_error_ptr (png);

  if (errors->warning[0] == '\0')
    snprintf (errors->warning, sizeof errors->warning, "%s", message);
}
