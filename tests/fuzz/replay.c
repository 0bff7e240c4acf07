/* SPDX-License-Identifier: MIT */
/* Replays fuzz corpus folders through a harness (one TAP point per folder); each input runs in a child
 * process that must exit cleanly and map no more than a decode can need. */
#include <dirent.h>
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "es-fuzz.h"
#include "tap.h"

/* Reads a whole file into a buffer of exactly its size, so that
 * AddressSanitizer catches a decoder reading one byte too far. */
static bool
read_file (const char *path, uint8_t **data, size_t *size)
{
  FILE *file = fopen (path, "rb");
  long length;
  bool ok = false;

  if (file == NULL)
    return false;
  if (fseek (file, 0, SEEK_END) == 0 && (length = ftell (file)) >= 0 && fseek (file, 0, SEEK_SET) == 0)
    {
      /* glibc and the sanitizers return a unique pointer for malloc (0),
       * as libFuzzer passes for an empty input. */
      *data = malloc ((size_t) length);
      *size = (size_t) length;
      ok = *data != NULL && fread (*data, 1, *size, file) == *size;
      if (!ok)
        free (*data);
    }
  fclose (file);
  return ok;
}

/* Mapping more than this for one input is a finding: no decode within the
 * harness's pixel budget needs it, so the decoder trusted a size field. */
#define ES_REPLAY_MAX_GROWTH_KIB (256 * 1024)

/* The peak virtual size of this process (Linux), or -1. It catches a huge
 * allocation even when the memory is never touched, as a claimed chunk
 * length is not when the data ends early. */
static long long
vm_peak_kib (void)
{
  FILE *status = fopen ("/proc/self/status", "r");
  char line[256];
  long long kib = -1;

  if (status == NULL)
    return -1;
  while (fgets (line, sizeof line, status) != NULL)
    if (sscanf (line, "VmPeak: %lld kB", &kib) == 1)
      break;
  fclose (status);
  return kib;
}

/* Runs the harness on one file in a child, so that a crash, a trap or a
 * sanitizer report fails that input alone and names it. */
static bool
replay_one (const char *path)
{
  pid_t pid;
  int status;

  fflush (stdout);
  pid = fork ();
  if (pid < 0)
    {
      tap_diag ("%s: fork failed: %s", path, strerror (errno));
      return false;
    }
  if (pid == 0)
    {
      uint8_t *data;
      size_t size;

      if (!read_file (path, &data, &size))
        {
          fprintf (stderr, "%s: cannot read: %s\n", path, strerror (errno));
          _exit (2);
        }
      long long before = vm_peak_kib ();
      LLVMFuzzerTestOneInput (data, size);
      long long after = vm_peak_kib ();
      free (data);
      if (before >= 0 && after - before > ES_REPLAY_MAX_GROWTH_KIB)
        {
          fprintf (stderr, "%s: decoding mapped %lld MiB\n", path, (after - before) / 1024);
          exit (3);
        }
      /* exit (not _exit) so that LeakSanitizer checks the child. */
      exit (0);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        tap_diag ("%s: waitpid failed: %s", path, strerror (errno));
        return false;
      }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return true;
  if (WIFSIGNALED (status))
    tap_diag ("%s: killed by signal %d (%s)", path, WTERMSIG (status), strsignal (WTERMSIG (status)));
  else
    tap_diag ("%s: exit status %d", path, WEXITSTATUS (status));
  return false;
}

static int
is_input (const struct dirent *entry)
{
  return entry->d_name[0] != '.';
}

static void
replay_folder (const char *folder)
{
  struct dirent **entries;
  int n = scandir (folder, &entries, is_input, alphasort);
  int failed = 0, replayed = 0;
  const char *name;

  if (n < 0)
    {
      tap_ok (false, "%s: cannot list: %s", folder, strerror (errno));
      return;
    }
  for (int i = 0; i < n; i++)
    {
      size_t length = strlen (folder) + strlen (entries[i]->d_name) + 2;
      char *path = malloc (length);
      struct stat st;

      if (path != NULL)
        {
          snprintf (path, length, "%s/%s", folder, entries[i]->d_name);
          if (stat (path, &st) == 0 && S_ISREG (st.st_mode))
            {
              replayed++;
              if (!replay_one (path))
                failed++;
            }
        }
      else
        failed++;
      free (path);
      free (entries[i]);
    }
  free (entries);
  /* The folder's own name is enough to tell the points apart. */
  name = strrchr (folder, '/') && strrchr (folder, '/')[1] ? strrchr (folder, '/') + 1 : folder;
  if (replayed == 0 && failed == 0)
    tap_ok (false, "%s: no inputs in %s", name, folder);
  else
    tap_ok (failed == 0, "%s: %d inputs replayed, %d failed", name, replayed, failed);
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s CORPUS-FOLDER...\n", argv[0]);
      return 2;
    }
#ifdef __GLIBC__
  /* Threads (the parallel inflater's) would each get a malloc arena that
   * reserves 64 MiB of address space untouched: VmPeak would count it as
   * the harness's, four threads over the limit. One arena for all. */
  mallopt (M_ARENA_MAX, 1);
#endif
  for (int i = 1; i < argc; i++)
    replay_folder (argv[i]);
  return tap_done ();
}
