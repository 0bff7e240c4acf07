/* SPDX-License-Identifier: MIT */
/* The PNG encoder on every core: bands of rows filtered and deflated in parallel, joined into one zlib stream. */
#include "es-png-write.h"

#include <errno.h>
#include <omp.h>
#include <png.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "es-path.h"
#include "es-png-error.h"

/* ---- compression settings ---------------------------------------------- */

static const char *const compression_names[] = {
  [ES_COMPRESSION_FAST] = "fast",
  [ES_COMPRESSION_DEFAULT] = "default",
  [ES_COMPRESSION_SMALL] = "small",
};

static _Atomic int save_compression = ES_COMPRESSION_DEFAULT;
static _Thread_local int thread_compression = -1;

const char *
es_compression_name (EsCompression compression)
{
  if ((unsigned) compression >= sizeof compression_names / sizeof compression_names[0])
    return "?";
  return compression_names[compression];
}

bool
es_compression_from_name (const char *name, EsCompression *compression)
{
  for (size_t i = 0; i < sizeof compression_names / sizeof compression_names[0]; i++)
    if (strcmp (name, compression_names[i]) == 0)
      {
        *compression = (EsCompression) i;
        return true;
      }
  return false;
}

void
es_save_set_compression (EsCompression compression)
{
  atomic_store (&save_compression, (int) compression);
}

void
es_save_set_thread_compression (int compression)
{
  thread_compression = compression >= 0 && compression < ES_N_COMPRESSIONS ? compression : -1;
}

EsCompression
es_save_get_compression (void)
{
  return (EsCompression) (thread_compression >= 0 ? thread_compression : atomic_load (&save_compression));
}

/* zlib's settings for each choice, picked by measurement
 * (docs/performance/files.md, "Encoding PNG"). Z_FILTERED is what libpng
 * uses for filtered rows; at levels 1-3 zlib's fast matcher gives files
 * within 1.1× of libpng's level 6 (smaller on gray photographs) at a third
 * of its time; level 9 with the default strategy is the smallest. */
typedef struct {
  int level;
  int strategy;
} DeflateSettings;

static DeflateSettings
deflate_settings (EsCompression compression)
{
  switch (compression)
    {
    case ES_COMPRESSION_FAST: return (DeflateSettings){ 1, Z_FILTERED };
    case ES_COMPRESSION_SMALL: return (DeflateSettings){ 9, Z_DEFAULT_STRATEGY };
    case ES_COMPRESSION_DEFAULT:
    default: return (DeflateSettings){ 2, Z_FILTERED };
    }
}

/* The FLEVEL bits of the zlib header, as zlib itself sets them. */
static int
zlib_flevel (int level)
{
  return level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
}

/* ---- filters ------------------------------------------------------------ */

/* libpng's measure of a filtered row: bytes read as signed, absolute values summed. */
static inline unsigned
signed_magnitude (uint8_t v)
{
  return v < 128 ? v : 256u - v;
}

