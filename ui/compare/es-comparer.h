/* SPDX-License-Identifier: MIT */
/* EsComparer: what the Compare Variants window needs from the window whose image it times. */
#pragma once

#include <glib-object.h>

#include "es-worker.h"

G_BEGIN_DECLS

#define ES_TYPE_COMPARER (es_comparer_get_type ())
G_DECLARE_INTERFACE (EsComparer, es_comparer, ES, COMPARER, GObject)

struct _EsComparerInterface {
  GTypeInterface parent_iface;

  EsSource *(*get_source) (EsComparer *self);
  void (*compare_async) (EsComparer *self, EsOp op, int repeats, GCancellable *cancellable,
                         EsCompareProgressFunc progress, gpointer progress_data, GAsyncReadyCallback callback,
                         gpointer user_data);
  EsComparison *(*compare_finish) (EsComparer *self, GAsyncResult *result, GError **error);
  void (*set_backend) (EsComparer *self, EsBackendChoice backend);
};

/* The image a comparison would time, or NULL. */
EsSource *es_comparer_get_source (EsComparer *self);
/* Times every kernel variant of op on the current image with the current
 * settings and backend (see es_worker_compare). */
void es_comparer_compare_async (EsComparer *self, EsOp op, int repeats, GCancellable *cancellable,
                                EsCompareProgressFunc progress, gpointer progress_data, GAsyncReadyCallback callback,
                                gpointer user_data);
EsComparison *es_comparer_compare_finish (EsComparer *self, GAsyncResult *result, GError **error);
/* Chooses the backend the next comparisons (and views) run on. */
void es_comparer_set_backend (EsComparer *self, EsBackendChoice backend);

G_END_DECLS
