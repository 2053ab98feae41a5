/*
 * settings.h (internal) — what the library itself asks of a struct brisk_settings (settings.c).
 */
#ifndef BRISK_CORE_SETTINGS_H
#define BRISK_CORE_SETTINGS_H

#include "brisk/brisk.h"

/* Every field of s within bounds: BRISK_OK or BRISK_ERR_RANGE. */
int brisk_settings_check(const struct brisk_settings *s);

#endif
