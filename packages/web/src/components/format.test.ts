import { expect, it } from 'vitest';
import { formatDuration } from './format';

it('formats durations', () => {
  expect(formatDuration(null, null)).toBe('—');
  expect(formatDuration('2025-01-01T00:00:00Z', '2025-01-01T00:01:05Z')).toBe('1:05');
  expect(formatDuration('2025-01-01T00:00:00Z', '2025-01-01T02:00:09Z')).toBe('2:00:09');
});
