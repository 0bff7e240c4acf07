/* SPDX-License-Identifier: MIT */
/* The "entroscope" text domain: where its catalogs are, and lookups in it. */
#include "es-intl.h"

#include <libintl.h>
#include <stdlib.h>

void
es_intl_init (void)
{
  const char *dir = getenv ("ENTROSCOPE_LOCALEDIR");

  bindtextdomain (ES_GETTEXT_PACKAGE, dir != NULL && *dir != '\0' ? dir : ES_LOCALEDIR);
  bind_textdomain_codeset (ES_GETTEXT_PACKAGE, "UTF-8");
}

const char *
es_tr (const char *msgid)
{
  if (msgid == NULL || *msgid == '\0')
    return msgid;
  return dgettext (ES_GETTEXT_PACKAGE, msgid);
}
