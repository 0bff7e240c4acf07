/* SPDX-License-Identifier: MIT */
/* Internal to app/: libpng's error and warning callbacks for the PNG reader and writer. */
#pragma once

#include <png.h>

/* Where the callbacks leave libpng's words. Pass it as the error pointer
 * (png_create_*_struct or png_set_error_fn); it must live in memory that
 * survives the longjmp, not among the locals of the function that called
 * setjmp (C leaves those indeterminate after the jump unless volatile). */
typedef struct {
  char message[256]; /* the error that ended the read or the write */
  char warning[256]; /* the first warning, "" if none */
} EsPngErrors;

/* Records the message and longjmps to png_jmpbuf (png). */
void es_png_error (png_structp png, png_const_charp message);
/* Records the first warning only. Warnings fail nothing, but libpng gives
 * the detail of a bad IHDR only as warnings before a generic "Invalid IHDR
 * data" error, so a reader can complete its message with it. */
void es_png_warning (png_structp png, png_const_charp message);
