/* SPDX-License-Identifier: MIT */
/* N_() marks a table's text for translation without translating it: compute/
 * has no gettext, so app/ and ui/ translate the text where they show it. */
#pragma once

#ifndef N_
#define N_(text) (text)
#endif
