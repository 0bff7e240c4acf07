/* SPDX-License-Identifier: MIT */
/* TIFF output (es-tiff-write.c, in every build): read back by libtiff bit for bit, metadata, pages,
 * BigTIFF, FIFOs (the writer never seeks) and no partial files. */
#include <fcntl.h>
#include <math.h>
#include <sys/wait.h>

#include "es-load.h"
#include "es-save.h"
#include "es-tiff.h"
#include "test-tiff-common.h"

static void
test_writer_without_reader (void)
{
  EsImage values = random_image (7, 5, ES_FORMAT_F32);
  const char *path = temp_path ("plain.tif");
  EsError error = { 0 };
  uint8_t head[8] = { 0 };
  FILE *f;
  bool ok = es_save_tiff (path, &values, NULL, &error);

  f = fopen (path, "rb");
  if (f != NULL)
    {
      if (fread (head, 1, 8, f) != 8)
        head[0] = 0;
      fclose (f);
    }
  tap_ok (ok && memcmp (head, "II*\0\x08\0\0\0", 8) == 0 && file_size (path) > 7 * 5 * 4,
          "es_save_tiff writes a classic little-endian TIFF in every build (%s)", ok ? "ok" : error.message);
  es_image_clear (&values);
  unlink (path);
}

#ifdef ES_HAVE_TIFF

#include <tiffio.h>

/* Page `page` of a TIFF read by libtiff into an image of the stored type. */
static bool
libtiff_read (const char *path, int page, EsImage *image, char *description, size_t description_size, bool *big)
{
  TIFF *tif = TIFFOpen (path, "r");
  uint32_t w = 0, h = 0;
  uint16_t bits = 0, format = SAMPLEFORMAT_UINT, spp = 0;
  char *text = NULL;
  bool ok = tif != NULL && TIFFSetDirectory (tif, (tdir_t) page);

  if (ok)
    {
      TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
      TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
      TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &bits);
      TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &format);
      TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
      if (description != NULL)
        snprintf (description, description_size, "%s", TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &text) ? text : "");
      if (big != NULL)
        *big = TIFFIsBigTIFF (tif);
      ok = spp == 1
           && es_image_alloc (image, (int) w, (int) h,
                              format == SAMPLEFORMAT_IEEEFP ? ES_FORMAT_F32
                              : bits == 8                   ? ES_FORMAT_U8
                                                            : ES_FORMAT_U16,
                              bits == 8 ? 8 : 16, NULL);
      for (uint32_t y = 0; ok && y < h; y++)
        ok = TIFFReadScanline (tif, es_image_row (image, (int) y), y, 0) >= 0;
    }
  if (tif != NULL)
    TIFFClose (tif);
  return ok;
}

static int
libtiff_pages (const char *path)
{
  TIFF *tif = TIFFOpen (path, "r");
  int n = tif != NULL ? (int) TIFFNumberOfDirectories (tif) : 0;

  if (tif != NULL)
    TIFFClose (tif);
  return n;
}

static void
test_write_exact (void)
{
  static const EsFormat formats[] = { ES_FORMAT_F32, ES_FORMAT_U8, ES_FORMAT_U16 };
  /* 700 float columns make rows of 2800 bytes: strips of 374 rows, several per image. */
  static const int sizes[][2] = { { 1, 1 }, { 13, 7 }, { 700, 800 } };

  for (size_t f = 0; f < 3; f++)
    for (size_t s = 0; s < 3; s++)
      {
        EsImage values = random_image (sizes[s][0], sizes[s][1], formats[f]), back = { 0 };
        EsValueInfo info = { .operation = "entropy", .window = 5, .levels = 16, .units = "nats" };
        const char *path = temp_path ("exact.tif");
        EsError error = { 0 };
        char description[256];
        bool big = true;
        bool ok = es_save_tiff (path, &values, &info, &error)
                  && libtiff_read (path, 0, &back, description, sizeof description, &big);

        tap_ok (ok && images_equal (&values, &back) && !big && libtiff_pages (path) == 1,
                "%s %d×%d: libtiff reads back every value bit for bit (%s)", es_format_name (formats[f]), sizes[s][0],
                sizes[s][1], ok ? "classic TIFF" : error.message);
        if (f == 0 && s == 1)
          {
            bool same = strcmp (description,
                                "Software=Entroscope\nOperation=entropy\nWindow=5\nLevels=16\nUnits=nats\n")
                        == 0;
            for (char *c = description; *c; c++)
              *c = *c == '\n' ? ';' : *c;
            tap_ok (same, "ImageDescription holds the job as PNG's tEXt does: %s", description);
          }
        es_image_clear (&values);
        es_image_clear (&back);
      }
}

