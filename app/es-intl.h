/* SPDX-License-Identifier: MIT */
/* Translation of the messages of app/ and the CLI through gettext (libc's libintl, no GLib). */
#pragma once

#include "es-i18n.h"

/* Binds the "entroscope" text domain to its catalogs, in UTF-8: the folder in
 * ENTROSCOPE_LOCALEDIR when set (the build tree's po/, for tests and
 * uninstalled runs), else the installed locale folder. The program calls
 * setlocale first; the Python module never calls this and stays in English. */
void es_intl_init (void);
/* The translation of msgid in the "entroscope" domain, or msgid itself; ""
 * and NULL are returned as they are (gettext would give the catalog's header
 * for ""). A format string keeps its printf checking through format_arg. */
const char *es_tr (const char *msgid) __attribute__ ((format_arg (1)));

/* _() in app/ and the CLI; ui/ takes its _() from GLib's gi18n-lib.h. A
 * printf format is translated before it is filled in, so that a translation
 * may reword around the values: es_error_set (error, code, _("…%s…"), x). */
#ifndef _
#define _(text) es_tr (text)
#endif
