/* SPDX-License-Identifier: MIT */
/* entroscope-cli's rule that no output is a file the command reads: operands, masks, footprints alike. */
#include "es-cli-files.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
es_cli_file_key (const char *path, EsCliFileKey *key)
{
  struct stat st;
  char *copy = strdup (path), *copy2 = strdup (path);

  *key = (EsCliFileKey){ 0 };
  if (stat (path, &st) == 0)
    {
      key->exists = true;
      key->regular = S_ISREG (st.st_mode);
      key->dev = st.st_dev;
      key->ino = st.st_ino;
    }
  if (copy != NULL && copy2 != NULL && stat (dirname (copy), &st) == 0)
    {
      key->folder_exists = true;
      key->folder_dev = st.st_dev;
      key->folder_ino = st.st_ino;
      key->name = strdup (basename (copy2));
    }
  free (copy);
  free (copy2);
}

void
es_cli_stdout_key (EsCliFileKey *key)
{
  struct stat st;

  *key = (EsCliFileKey){ 0 };
  if (fstat (STDOUT_FILENO, &st) == 0)
    *key = (EsCliFileKey){ .exists = true, .regular = S_ISREG (st.st_mode), .dev = st.st_dev, .ino = st.st_ino };
}

void
es_cli_file_key_clear (EsCliFileKey *key)
{
  free (key->name);
  key->name = NULL;
}

bool
es_cli_same_file (const EsCliFileKey *input, const EsCliFileKey *output)
{
  if (input->exists && output->exists)
    return output->regular && input->dev == output->dev && input->ino == output->ino;
  if (input->exists || output->exists)
    return false;
  return input->folder_exists && output->folder_exists && input->folder_dev == output->folder_dev
         && input->folder_ino == output->folder_ino && input->name != NULL && output->name != NULL
         && strcmp (input->name, output->name) == 0;
}

bool
es_cli_read_files_init (EsCliReadFiles *reads, const EsCliOptions *o, char *const *inputs, int n_inputs)
{
  int n = n_inputs;

  for (int role = 0; role < ES_CLI_N_READS; role++)
    n += o->reads[role] != NULL;
  reads->n = 0;
  reads->files = calloc ((size_t) (n > 0 ? n : 1), sizeof *reads->files);
  if (reads->files == NULL)
    return false;
  for (int i = 0; i < n_inputs; i++)
    reads->files[reads->n++] = (EsCliReadFile){ .path = inputs[i], .index = i };
  for (int role = 0; role < ES_CLI_N_READS; role++)
    if (o->reads[role] != NULL)
      reads->files[reads->n++] = (EsCliReadFile){ .path = o->reads[role],
                                                  .role = es_cli_reads_name[role],
                                                  .index = -1 };
  for (int i = 0; i < reads->n; i++)
    es_cli_file_key (reads->files[i].path, &reads->files[i].key);
  return true;
}

void
es_cli_read_files_clear (EsCliReadFiles *reads)
{
  for (int i = 0; i < reads->n; i++)
    es_cli_file_key_clear (&reads->files[i].key);
  free (reads->files);
  *reads = (EsCliReadFiles){ 0 };
}

const EsCliReadFile *
es_cli_read_files_find (const EsCliReadFiles *reads, const EsCliFileKey *output)
{
  for (int i = 0; i < reads->n; i++)
    if (es_cli_same_file (&reads->files[i].key, output))
      return &reads->files[i];
  return NULL;
}
