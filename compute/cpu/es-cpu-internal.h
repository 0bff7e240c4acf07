/* Internal to the CPU backend and its tests: the height of its row bands. */
#pragma once

/* Every CPU operation works in bands of rows, mapping each band's rows (and
 * its halo) into per-thread buffers, so that its working memory is bounded
 * by the bands and the threads, not by the image. rows = 0 (the default)
 * lets the backend choose from the image and the thread count; tests choose
 * small bands so that band edges fall inside the windows. Set it before
 * running jobs, not during one. */
void es_cpu_set_band_rows (int rows);
