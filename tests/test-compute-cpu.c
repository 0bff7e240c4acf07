/* SPDX-License-Identifier: MIT */
/* The CPU backend against the slow references: in small bands, each entropy
 * method forced, and the entropy loops that must give the same bits. */
#include "test-compute-common.h"
#include "cpu/es-cpu-internal.h"

/* The cost model picks one CPU entropy method per job; each one, forced,
 * must compute the same function on awkward sizes, windows and levels. */
static void
test_cpu_entropy_methods (Backend *cpu)
{
  /* Shuffle twice: with AVX-512 where the CPU has it, and with AVX2 only. */
  static const EsCpuEntropyMethod methods[] = { ES_CPU_ENTROPY_SLIDING, ES_CPU_ENTROPY_COLUMNS, ES_CPU_ENTROPY_SHUFFLE,
                                                ES_CPU_ENTROPY_SHUFFLE, ES_CPU_ENTROPY_SORT };

  for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++)
    {
      es_cpu_set_entropy_method (methods[m]);
      es_cpu_set_entropy_avx512 (m != 3);
      for (int i = 0; i < 6; i++)
        {
          const Kind *kind = &kinds[random_int (0, (int) (sizeof kinds / sizeof kinds[0]) - 1)];
          int w = random_int (1, 140), h = random_int (1, 90);
          EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
          EsImage in;
          char what[200];

          job.window = i == 0 ? ES_FAST_WINDOW_MAX : random_odd_window ();
          job.levels = i == 1 ? ES_FAST_LEVELS_MAX : pick_levels (i + (int) m);
          /* The shuffle method takes windows up to 15×15 and up to 254 levels. */
          if (methods[m] == ES_CPU_ENTROPY_SHUFFLE)
            {
              job.window = 3 + 2 * random_int (0, 6);
              job.levels = random_int (ES_LEVELS_MIN, i == 1 ? 254 : 64);
            }
          /* The sort method takes 5×5 windows. */
          if (methods[m] == ES_CPU_ENTROPY_SORT)
            job.window = 5;
          if (!make_image (&in, w, h, kind, kind->levels ? job.levels : 0, (Pattern) random_int (0, N_PATTERNS - 1)))
            {
              tap_ok (false, "entropy methods: no memory for a %d×%d input", w, h);
              continue;
            }
          snprintf (what, sizeof what, "CPU entropy forced %s%s (ran %s): %d×%d %s window=%d L=%d",
                    es_cpu_entropy_method_name (methods[m]),
                    methods[m] != ES_CPU_ENTROPY_SHUFFLE ? ""
                    : es_cpu_entropy_avx512 ()           ? " AVX-512"
                                                         : " AVX2",
                    es_cpu_entropy_method_name (es_cpu_entropy_method (w, job.window, job.levels)), w, h, kind->name,
                    job.window, job.levels);
          check (cpu, 1, &job, &in, what);
          es_image_clear (&in);
        }
    }
  es_cpu_set_entropy_method (ES_CPU_ENTROPY_AUTO);
  es_cpu_set_entropy_avx512 (true);
}

/* Where two CPU entropy loops keep the same fixed-point sums they give the
 * same bits: the shuffle method's AVX-512 and AVX2 loops (T at 2^17), and
 * the sort and sliding methods (T at 2^18), in small bands and whole images. */
static void
test_cpu_entropy_same_bits (Backend *cpu)
{
  if (!es_cpu_entropy_avx512 ())
    {
      tap_diag ("AVX-512 (BW, VBMI, VNNI) absent or turned off: shuffle runs its AVX2 loop only, sort never");
      return;
    }
  for (int i = 0; i < 20; i++)
    {
      bool sort = i % 4 == 3;
      const Kind *kind = &kinds[random_int (0, (int) (sizeof kinds / sizeof kinds[0]) - 1)];
      int w = random_int (1, 150), h = random_int (1, 60);
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsImage in, out[2] = { { 0 } };
      EsError error = { 0 };
      bool ran = true, same = true;

      job.window = sort ? 5 : 3 + 2 * (i % 7);
      job.levels = i == 0 ? 254 : random_int (ES_LEVELS_MIN, i % 3 ? 64 : sort ? 256 : 254);
      if (!make_image (&in, w, h, kind, kind->levels ? job.levels : 0, (Pattern) random_int (0, N_PATTERNS - 1)))
        {
          tap_ok (false, "same bits: no memory for a %d×%d input", w, h);
          continue;
        }
      es_cpu_set_band_rows (i % 2 ? random_int (1, 7) : 0);
      for (int run = 0; run < 2; run++)
        {
          EsTiming timing;

          if (sort)
            es_cpu_set_entropy_method (run == 0 ? ES_CPU_ENTROPY_SORT : ES_CPU_ENTROPY_SLIDING);
          else
            {
              es_cpu_set_entropy_method (ES_CPU_ENTROPY_SHUFFLE);
              es_cpu_set_entropy_avx512 (run == 0);
            }
          ran = ran && es_run (cpu->engine, &job, &in, &out[run], &timing, &error);
        }
      for (int y = 0; ran && y < h; y++)
        same = same && memcmp (es_image_row (&out[0], y), es_image_row (&out[1], y), (size_t) w * sizeof (float)) == 0;
      tap_ok (ran && same, "%s give the same bits: %d×%d %s window=%d L=%d%s%s",
              sort ? "sort and sliding" : "shuffle AVX-512 and AVX2", w, h, kind->name, job.window, job.levels,
              ran ? "" : ": ", ran ? "" : error.message);
      es_image_clear (&out[0]);
      es_image_clear (&out[1]);
      es_image_clear (&in);
      es_cpu_set_entropy_avx512 (true);
    }
  es_cpu_set_band_rows (0);
  es_cpu_set_entropy_method (ES_CPU_ENTROPY_AUTO);
}

