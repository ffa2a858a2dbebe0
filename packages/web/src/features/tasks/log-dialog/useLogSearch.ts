import { useEffect, useMemo, useState } from 'react';
import { findMatches, type LogStore } from '../log-store';

/**
 * Search in a task's log: the query applies 250 ms after the last keystroke, its matching lines are counted again
 * as lines arrive, and the current match is revealed with `revealLine`.
 */
export function useLogSearch(store: LogStore, count: number, revealLine: (index: number) => void) {
  const [query, setQuery] = useState('');
  const [appliedQuery, setAppliedQuery] = useState('');
  const [matchIndex, setMatchIndex] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: recount when lines arrive
  const matches = useMemo(
    () => (appliedQuery ? findMatches(store, appliedQuery) : []),
    [store, appliedQuery, count],
  );
  useEffect(() => {
    const id = setTimeout(() => {
      setAppliedQuery(query);
      setMatchIndex(0);
    }, 250);
    return () => clearTimeout(id);
  }, [query]);
  useEffect(() => {
    const line = matches[Math.min(matchIndex, matches.length - 1)];
    if (line !== undefined) revealLine(line);
  }, [matches, matchIndex, revealLine]);

  const position = Math.min(matchIndex, matches.length - 1);
  return {
    query,
    setQuery,
    appliedQuery,
    matchCount: matches.length,
    /** 1-based number of the current match (for "3 of 12"). */
    matchNumber: position + 1,
    /** The line of the current match, -1 without one. */
    currentMatch: matches[position] ?? -1,
    next: () => setMatchIndex((i) => (i + 1) % matches.length),
    previous: () => setMatchIndex((i) => (i - 1 + matches.length) % matches.length),
  };
}

export type LogSearch = ReturnType<typeof useLogSearch>;
