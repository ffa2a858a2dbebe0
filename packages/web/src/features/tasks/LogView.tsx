import { Box } from '@mui/material';
import { AnsiUp } from 'ansi_up';
import i18next from 'i18next';
import { memo, type RefObject, useMemo } from 'react';
import { Virtuoso, type VirtuosoHandle } from 'react-virtuoso';
import { type LogStore, stripAnsi } from './log-store';

const colors: Record<string, [string, string]> = {
  black: ['#6e7681', '#8b949e'],
  red: ['#ff7b72', '#ffa198'],
  green: ['#3fb950', '#56d364'],
  yellow: ['#d29922', '#e3b341'],
  blue: ['#58a6ff', '#79c0ff'],
  magenta: ['#bc8cff', '#d2a8ff'],
  cyan: ['#39c5cf', '#56d4dd'],
  white: ['#b1bac4', '#f0f6fc'],
};
const ansiPalette: Record<string, { color?: string; backgroundColor?: string }> = {};
for (const [name, [normal, bright]] of Object.entries(colors)) {
  ansiPalette[`& .ansi-${name}-fg`] = { color: normal };
  ansiPalette[`& .ansi-bright-${name}-fg`] = { color: bright };
  ansiPalette[`& .ansi-${name}-bg`] = { backgroundColor: normal };
  ansiPalette[`& .ansi-bright-${name}-bg`] = { backgroundColor: bright };
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function toHtml(text: string, query: string): string {
  if (query) {
    const plain = stripAnsi(text);
    const lower = plain.toLowerCase();
    const q = query.toLowerCase();
    if (lower.includes(q)) {
      let html = '';
      let at = 0;
      for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, at)) {
        html += `${escapeHtml(plain.slice(at, i))}<mark>${escapeHtml(plain.slice(i, i + q.length))}</mark>`;
        at = i + q.length;
      }
      return html + escapeHtml(plain.slice(at));
    }
  }
  if (!text.includes('\x1b')) return escapeHtml(text);
  const converter = new AnsiUp();
  converter.use_classes = true;
  return converter.ansi_to_html(text);
}

let timeFormat: { language: string; format: Intl.DateTimeFormat } | null = null;

/** A line's time as the log's time column shows it: the local time of day with seconds (24-hour). */
export function formatLineTime(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '';
  const language = i18next.language || 'en';
  if (timeFormat?.language !== language)
    timeFormat = {
      language,
      format: new Intl.DateTimeFormat(language === 'en' ? 'en-GB' : language, {
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
      }),
    };
  return timeFormat.format.format(date);
}

const Line = memo(function Line({
  text,
  time,
  query,
  current,
  error,
}: {
  text: string;
  /** The formatted time for the time column; undefined hides the column. */
  time: string | undefined;
  query: string;
  current: boolean;
  error: boolean;
}) {
  const html = useMemo(() => toHtml(text, query), [text, query]);
  const classes = [current ? 'current' : '', error ? 'error' : ''].filter(Boolean).join(' ');
  return (
    <Box data-log-line data-error={error || undefined} className={classes || undefined}>
      {time !== undefined && <span data-log-time>{time}</span>}
      <span
        data-log-text
        // biome-ignore lint/security/noDangerouslySetInnerHtml: ansi_up and escapeHtml escape the text first
        dangerouslySetInnerHTML={{ __html: html || '&nbsp;' }}
      />
    </Box>
  );
});

/** Scrolls to new lines wherever the view is (Virtuoso asks with whether it is at the bottom). */
const toTheEnd = () => 'auto' as const;

/** The virtualised log: only the rows on screen are in the DOM, so a million lines stay smooth. */
export function LogView({
  store,
  count,
  follow,
  query,
  currentMatch,
  listRef,
  onAtBottom,
  onUserScroll,
  label,
  showTime,
}: {
  store: LogStore;
  count: number;
  follow: boolean;
  query: string;
  currentMatch: number;
  listRef: RefObject<VirtuosoHandle | null>;
  onAtBottom: (atBottom: boolean) => void;
  /** A person moved the view (wheel, touch, keys, a press on the scroll bar), as opposed to lines arriving. */
  onUserScroll: () => void;
  label: string;
  /** Shows each line's time in a column before it. */
  showTime: boolean;
}) {
  return (
    <Box
      role="log"
      aria-label={label}
      onWheel={onUserScroll}
      onTouchMove={onUserScroll}
      onKeyDown={onUserScroll}
      onPointerDown={onUserScroll}
      sx={{
        flex: 1,
        minHeight: 0,
        bgcolor: '#0d1117',
        color: '#e6edf3',
        borderRadius: 1,
        fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
        fontSize: 13,
        lineHeight: '20px',
        '& [data-log-line]': {
          display: 'flex',
          px: 1.5,
          minHeight: 20,
          borderLeft: '3px solid transparent',
        },
        '& [data-log-text]': { flex: 1, minWidth: 0, whiteSpace: 'pre-wrap', wordBreak: 'break-all' },
        '& [data-log-time]': { flex: 'none', pr: 1.5, color: '#8b949e', userSelect: 'none' },
        // A line reporting a failure: a red edge and a faint red background.
        '& [data-log-line].error': { bgcolor: 'rgba(248, 81, 73, 0.16)', borderLeftColor: '#f85149' },
        '& [data-log-line].current': { bgcolor: 'rgba(255, 213, 79, 0.18)' },
        '& mark': { bgcolor: '#ffd54f', color: '#000', borderRadius: '2px' },
        // A palette readable on the dark log background (ansi_up's defaults are too dark for blue and black).
        ...ansiPalette,
      }}
    >
      <Virtuoso
        ref={listRef}
        style={{ height: '100%' }}
        totalCount={count}
        increaseViewportBy={200}
        // While following, every new line scrolls the view to the end, even when lines came faster than the view
        // scrolled and it is short of the bottom (a value rather than a function follows only a view at the bottom,
        // so one left behind once by a busy browser would never follow again).
        followOutput={follow ? toTheEnd : false}
        atBottomStateChange={onAtBottom}
        itemContent={(index) => (
          <Line
            text={store.line(index)}
            time={showTime ? formatLineTime(store.time(index)) : undefined}
            query={query}
            current={index === currentMatch}
            error={store.isError(index)}
          />
        )}
      />
    </Box>
  );
}