/* The CPU backend in small bands, whose edges fall inside the entropy
 * windows and the sharpen stencil, against the references: the SIMD and the
 * generic entropy paths, mapped and borrowed rows, on awkward sizes. */
static void
test_cpu_bands (Backend *cpu)
{
  int bands[] = { 1, 2, 3, 4, 7, 0 };
  int sizes[][2] = { { 1, 23 }, { 37, 11 }, { 33, 50 }, { 0, 0 } };
  int counter = random_int (0, 59);

  bands[5] = random_int (5, 40);
  sizes[3][0] = random_int (60, 130);
  sizes[3][1] = random_int (20, 70);

  for (size_t b = 0; b < sizeof bands / sizeof bands[0]; b++)
    {
      es_cpu_set_band_rows (bands[b]);
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int i = 0; i < 2; i++)
          {
            const Kind *kind = &kinds[counter % (int) (sizeof kinds / sizeof kinds[0])];
            int w = sizes[s][0], h = sizes[s][1];
            int levels = pick_levels (counter);
            /* The default job, a random small window (SIMD unless the levels
             * are many), and the largest window (generic). */
            int windows[3] = { 5, 3 + 2 * random_int (0, 6), ES_FAST_WINDOW_MAX };
            EsImage in;
            char what[200];

            counter++;
            if (!make_image (&in, w, h, kind, levels, (Pattern) random_int (0, N_PATTERNS - 1)))
              {
                tap_ok (false, "bands of %d rows, %d×%d %s: no memory for the input", bands[b], w, h, kind->name);
                continue;
              }
            for (int e = 0; e < 3; e++)
              {
                EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

                job.window = windows[e];
                job.levels = e == 0 && !kind->levels ? 16 : levels;
                snprintf (what, sizeof what, "bands of %d rows: entropy %d×%d %s window=%d L=%d", bands[b], w, h,
                          kind->name, job.window, job.levels);
                check (cpu, 1, &job, &in, what);
              }
            for (EsOp op = ES_OP_QUANTIZE; op < ES_N_OPS; op++)
              if (op != ES_OP_ENTROPY)
                {
                  EsJob job = ES_JOB_INIT (op);

                  job.levels = levels;
                  job.amount = pick_amount (counter);
                  job.clip = pick_clip (counter);
                  pick_tiles (counter, in.format, &job);
                  snprintf (what, sizeof what, "bands of %d rows: %s %d×%d %s", bands[b], es_op_name (op), w, h,
                            kind->name);
                  check (cpu, 1, &job, &in, what);
                }
            es_image_clear (&in);
          }
    }
  es_cpu_set_band_rows (0);
}

int
main (void)
{
  Backend cpu = { .backend = ES_BACKEND_CPU, .name = "cpu" };
  EsError error = { 0 };

  rng = tap_seed ();

  cpu.engine = es_engine_new (ES_BACKEND_CPU, &error);
  if (!tap_ok (cpu.engine != NULL, "CPU engine starts%s%s", error.message[0] ? ": " : "", error.message))
    return tap_done ();
  tap_diag ("backend: %s", es_engine_describe (cpu.engine));

  test_cpu_bands (&cpu);
  test_cpu_entropy_methods (&cpu);
  test_cpu_entropy_same_bits (&cpu);

  es_image_clear (&cpu.out);
  es_engine_free (cpu.engine);
  return tap_done ();
}