static void
test_write_units (void)
{
  EsImage values = random_image (31, 3, ES_FORMAT_F32), back = { 0 };
  EsValueInfo info = { .operation = "entropy", .window = 7, .levels = 8, .units = "bits", .unit_scale = 1.0 / M_LN2 };
  const char *path = temp_path ("bits.tif");
  char description[256];
  bool ok = es_save_tiff (path, &values, &info, NULL)
            && libtiff_read (path, 0, &back, description, sizeof description, NULL);
  bool same = ok;

  for (int y = 0; same && y < values.height; y++)
    for (int x = 0; x < values.width; x++)
      same &= ((float *) es_image_row (&back, y))[x]
              == (float) (((float *) es_image_row (&values, y))[x] * (1.0 / M_LN2));
  tap_ok (same && strstr (description, "Units=bits\n") != NULL,
          "--units bits: each float is the nats value times 1/ln 2, rounded once to float32");
  es_image_clear (&values);
  es_image_clear (&back);
}

static void
test_write_stack_and_bigtiff (void)
{
  EsImage pages[3] = { random_image (9, 4, ES_FORMAT_U8), random_image (3, 11, ES_FORMAT_U8),
                       random_image (40, 2, ES_FORMAT_U8) };
  for (int big = 0; big < 2; big++)
    {
      const char *path = temp_path (big ? "stack-big.tif" : "stack.tif");
      EsError error = { 0 };
      /* BigTIFF is chosen from the announced size, which here claims 5 GiB. */
      uint64_t bytes = big ? 5ull << 30 : 9 * 4 + 3 * 11 + 40 * 2;
      EsTiffWriter *writer = es_tiff_writer_open (path, 3, bytes, &error);
      bool ok = writer != NULL, same = true, is_big = !big;

      for (int i = 0; ok && i < 3; i++)
        ok = es_tiff_writer_add (writer, &pages[i], NULL, &error);
      ok = ok && es_tiff_writer_commit (writer, &error);
      for (int i = 0; ok && i < 3; i++)
        {
          EsImage back = { 0 };
          same &= libtiff_read (path, i, &back, NULL, 0, &is_big) && images_equal (&pages[i], &back)
                  && is_big == (big != 0);
          es_image_clear (&back);
        }
      tap_ok (ok && same && libtiff_pages (path) == 3,
              "a %s stack of 3 pages of different sizes reads back page by page (%s)", big ? "BigTIFF" : "classic",
              ok ? "ok" : error.message);
    }
  for (int i = 0; i < 3; i++)
    es_image_clear (&pages[i]);
}

static void
test_write_no_partial_file (void)
{
  EsImage values = random_image (300, 300, ES_FORMAT_F32);
  const char *path = temp_path ("fail.tif");
  EsError error = { 0 };
  int before = files_in_dir ();
  bool ok;

  es_atomic_file_inject_failure (2);
  ok = es_save_tiff (path, &values, NULL, &error);
  es_atomic_file_inject_failure (0);
  tap_ok (!ok && error.code == ES_ERROR_IO && files_in_dir () == before && access (path, F_OK) != 0,
          "a failed write leaves no file, not even a temporary one (%s)", error.message);
  es_image_clear (&values);
}

/* A smooth image (a ramp with a little noise), which deflate shrinks. */
static EsImage
smooth_image (int width, int height, EsFormat format)
{
  EsImage image = random_image (width, height, format);

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        void *row = es_image_row (&image, y);
        int ramp = (x + y) / 8;
        if (format == ES_FORMAT_U8)
          ((uint8_t *) row)[x] = (uint8_t) (ramp + (((uint8_t *) row)[x] & 1));
        else if (format == ES_FORMAT_U16)
          ((uint16_t *) row)[x] = (uint16_t) (ramp * 40 + (((uint16_t *) row)[x] & 3));
        else
          ((float *) row)[x] = (float) (ramp % 37) * 0.0625f;
      }
  return image;
}

