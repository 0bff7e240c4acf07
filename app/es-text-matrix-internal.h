/* Internal to the text matrix decoder and its tests: how the work is split. */
#pragma once

#include "es-load.h"

typedef enum {
  ES_TEXT_SPLIT_AUTO,      /* in parallel when the input is large enough to pay */
  ES_TEXT_SPLIT_SERIAL,    /* one pass, line after line: the reference */
  ES_TEXT_SPLIT_PARALLEL,  /* line starts found and rows parsed in parallel, whatever the size */
} EsTextSplit;

/* es_text_matrix_decode with the split forced; every split gives the same
 * image, or the same error with the same message. */
bool es_text_matrix_decode_split (const void *data, size_t size, int levels, EsTextSplit split,
                                  EsImage *image, EsError *error);
