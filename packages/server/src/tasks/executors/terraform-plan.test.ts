import { PLAN_ATTRIBUTES_MAX, PLAN_CHANGES_MAX } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { everyActionPlan, PLAN_SECRET } from '../../../test/support/terraform-stand-in';
import {
  actionOf,
  lockFailure,
  lockFailureMessage,
  PLAN_SUMMARY_MAX_CHARS,
  summarisePlan,
} from './terraform-plan';

const plan = (resource_changes: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ format_version: '1.2', resource_changes, ...extra });
const create = (address: string, after: Record<string, unknown> = { id: 'x' }) => ({
  address,
  change: { actions: ['create'], before: null, after },
});

describe('plan summary', () => {
  it('counts every action, lists all but no-op, and keeps names, never values', () => {
    const summary = summarisePlan(JSON.stringify(everyActionPlan));
    expect(summary?.counts).toEqual({ add: 1, change: 1, destroy: 1, replace: 2, read: 1, no_op: 1 });
    expect(summary?.drift).toBe(1);
    expect(summary?.changes.map((c) => c.action)).toEqual([
      'create',
      'update',
      'delete',
      'replace',
      'replace',
      'read',
    ]);
    expect(JSON.stringify(summary)).not.toContain(PLAN_SECRET);
    expect(JSON.stringify(summary)).not.toContain('ami-2');
  });

  it('reads a replacement in either order, and refuses actions Terraform does not combine', () => {
    expect(actionOf(['delete', 'create'])).toBe('replace');
    expect(actionOf(['create', 'delete'])).toBe('replace');
    expect(actionOf(['no-op'])).toBe('no-op');
    expect(actionOf(['create', 'create'])).toBeNull();
    expect(actionOf([])).toBeNull();
  });

  it(`lists at most ${PLAN_CHANGES_MAX} changes and counts the rest as omitted`, () => {
    const many = Array.from({ length: PLAN_CHANGES_MAX + 7 }, (_, i) => create(`null_resource.n[${i}]`));
    const summary = summarisePlan(plan(many));
    expect(summary?.changes).toHaveLength(PLAN_CHANGES_MAX);
    expect(summary?.omitted).toBe(7);
    expect(summary?.counts.add).toBe(PLAN_CHANGES_MAX + 7);
  });

  it('keeps the stored summary within its size, however long the addresses and attribute lists', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`attr_${i}_${'a'.repeat(150)}`, i]),
    );
    const many = Array.from({ length: 600 }, (_, i) => create(`x.${'y'.repeat(5000)}${i}`, wide));
    const summary = summarisePlan(plan(many));
    expect(JSON.stringify(summary).length).toBeLessThanOrEqual(PLAN_SUMMARY_MAX_CHARS + 1000);
    expect(summary?.omitted).toBeGreaterThan(0);
    expect((summary?.changes.length ?? 0) + (summary?.omitted ?? 0)).toBe(600);
    const first = summary?.changes[0];
    expect(first?.address.length).toBeLessThanOrEqual(500);
    expect(first?.attributes).toHaveLength(PLAN_ATTRIBUTES_MAX);
    expect(first?.attributes.every((a) => a.length <= 100)).toBe(true);
  });

  it('is null for anything but a plan JSON, and skips malformed changes', () => {
    for (const text of ['', 'not json', '[]', '{"resource_changes": []}', 'null'])
      expect(summarisePlan(text)).toBeNull();
    const summary = summarisePlan(
      plan([
        null,
        'x',
        { address: 7, change: { actions: ['create'] } },
        { address: 'a.b' },
        create('ok.one'),
      ]),
    );
    expect(summary?.changes.map((c) => c.address)).toEqual(['ok.one']);
  });

  it('marks whole sensitive values and nested sensitive parts by their top-level name', () => {
    const summary = summarisePlan(
      plan([
        {
          address: 'k.v',
          change: {
            actions: ['update'],
            before: { conn: { user: 'a', pass: 'x' }, plain: 1, all: 'p' },
            after: { conn: { user: 'a', pass: 'y' }, plain: 2, all: 'q' },
            before_sensitive: { conn: { pass: true } },
            after_sensitive: { conn: { pass: true }, all: true },
          },
        },
        {
          address: 'w.hole',
          change: { actions: ['create'], before: null, after: { a: 1 }, after_sensitive: true },
        },
      ]),
    );
    expect(summary?.changes[0]).toMatchObject({
      attributes: ['all', 'conn', 'plain'],
      sensitive: ['all', 'conn'],
    });
    expect(summary?.changes[1]).toMatchObject({ attributes: ['a'], sensitive: ['a'] });
  });
});

describe('state lock failures', () => {
  const boxed = [
    '╷',
    '│ Error: Error acquiring the state lock',
    '│ Lock Info:',
    '│   ID:        7d3c',
    '│   Operation: OperationTypePlan',
    '│   Who:       bob@ci-7',
    '╵',
  ].join('\n');

  it("recognises Terraform's lock errors and says who holds the lock", () => {
    expect(lockFailure(boxed)).toEqual({ holder: 'bob@ci-7 (OperationTypePlan)' });
    expect(
      lockFailure('Error locking state: Error acquiring the state lock: ConditionalCheckFailed'),
    ).toEqual({
      holder: null,
    });
    expect(lockFailure('Error: Invalid provider configuration')).toBeNull();
    expect(lockFailureMessage('bob@ci-7 (OperationTypePlan)', '5m')).toBe(
      'The state is locked by bob@ci-7 (OperationTypePlan): the lock was not released within the lock timeout (5m)',
    );
    expect(lockFailureMessage(null, '30s')).toBe(
      'The state is locked: the lock was not released within the lock timeout (30s)',
    );
  });
});
