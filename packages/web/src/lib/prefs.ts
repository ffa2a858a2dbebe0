/** Preferences kept in local storage: lang, darkMode, projectId, logTimes (the task log's time column). */
export type PrefKey = 'lang' | 'darkMode' | 'projectId' | 'logTimes';

export function readPref(key: PrefKey): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function writePref(key: PrefKey, value: string | null) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Private mode or storage disabled: the preference lasts for this page only.
  }
}
