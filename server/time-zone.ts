/**
 * The one time-zone rule, for a capture's `timezone` and a monitor's `schedule.timezone`: an IANA
 * name that Intl knows, in any case (`utc`, `europe/paris`), with an area (`Europe/Paris`,
 * `Etc/GMT+1`) or UTC / GMT themselves. Bare abbreviations such as `EST` or `CET` are refused
 * although Intl knows them: they are fixed offsets that people read as their local zone with
 * summer time.
 *
 * Returns the name as Intl spells it (`utc` → `UTC`, `europe/paris` → `Europe/Paris`), which is
 * what Chromium needs: its time-zone override is case-sensitive and refuses `utc`. Null when the
 * name is not one.
 */
export function timeZoneName(text: string): string | null {
  if (!text.includes('/') && !/^(utc|gmt)$/i.test(text)) return null;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: text }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