static inline uint8_t
paeth_predict (int a, int b, int c)
{
  int pa = abs (b - c), pb = abs (a - c), pc = abs (a + b - 2 * c);

  return (uint8_t) (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

enum { FILTER_NONE, FILTER_SUB, FILTER_UP, FILTER_AVG, FILTER_PAETH, N_FILTERS };

/* The row filter gets an AVX2 clone picked at load time (as compute/'s hot
 * row loops do): twice the vector width on the encoder's busiest own loop. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define ROW_CLONES __attribute__ ((target_clones ("avx2", "default")))
#else
#define ROW_CLONES
#endif

/* Writes the filter byte and the filtered row into out (n + 1 bytes): of
 * the five filters, the one whose output has the least sum of signed
 * magnitudes, the first of equals (libpng's adaptive heuristic). prev is
 * the row above (zeros above the first row). try holds 4 × n bytes. The
 * candidates and their sums come from one pass over the row. */
ROW_CLONES static void
filter_row (const uint8_t *restrict row, const uint8_t *restrict prev, size_t n, int bpp, uint8_t *restrict out,
            uint8_t *restrict try)
{
  uint8_t *restrict sub = try, *restrict up = try + n, *restrict avg = try + 2 * n, *restrict paeth = try + 3 * n;
  const uint8_t *candidates[N_FILTERS] = { row, sub, up, avg, paeth };
  unsigned long sums[N_FILTERS];
  unsigned long none = 0, s_sub = 0, s_up = 0, s_avg = 0, s_paeth = 0;
  size_t lead = (size_t) bpp < n ? (size_t) bpp : n;
  int best = FILTER_NONE;

  for (size_t i = 0; i < lead; i++)
    {
      sub[i] = row[i];
      up[i] = (uint8_t) (row[i] - prev[i]);
      avg[i] = (uint8_t) (row[i] - (prev[i] >> 1));
      paeth[i] = (uint8_t) (row[i] - prev[i]);
      none += signed_magnitude (row[i]);
      s_sub += signed_magnitude (sub[i]);
      s_up += signed_magnitude (up[i]);
      s_avg += signed_magnitude (avg[i]);
      s_paeth += signed_magnitude (paeth[i]);
    }
  for (size_t i = lead; i < n; i++)
    {
      uint8_t a = row[i - bpp], b = prev[i], c = prev[i - bpp];
      sub[i] = (uint8_t) (row[i] - a);
      up[i] = (uint8_t) (row[i] - b);
      avg[i] = (uint8_t) (row[i] - ((a + b) >> 1));
      paeth[i] = (uint8_t) (row[i] - paeth_predict (a, b, c));
      none += signed_magnitude (row[i]);
      s_sub += signed_magnitude (sub[i]);
      s_up += signed_magnitude (up[i]);
      s_avg += signed_magnitude (avg[i]);
      s_paeth += signed_magnitude (paeth[i]);
    }
  sums[FILTER_NONE] = none;
  sums[FILTER_SUB] = s_sub;
  sums[FILTER_UP] = s_up;
  sums[FILTER_AVG] = s_avg;
  sums[FILTER_PAETH] = s_paeth;
  for (int f = 1; f < N_FILTERS; f++)
    if (sums[f] < sums[best])
      best = f;
  out[0] = (uint8_t) best;
  memcpy (out + 1, candidates[best], n);
}

/* ---- bands -------------------------------------------------------------- */

/* One band as a whole IDAT chunk, built by the band's own thread: length,
 * type, the band's piece of the zlib stream (after the stream's header in
 * the first band; before room for its Adler-32 in the last) and the CRC.
 * The buffer is kept from band to band (fresh memory costs page faults,
 * dear on some hosts). */
typedef struct {
  uint8_t *bytes;
  size_t capacity;
  size_t size;     /* of the whole chunk */
  uLong adler;     /* of the band's filtered bytes */
  size_t raw_size; /* their number */
  uLong crc;       /* of the chunk's type and data; the last band's without the Adler-32 */
  int band;        /* the band it holds, finished; -1 while free or being encoded */
  bool failed;     /* out of memory, or zlib refused */
} Piece;

/* What a thread reuses from band to band. */
typedef struct {
  uint8_t *rows;     /* the row above the band, then the band */
  uint8_t *filtered; /* the band as deflate reads it */
  uint8_t *try;      /* the four filtered candidates of one row */
  z_stream z;
  bool z_ready;
} Scratch;

/* Everything es_png_write changes between its setjmp and a longjmp lives
 * here, on the heap (locals would need to be volatile). */
typedef struct {
  const EsPngPicture *picture;
  size_t row_bytes;
  int bpp, band_rows, n_bands;
  DeflateSettings settings;
  FILE *stream;
  int write_errno;
  EsPngErrors errors;
  int n_scratch;
  Scratch *scratch;
  uint8_t *zeros; /* the row above the first one */
  int ring;       /* bands in flight: band b lives in pieces[b % ring] */
  Piece *pieces;
  /* The threads' shared state, under lock. */
  pthread_mutex_t lock;
  pthread_cond_t freed;    /* a piece was written out: its slot is free */
  pthread_cond_t finished; /* a band was encoded (or failed) */
  bool lock_ready;
  int next_band; /* the next band a thread takes */
  int written;   /* bands in the file so far, in order */
  bool failed;   /* everyone stops: out of memory, zlib refused, or a write failed */
  uLong adler;   /* of the bands written */
} Writer;

static bool
scratch_init (Writer *w, Scratch *s)
{
  size_t n = w->row_bytes;

  s->rows = malloc ((size_t) (w->band_rows + 1) * n);
  s->filtered = malloc ((size_t) w->band_rows * (n + 1));
  s->try = malloc (4 * n);
  if (!s->rows || !s->filtered || !s->try)
    return false;
  s->z_ready = deflateInit2 (&s->z, w->settings.level, Z_DEFLATED, -15, 8, w->settings.strategy) == Z_OK;
  return s->z_ready;
}

static void
scratch_clear (Scratch *s)
{
  free (s->rows);
  free (s->filtered);
  free (s->try);
  if (s->z_ready)
    deflateEnd (&s->z);
  *s = (Scratch){ 0 };
}

static void
put_be32 (uint8_t *out, uLong v)
{
  out[0] = (uint8_t) (v >> 24);
  out[1] = (uint8_t) (v >> 16);
  out[2] = (uint8_t) (v >> 8);
  out[3] = (uint8_t) v;
}

/* The zlib header (RFC 1950) with FLEVEL as zlib itself sets it. */
static void
zlib_header (int level, uint8_t header[2])
{
  header[0] = 0x78;
  header[1] = (uint8_t) (zlib_flevel (level) << 6);
  header[1] = (uint8_t) (header[1] + 31 - (header[0] * 256 + header[1]) % 31);
}

/* Fills, filters and deflates band b into piece as one IDAT chunk: a raw
 * deflate stream of its own, ended by a sync flush (byte-aligned, not
 * final) or, for the last band, by the final block. */
static void
encode_band (Writer *w, Scratch *s, int b, Piece *piece)
{
  const EsPngPicture *p = w->picture;
  size_t n = w->row_bytes;
  int y0 = b * w->band_rows;
  int rows = p->height - y0 < w->band_rows ? p->height - y0 : w->band_rows;
  bool last = b == w->n_bands - 1;
  const uint8_t *above;
  uint8_t *band = s->rows + n;
  /* Before the deflate data: length, type, and the stream's header in band 0. */
  size_t head = 8 + (b == 0 ? 2 : 0), tail = last ? 8 : 4;
  size_t raw_size = (size_t) rows * (n + 1), capacity, data_end;
  int flush = last ? Z_FINISH : Z_SYNC_FLUSH, status;

  piece->size = 0;
  piece->failed = false;
  if (!es_row_gate_wait (p->gate, y0 + rows))
    {
      piece->failed = true;
      return;
    }
  if (y0 > 0)
    {
      p->fill_rows (p->data, y0 - 1, rows + 1, s->rows, n);
      above = s->rows;
    }
  else
    {
      p->fill_rows (p->data, 0, rows, band, n);
      above = w->zeros;
    }
  for (int r = 0; r < rows; r++)
    filter_row (band + (size_t) r * n, r == 0 ? above : band + (size_t) (r - 1) * n, n, w->bpp,
                s->filtered + (size_t) r * (n + 1), s->try);

  piece->raw_size = raw_size;
  piece->adler = adler32_z (adler32 (0, Z_NULL, 0), s->filtered, raw_size);

  if (deflateReset (&s->z) != Z_OK)
    {
      piece->failed = true;
      return;
    }
  capacity = head + deflateBound (&s->z, raw_size) + 64 + tail;
  if (piece->capacity < capacity)
    {
      free (piece->bytes);
      piece->capacity = 0;
      piece->bytes = malloc (capacity);
      if (!piece->bytes)
        {
          piece->failed = true;
          return;
        }
      piece->capacity = capacity;
    }
  capacity = piece->capacity - tail;
  if (b == 0)
    zlib_header (w->settings.level, piece->bytes + 8);
  s->z.next_in = s->filtered;
  s->z.avail_in = 0;
  s->z.next_out = piece->bytes + head;
  s->z.avail_out = (uInt) (capacity - head > UINT32_MAX ? UINT32_MAX : capacity - head);
  for (size_t fed = 0;;)
    {
      if (s->z.avail_in == 0 && fed < raw_size)
        {
          s->z.avail_in = raw_size - fed > (1u << 30) ? (1u << 30) : (uInt) (raw_size - fed);
          fed += s->z.avail_in;
        }
      if (s->z.avail_out == 0)
        {
          size_t used = (size_t) (s->z.next_out - piece->bytes);
          uint8_t *grown = realloc (piece->bytes, 2 * piece->capacity);
          if (!grown)
            {
              piece->failed = true;
              return;
            }
          piece->bytes = grown;
          piece->capacity *= 2;
          capacity = piece->capacity - tail;
          s->z.next_out = grown + used;
          s->z.avail_out = (uInt) (capacity - used > UINT32_MAX ? UINT32_MAX : capacity - used);
        }
      status = deflate (&s->z, fed < raw_size ? Z_NO_FLUSH : flush);
      if (status == Z_STREAM_ERROR)
        {
          piece->failed = true;
          return;
        }
      /* Done once every byte is in and the flush is complete: Z_STREAM_END
       * for the last band, room left over after a sync flush otherwise. */
      if (fed == raw_size && s->z.avail_in == 0 && (last ? status == Z_STREAM_END : s->z.avail_out > 0))
        break;
    }
  data_end = (size_t) (s->z.next_out - piece->bytes);
  /* A chunk's length stops at 2^31 - 1; bands are far smaller (band_rows). */
  if (data_end + tail - 12 > 0x7fffffffu)
    {
      piece->failed = true;
      return;
    }
  put_be32 (piece->bytes, (uLong) (data_end + tail - 12));
  memcpy (piece->bytes + 4, "IDAT", 4);
  piece->crc = crc32_z (0, piece->bytes + 4, data_end - 4);
  if (!last)
    put_be32 (piece->bytes + data_end, piece->crc);
  piece->size = data_end + tail;
}

/* ---- the file ----------------------------------------------------------- */

/* Through the stream's buffer in small pieces, so that the file sees
 * buffer-sized writes as with libpng's own encoder: a large fwrite goes
 * straight to one write(), which a pipe may take partly before a signal,
 * and the atomic file would then wait on the rest instead of seeing the
 * interruption. */
static bool
stream_write (Writer *w, const uint8_t *data, size_t length)
{
  enum { PIECE = 16 << 10 };

  for (size_t done = 0; done < length; done += PIECE)
    {
      size_t n = length - done < PIECE ? length - done : PIECE;
      if (fwrite (data + done, 1, n, w->stream) != n)
        {
          w->write_errno = errno ? errno : EIO;
          return false;
        }
    }
  return true;
}

static void
writer_write (png_structp png, png_bytep data, size_t length)
{
  if (!stream_write (png_get_io_ptr (png), data, length))
    png_error (png, "write failed");
}

static void
writer_flush (png_structp png)
{
  Writer *w = png_get_io_ptr (png);

  if (fflush (w->stream) != 0)
    {
      w->write_errno = errno ? errno : EIO;
      png_error (png, "write failed");
    }
}

/* Appends the next band to the file; the last one gets the stream's
 * Adler-32, combined from every band's. */
static bool
write_piece (Writer *w, Piece *piece, int band)
{
  w->adler = band == 0 ? piece->adler : adler32_combine (w->adler, piece->adler, (z_off_t) piece->raw_size);
  if (band == w->n_bands - 1)
    {
      uint8_t *trailer = piece->bytes + piece->size - 8;
      put_be32 (trailer, w->adler);
      put_be32 (trailer + 4, crc32_z (piece->crc, trailer, 4));
    }
  return stream_write (w, piece->bytes, piece->size);
}

/* An encoding thread's share: takes bands in order while their slot in
 * the ring is free and encodes them, for the writing thread to take. */
static void
encode_bands (Writer *w, Scratch *s)
{
  pthread_mutex_lock (&w->lock);
  while (!w->failed && w->next_band < w->n_bands)
    {
      int b = w->next_band++;
      Piece *piece = &w->pieces[b % w->ring];

      while (!w->failed && b >= w->written + w->ring)
        pthread_cond_wait (&w->freed, &w->lock);
      if (w->failed)
        break;
      pthread_mutex_unlock (&w->lock);
      encode_band (w, s, b, piece);
      pthread_mutex_lock (&w->lock);
      if (piece->failed)
        w->failed = true;
      else
        piece->band = b;
      pthread_cond_broadcast (&w->finished);
    }
  pthread_cond_broadcast (&w->freed);
  pthread_mutex_unlock (&w->lock);
}

/* The writing thread's share: each band as soon as it and every band
 * before it are done. It is the calling thread, the one a signal
 * interrupts when the file blocks (a FIFO nobody reads). */
static void
write_bands (Writer *w)
{
  pthread_mutex_lock (&w->lock);
  while (!w->failed && w->written < w->n_bands)
    {
      Piece *next = &w->pieces[w->written % w->ring];
      bool ok;

      if (next->band != w->written)
        {
          pthread_cond_wait (&w->finished, &w->lock);
          continue;
        }
      pthread_mutex_unlock (&w->lock);
      ok = write_piece (w, next, w->written);
      pthread_mutex_lock (&w->lock);
      next->band = -1;
      w->written++;
      w->failed |= !ok;
      pthread_cond_broadcast (&w->freed);
    }
  pthread_cond_broadcast (&w->freed);
  pthread_mutex_unlock (&w->lock);
}

static void
writer_free (Writer *w)
{
  if (!w)
    return;
  for (int i = 0; w->scratch && i < w->n_scratch; i++)
    scratch_clear (&w->scratch[i]);
  for (int i = 0; w->pieces && i < w->ring; i++)
    free (w->pieces[i].bytes);
  if (w->lock_ready)
    {
      pthread_mutex_destroy (&w->lock);
      pthread_cond_destroy (&w->freed);
      pthread_cond_destroy (&w->finished);
    }
  free (w->scratch);
  free (w->pieces);
  free (w->zeros);
  free (w);
}

/* Rows per band: about 1 MiB of samples, fewer when that leaves threads
 * idle, never under 256 KiB (each band starts a new dictionary). */
static int
auto_band_rows (size_t row_bytes, int height, int threads)
{
  size_t most = ((size_t) 1 << 20) / row_bytes, least = ((size_t) 256 << 10) / row_bytes;
  size_t even = ((size_t) height + 4 * (size_t) threads - 1) / (4 * (size_t) threads);
  size_t rows = even < most ? even : most;

  rows = rows > least ? rows : least;
  rows = rows > 0 ? rows : 1;
  return rows > (size_t) height ? height : (int) rows;
}

/* The pixels: bands encoded on every thread, written by the calling one as
 * they finish, in order. */
static bool
write_pixels (Writer *w)
{
  w->next_band = 0;
  w->written = 0;
  w->failed = false;
#pragma omp parallel num_threads(w->n_scratch + 1)
  {
    int id = omp_get_thread_num ();

    if (omp_get_num_threads () == 1)
      for (int b = 0; b < w->n_bands && !w->failed; b++)
        {
          encode_band (w, &w->scratch[0], b, &w->pieces[0]);
          w->failed = w->pieces[0].failed || !write_piece (w, &w->pieces[0], b);
          w->written = b + 1;
        }
    else if (id == 0)
      write_bands (w);
    else
      encode_bands (w, &w->scratch[id - 1]);
  }
  return !w->failed && w->written == w->n_bands;
}

static bool
write_fail (EsError *error, EsErrorCode code, const char *path, const char *reason)
{
  char shown[ES_PATH_MESSAGE_MAX + 1];

  return es_error_set (error, code, "cannot write '%s': %s",
                       es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown), reason);
}

static Writer *
writer_new (const EsPngPicture *p)
{
  int threads = omp_get_max_threads ();
  Writer *w = calloc (1, sizeof *w);

  if (!w)
    return NULL;
  w->picture = p;
  w->bpp = p->channels * p->bit_depth / 8;
  w->row_bytes = (size_t) p->width * (size_t) w->bpp;
  w->settings = deflate_settings (p->compression);
  w->band_rows = p->band_rows > 0 ? (p->band_rows < p->height ? p->band_rows : p->height)
                                  : auto_band_rows (w->row_bytes, p->height, threads);
  /* At most 512 MiB of samples a band, so that its chunk stays under 2^31. */
  if ((size_t) w->band_rows * (w->row_bytes + 1) > ((size_t) 512 << 20))
    w->band_rows = (int) (((size_t) 512 << 20) / (w->row_bytes + 1)) > 0
                     ? (int) (((size_t) 512 << 20) / (w->row_bytes + 1))
                     : 1;
  w->n_bands = (p->height + w->band_rows - 1) / w->band_rows;
  w->n_scratch = threads < w->n_bands ? threads : w->n_bands;
  /* Two bands a thread in flight: memory stays bounded, threads stay fed. */
  w->ring = 2 * w->n_scratch < w->n_bands ? 2 * w->n_scratch : w->n_bands;
  w->scratch = calloc ((size_t) w->n_scratch, sizeof *w->scratch);
  w->pieces = calloc ((size_t) w->ring, sizeof *w->pieces);
  w->zeros = calloc (1, w->row_bytes);
  if (!w->scratch || !w->pieces || !w->zeros)
    {
      writer_free (w);
      return NULL;
    }
  for (int i = 0; i < w->ring; i++)
    w->pieces[i].band = -1;
  /* Default attributes: glibc's initializers cannot fail. */
  pthread_mutex_init (&w->lock, NULL);
  pthread_cond_init (&w->freed, NULL);
  pthread_cond_init (&w->finished, NULL);
  w->lock_ready = true;
  for (int i = 0; i < w->n_scratch; i++)
    if (!scratch_init (w, &w->scratch[i]))
      {
        writer_free (w);
        return NULL;
      }
  return w;
}

bool
es_png_write (const char *path, const EsPngPicture *p, EsError *error)
{
  EsAtomicFile *file;
  Writer *w;
  png_structp png;
  png_infop info = NULL;
  png_text *text;

  if (!p || p->width <= 0 || p->height <= 0 || (p->bit_depth != 8 && p->bit_depth != 16)
      || (p->channels != 1 && p->channels != 3) || (p->palette && (p->channels != 1 || p->bit_depth != 8))
      || !p->fill_rows || p->n_text < 0)
    return write_fail (error, ES_ERROR_INVALID, path, "no image to write");
  w = writer_new (p);
  text = calloc ((size_t) p->n_text + 1, sizeof *text);
  if (!w || !text)
    {
      writer_free (w);
      free (text);
      return write_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
    }
  for (int i = 0; i < p->n_text; i++)
    text[i] = (png_text){
      .compression = PNG_TEXT_COMPRESSION_NONE,
      .key = (png_charp) p->text[i].key,
      .text = (png_charp) p->text[i].value,
      .text_length = strlen (p->text[i].value),
    };

  file = es_atomic_file_open (path, error);
  if (!file)
    {
      writer_free (w);
      free (text);
      return false;
    }
  w->stream = es_atomic_file_stream (file);
  png = png_create_write_struct (PNG_LIBPNG_VER_STRING, &w->errors, es_png_error, es_png_warning);
  if (png)
    info = png_create_info_struct (png);
  if (!png || !info)
    {
      png_destroy_write_struct (&png, NULL);
      es_atomic_file_abort (file);
      writer_free (w);
      free (text);
      return write_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
    }

  /* png_error longjmps here only from the serial parts (headers and chunk
   * writes), never from inside a parallel region. */
  if (setjmp (png_jmpbuf (png)))
    {
      char shown[ES_PATH_MESSAGE_MAX + 1];

      png_destroy_write_struct (&png, &info);
      es_atomic_file_abort (file);
      es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown);
      if (w->write_errno == ECANCELED)
        es_error_set (error, ES_ERROR_CANCELLED, "'%s' was not written: interrupted", shown);
      else if (w->write_errno)
        es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", shown, strerror (w->write_errno));
      else
        es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", shown, w->errors.message);
      writer_free (w);
      free (text);
      return false;
    }

  png_set_write_fn (png, w, writer_write, writer_flush);
  /* The default limit (a million pixels a side) is for reading; our sides
   * are already checked, and a colorbar adds a little width. */
  png_set_user_limits (png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_set_IHDR (png, info, (png_uint_32) p->width, (png_uint_32) p->height, p->bit_depth,
                p->palette         ? PNG_COLOR_TYPE_PALETTE
                : p->channels == 3 ? PNG_COLOR_TYPE_RGB
                                   : PNG_COLOR_TYPE_GRAY,
                PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (p->palette)
    {
      png_color colours[256];

      for (int i = 0; i < 256; i++)
        colours[i] = (png_color){ p->palette[i][0], p->palette[i][1], p->palette[i][2] };
      png_set_PLTE (png, info, colours, 256);
    }
  if (p->n_text > 0)
    png_set_text (png, info, text, p->n_text);
  if (p->pixels_per_metre_x > 0 && p->pixels_per_metre_y > 0)
    png_set_pHYs (png, info, p->pixels_per_metre_x, p->pixels_per_metre_y, PNG_RESOLUTION_METER);
  /* No tIME chunk: the same job must give the same bytes. */
  png_write_info (png, info);
  if (!write_pixels (w))
    {
      /* A failed write is reported as libpng's own writes are. */
      bool source_failed = false;

      if (w->write_errno)
        png_error (png, "write failed");
      if (p->gate != NULL)
        es_row_gate_ready (p->gate, &source_failed);
      png_destroy_write_struct (&png, &info);
      es_atomic_file_abort (file);
      writer_free (w);
      free (text);
      if (source_failed)
        return write_fail (error, ES_ERROR_CANCELLED, path, "its image was not completed");
      return write_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
    }
  png_write_chunk (png, (png_const_bytep) "IEND", NULL, 0);
  png_destroy_write_struct (&png, &info);
  writer_free (w);
  free (text);
  return es_atomic_file_commit (file, error);
}
