/* SPDX-License-Identifier: MIT */
/* File names in one-line messages: long paths are shortened in the middle, so that the reason after them survives. */
#pragma once

#include <stddef.h>

/* The most bytes a path takes in a library message (EsError holds 512). */
#define ES_PATH_MESSAGE_MAX 200

/* Copies path into out (out_size bytes) and returns out. A path longer than
 * max bytes (or than out holds) keeps its start and its end, where the file
 * name is, around "..."; cuts fall between UTF-8 characters. */
const char *es_path_shorten (const char *path, size_t max, char *out, size_t out_size);
