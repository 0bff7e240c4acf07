/* SPDX-License-Identifier: MIT */
/* EsComparer: the interface between the Compare Variants window and the window it compares for. */
#include "es-comparer.h"

G_DEFINE_INTERFACE (EsComparer, es_comparer, G_TYPE_OBJECT)

static void
es_comparer_default_init (EsComparerInterface *iface)
{}

EsSource *
es_comparer_get_source (EsComparer *self)
{
  g_return_val_if_fail (ES_IS_COMPARER (self), NULL);
  return ES_COMPARER_GET_IFACE (self)->get_source (self);
}

void
es_comparer_compare_async (EsComparer *self, EsOp op, int repeats, GCancellable *cancellable,
                           EsCompareProgressFunc progress, gpointer progress_data, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  g_return_if_fail (ES_IS_COMPARER (self));
  ES_COMPARER_GET_IFACE (self)->compare_async (self, op, repeats, cancellable, progress, progress_data, callback,
                                               user_data);
}

EsComparison *
es_comparer_compare_finish (EsComparer *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (ES_IS_COMPARER (self), NULL);
  return ES_COMPARER_GET_IFACE (self)->compare_finish (self, result, error);
}

void
es_comparer_set_backend (EsComparer *self, EsBackendChoice backend)
{
  g_return_if_fail (ES_IS_COMPARER (self));
  ES_COMPARER_GET_IFACE (self)->set_backend (self, backend);
}
