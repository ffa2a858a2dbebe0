import { CssBaseline, createTheme, ThemeProvider, useMediaQuery } from '@mui/material';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { readPref, writePref } from '../lib/prefs';

export type ThemeMode = 'light' | 'dark' | 'system';

type ThemeModeState = { mode: ThemeMode; isDark: boolean; setMode: (mode: ThemeMode) => void };
const ThemeModeContext = createContext<ThemeModeState>({ mode: 'system', isDark: false, setMode: () => {} });

export const useThemeMode = () => useContext(ThemeModeContext);

function storedMode(): ThemeMode {
  const value = readPref('darkMode');
  if (value === 'dark' || value === '1' || value === 'true') return 'dark';
  if (value === 'light' || value === '0' || value === 'false') return 'light';
  return 'system';
}

/** Light, dark, or "system" which follows prefers-color-scheme while the page is open. */
export function AppThemeProvider({ children }: { children: ReactNode }) {
  const [mode, setModeState] = useState<ThemeMode>(storedMode);
  const prefersDark = useMediaQuery('(prefers-color-scheme: dark)', { noSsr: true });
  const isDark = mode === 'dark' || (mode === 'system' && prefersDark);
  const theme = useMemo(
    () =>
      createTheme({
        palette: {
          mode: isDark ? 'dark' : 'light',
          primary: { main: isDark ? '#7aa7ff' : '#2f5bd3' },
          secondary: { main: isDark ? '#ffb86b' : '#c2570c' },
          background: isDark
            ? { default: '#121417', paper: '#1b1e23' }
            : { default: '#f6f7f9', paper: '#ffffff' },
        },
        // A reader who asked the system for less motion gets dialogs, menus and ripples without animation.
        motion: { reducedMotion: 'system' },
        shape: { borderRadius: 8 },
        typography: {
          fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
        },
        components: {
          // A button's label stays on one line: CJK text may otherwise break between any two characters.
          MuiButton: {
            styleOverrides: { root: { textTransform: 'none', fontWeight: 600, whiteSpace: 'nowrap' } },
          },
          MuiTab: { styleOverrides: { root: { textTransform: 'none', fontWeight: 600 } } },
          MuiTableCell: { styleOverrides: { head: { fontWeight: 600, wordBreak: 'keep-all' } } },
        },
      }),
    [isDark],
  );
  const state = useMemo<ThemeModeState>(
    () => ({
      mode,
      isDark,
      setMode: (next) => {
        writePref('darkMode', next);
        setModeState(next);
      },
    }),
    [mode, isDark],
  );
  return (
    <ThemeModeContext.Provider value={state}>
      <ThemeProvider theme={theme}>
        <CssBaseline enableColorScheme />
        {children}
      </ThemeProvider>
    </ThemeModeContext.Provider>
  );
}
