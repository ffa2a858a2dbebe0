import { expect, it } from 'vitest';
import { pickLabels, withPickLabels } from './pick-labels';

const tpl = (id: number, name: string, playbook?: string) => ({ id, name, playbook });
const playbook = (t: { playbook?: string }) => t.playbook;

it('keeps names no other option has', () => {
  const labels = pickLabels([tpl(1, 'Build'), tpl(2, 'Deploy')], playbook);
  expect([...labels.values()]).toEqual(['Build', 'Deploy']);
});

it('suffixes options sharing a name (trimmed, any case) with their differing hints', () => {
  const labels = pickLabels(
    [tpl(1, 'Build', 'a.yml'), tpl(2, 'Deploy', 'a.yml'), tpl(3, ' build', 'b.yml')],
    playbook,
  );
  expect(labels.get(1)).toBe('Build (a.yml)');
  expect(labels.get(2)).toBe('Deploy');
  expect(labels.get(3)).toBe(' build (b.yml)');
});

it('falls back to the id when hints are missing or do not tell the options apart', () => {
  expect([...pickLabels([tpl(4, 'Build', 'x.yml'), tpl(9, 'Build', 'X.yml')], playbook).values()]).toEqual([
    'Build (#4)',
    'Build (#9)',
  ]);
  expect([...pickLabels([tpl(4, 'Build', 'x.yml'), tpl(9, 'Build')], playbook).values()]).toEqual([
    'Build (#4)',
    'Build (#9)',
  ]);
  expect([...pickLabels([tpl(4, 'Ops'), tpl(5, 'ops')]).values()]).toEqual(['Ops (#4)', 'ops (#5)']);
});

it('formats the suffix as told and keeps the other fields', () => {
  const items = withPickLabels([tpl(1, 'A', 'p'), tpl(2, 'A', 'q')], playbook, (n, s) => `${n} · ${s}`);
  expect(items).toEqual([tpl(1, 'A · p', 'p'), tpl(2, 'A · q', 'q')]);
});
