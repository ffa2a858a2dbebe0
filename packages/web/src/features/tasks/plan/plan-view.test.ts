import type { PlanResourceChange } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { actionSymbol, groupPlanChanges, isDestructive } from './plan-view';

const change = (address: string, action: PlanResourceChange['action'], actions = [action]) => ({
  address,
  action,
  actions,
  attributes: [],
  sensitive: [],
});

describe('plan view', () => {
  const changes = [
    change('aws_instance.web', 'create'),
    change('aws_instance.db', 'replace', ['create', 'delete']),
    change('data.aws_ami.latest', 'read'),
    change('aws_security_group.old', 'delete'),
    change('aws_db_instance.main', 'update'),
    change('aws_lb.front', 'replace', ['delete', 'create']),
  ];

  it('groups changes by action, destroying ones first', () => {
    expect(groupPlanChanges(changes, '').map((g) => [g.action, g.changes.map((c) => c.address)])).toEqual([
      ['delete', ['aws_security_group.old']],
      ['replace', ['aws_instance.db', 'aws_lb.front']],
      ['update', ['aws_db_instance.main']],
      ['create', ['aws_instance.web']],
      ['read', ['data.aws_ami.latest']],
    ]);
  });

  it('keeps only the addresses that hold the search, in any case, and drops empty groups', () => {
    expect(groupPlanChanges(changes, '  AWS_INSTANCE ').map((g) => [g.action, g.changes.length])).toEqual([
      ['replace', 1],
      ['create', 1],
    ]);
    expect(groupPlanChanges(changes, 'nothing-like-it')).toEqual([]);
  });

  it('marks each action as Terraform does and says which ones destroy', () => {
    expect(changes.map(actionSymbol)).toEqual(['+', '+/-', '<=', '-', '~', '-/+']);
    expect(changes.filter((c) => isDestructive(c.action)).map((c) => c.address)).toEqual([
      'aws_instance.db',
      'aws_security_group.old',
      'aws_lb.front',
    ]);
  });
});