/* The Compression and Predictor tags of page 0. */
static void
libtiff_codec (const char *path, uint16_t *compression, uint16_t *predictor)
{
  TIFF *tif = TIFFOpen (path, "r");

  *compression = *predictor = 0;
  if (tif == NULL)
    return;
  TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, compression);
  TIFFGetFieldDefaulted (tif, TIFFTAG_PREDICTOR, predictor);
  TIFFClose (tif);
}

/* Each compression setting: fast writes plain strips, default and small
 * deflate them (integers with the horizontal predictor), every value comes
 * back bit for bit, and small ≤ default < fast in bytes. */
static void
test_write_compressions (void)
{
  static const EsFormat formats[] = { ES_FORMAT_F32, ES_FORMAT_U8, ES_FORMAT_U16 };
  static const EsCompression settings[] = { ES_COMPRESSION_FAST, ES_COMPRESSION_DEFAULT, ES_COMPRESSION_SMALL };

  for (size_t f = 0; f < 3; f++)
    {
      /* 1100 float columns: rows of 4400 bytes, strips of 238 rows, 5 strips and a short one. */
      EsImage values = smooth_image (1100, 1200, formats[f]);
      size_t sizes[3] = { 0 };
      bool all_ok = true;

      for (size_t c = 0; c < 3; c++)
        {
          const char *path = temp_path ("compressed.tif");
          EsImage back = { 0 };
          EsError error = { 0 };
          uint16_t compression, predictor;
          bool ok;

          es_save_set_compression (settings[c]);
          ok = es_save_tiff (path, &values, NULL, &error) && libtiff_read (path, 0, &back, NULL, 0, NULL);
          libtiff_codec (path, &compression, &predictor);
          sizes[c] = file_size (path);
          ok = ok && images_equal (&values, &back);
          if (settings[c] == ES_COMPRESSION_FAST)
            ok = ok && compression == COMPRESSION_NONE;
          else
            ok = ok && compression == COMPRESSION_ADOBE_DEFLATE
                 && predictor == (formats[f] == ES_FORMAT_F32 ? PREDICTOR_NONE : PREDICTOR_HORIZONTAL);
          tap_ok (ok, "%s, --compression %s: Compression %u, Predictor %u, libtiff reads every value bit for bit (%s)",
                  es_format_name (formats[f]), es_compression_name (settings[c]), compression, predictor,
                  error.message[0] ? error.message : "ok");
          all_ok &= ok;
          es_image_clear (&back);
          unlink (path);
        }
      tap_ok (all_ok && sizes[2] <= sizes[1] && sizes[1] < sizes[0] / 2,
              "%s: small %zu ≤ default %zu < half of fast %zu bytes", es_format_name (formats[f]), sizes[2], sizes[1],
              sizes[0]);
      es_image_clear (&values);
    }
  es_save_set_compression (ES_COMPRESSION_DEFAULT);
}

/* Whether two files hold the same bytes. */
static bool
files_equal (const char *a, const char *b)
{
  FILE *fa = fopen (a, "rb"), *fb = fopen (b, "rb");
  bool same = fa != NULL && fb != NULL;
  int ca, cb;

  while (same && (ca = getc (fa)) != EOF)
    same = (cb = getc (fb)) == ca;
  same = same && getc (fb) == EOF;
  if (fa != NULL)
    fclose (fa);
  if (fb != NULL)
    fclose (fb);
  return same;
}

/* A volume's planes added at once (deflated several planes together, in
 * batches of about 64 MiB) are the file that adding them one by one makes,
 * byte for byte, deflated or stored; libtiff reads every page back. */
