/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: every file a command reads, and whether an output would be one of them. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "es-cli.h"

/* What identifies a file: its device and inode when it exists, else its
 * folder's and its name (a file that an earlier output would create). */
typedef struct {
  bool exists;
  bool regular;
  dev_t dev;
  ino_t ino;
  bool folder_exists;
  dev_t folder_dev;
  ino_t folder_ino;
  char *name;
} EsCliFileKey;

void es_cli_file_key (const char *path, EsCliFileKey *key);
/* stdout as a key, for -o - and for outputs that are stdout. */
void es_cli_stdout_key (EsCliFileKey *key);
void es_cli_file_key_clear (EsCliFileKey *key);
/* Whether writing `output` would change `input`: the same regular file (a
 * device or a pipe read and written is no loss), or a file not there yet
 * that the output would create under the input's name. */
bool es_cli_same_file (const EsCliFileKey *input, const EsCliFileKey *output);

/* One file the command reads: an operand (role NULL, index its place among
 * them) or a file of an option (its role, as EsCliReads names it). */
typedef struct {
  const char *path;
  const char *role;
  int index;
  EsCliFileKey key;
} EsCliReadFile;

/* Every file the command reads: the operands, then every file that
 * options->reads names, so that an input kind added there is checked
 * against the outputs with no other change. */
typedef struct {
  EsCliReadFile *files;
  int n;
} EsCliReadFiles;

/* Keys every file read, as it is now. False only when out of memory. */
bool es_cli_read_files_init (EsCliReadFiles *reads, const EsCliOptions *options, char *const *inputs, int n_inputs);
void es_cli_read_files_clear (EsCliReadFiles *reads);
/* The first file read that writing `output` would change, or NULL. */
const EsCliReadFile *es_cli_read_files_find (const EsCliReadFiles *reads, const EsCliFileKey *output);
