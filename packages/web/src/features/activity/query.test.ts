import { describe, expect, it } from 'vitest';
import { exportPath, filterQuery, noFilters, pagePath, rangeIsReversed } from './query';

describe('activity filters', () => {
  it('sends nothing for no filters', () => {
    expect(filterQuery(noFilters).toString()).toBe('');
  });

  it('turns calendar days into the local instants that bound them, the last day included', () => {
    const q = filterQuery({ ...noFilters, from: '2025-03-01', to: '2025-03-31' });
    expect(q.get('from')).toBe(new Date(2025, 2, 1).toISOString());
    expect(q.get('to')).toBe(new Date(2025, 3, 1).toISOString());
    expect(filterQuery({ ...noFilters, from: 'garbage' }).has('from')).toBe(false);
  });

  it('trims texts, leaves blank ones out, and keeps choices', () => {
    const q = filterQuery({ ...noFilters, user: '  ana ', q: '   ', objectType: 'template', projectId: '7' });
    expect(Object.fromEntries(q)).toEqual({ user: 'ana', object_type: 'template', project_id: '7' });
  });

  it('knows a reversed range', () => {
    expect(rangeIsReversed({ ...noFilters, from: '2025-03-02', to: '2025-03-01' })).toBe(true);
    expect(rangeIsReversed({ ...noFilters, from: '2025-03-01', to: '2025-03-01' })).toBe(false);
    expect(rangeIsReversed({ ...noFilters, to: '2025-03-01' })).toBe(false);
  });

  it('builds page and export paths with the filters, encoded', () => {
    const q = filterQuery({ ...noFilters, q: 'a&b=c' });
    expect(pagePath('/project/3', q, 50)).toBe('/project/3/events?q=a%26b%3Dc&limit=50');
    expect(pagePath('', q, 50, 99)).toBe('/events?q=a%26b%3Dc&limit=50&before=99');
    expect(exportPath('/project/3', q, 'csv')).toBe('/project/3/events/export?q=a%26b%3Dc&format=csv');
  });
});