static void
test_write_planes (void)
{
  static const EsCompression settings[] = { ES_COMPRESSION_FAST, ES_COMPRESSION_DEFAULT };
  /* Planes of 1 MiB (one strip each): 67 of them make two batches. */
  const int width = 256, height = 1024, planes = 67;
  EsImage volume = { 0 };
  EsError error = { 0 };

  if (!es_image_alloc_volume (&volume, width, height, planes, ES_FORMAT_F32, 0, &error))
    {
      tap_ok (false, "a %dx%dx%d volume: %s", width, height, planes, error.message);
      return;
    }
  for (int z = 0; z < planes; z++)
    {
      EsImage plane = es_image_plane (&volume, z), smooth = smooth_image (width, height, ES_FORMAT_F32);

      for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
          ((float *) es_image_row (&plane, y))[x] = ((const float *) es_image_row (&smooth, y))[x] + (float) z;
      es_image_clear (&smooth);
    }
  for (size_t c = 0; c < 2; c++)
    {
      const char *together = temp_path ("planes-together.tif"), *one_by_one = temp_path ("planes-one-by-one.tif");
      uint64_t bytes = es_tiff_page_bytes (&volume) * (uint64_t) planes;
      EsTiffWriter *writer;
      EsImage back = { 0 }, last = es_image_plane (&volume, planes - 1);
      bool ok;

      es_save_set_compression (settings[c]);
      writer = es_tiff_writer_open (together, planes, bytes, &error);
      ok = writer != NULL && es_tiff_writer_add_planes (writer, &volume, NULL, &error)
           && es_tiff_writer_commit (writer, &error);
      writer = ok ? es_tiff_writer_open (one_by_one, planes, bytes, &error) : NULL;
      for (int z = 0; writer != NULL && ok && z < planes; z++)
        {
          EsImage plane = es_image_plane (&volume, z);
          ok = es_tiff_writer_add (writer, &plane, NULL, &error);
        }
      ok = ok && writer != NULL && es_tiff_writer_commit (writer, &error);
      ok = ok && files_equal (together, one_by_one) && libtiff_pages (together) == planes
           && libtiff_read (together, planes - 1, &back, NULL, 0, NULL) && images_equal (&last, &back);
      tap_ok (ok, "--compression %s: %d planes added at once are the bytes of adding them one by one (%s)",
              es_compression_name (settings[c]), planes, error.message[0] ? error.message : "ok");
      es_image_clear (&back);
      unlink (together);
      unlink (one_by_one);
    }
  es_save_set_compression (ES_COMPRESSION_DEFAULT);
  es_image_clear (&volume);
}

/* A FIFO is written into, front to back: the writer never seeks. */
static void
test_write_fifo (void)
{
  EsImage values = random_image (257, 123, ES_FORMAT_F32), back = { 0 };
  const char *fifo = temp_path ("fifo"), *copy = temp_path ("from-fifo.tif"), *plain = temp_path ("plain2.tif");
  uint8_t *a = NULL, *b = NULL;
  bool ok = mkfifo (fifo, 0600) == 0 && es_save_tiff (plain, &values, NULL, NULL);
  pid_t child = ok ? fork () : -1;

  if (child == 0)
    {
      int in = open (fifo, O_RDONLY), out = open (copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      char buffer[4096];
      ssize_t n;
      while ((n = read (in, buffer, sizeof buffer)) > 0)
        if (write (out, buffer, (size_t) n) != n)
          _exit (1);
      _exit (0);
    }
  ok = ok && child > 0 && es_save_tiff (fifo, &values, NULL, NULL);
  if (child > 0)
    waitpid (child, NULL, 0);
  ok = ok && file_size (copy) == file_size (plain);
  if (ok)
    {
      FILE *fa = fopen (copy, "rb"), *fb = fopen (plain, "rb");
      size_t n = file_size (plain);
      a = malloc (n);
      b = malloc (n);
      ok = fa && fb && a && b && fread (a, 1, n, fa) == n && fread (b, 1, n, fb) == n && memcmp (a, b, n) == 0;
      if (fa)
        fclose (fa);
      if (fb)
        fclose (fb);
    }
  tap_ok (ok && libtiff_read (copy, 0, &back, NULL, 0, NULL) && images_equal (&values, &back),
          "a TIFF written into a FIFO is the same bytes as a file (the writer never seeks)");
  free (a);
  free (b);
  es_image_clear (&values);
  es_image_clear (&back);
  unlink (fifo);
  unlink (copy);
  unlink (plain);
}

#endif

int
main (void)
{
  if (!tiff_tests_init ())
    return 1;
  test_writer_without_reader ();
#ifdef ES_HAVE_TIFF
  test_write_exact ();
  test_write_units ();
  test_write_stack_and_bigtiff ();
  test_write_no_partial_file ();
  test_write_fifo ();
  test_write_compressions ();
  test_write_planes ();
#else
  tap_skip ("built without libtiff (-Dtiff=auto found no libtiff-dev)", "reading the output back with libtiff");
#endif
  tiff_tests_cleanup ();
  return tap_done ();
}
