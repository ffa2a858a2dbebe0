import { expect, it } from 'vitest';
import { idOptions, pickedValue, shownValue } from './select-value';

const keys = idOptions([
  { id: 3, name: 'Deploy key' },
  { id: 12, name: 'Vault password' },
]);

it('keeps a picked id as the number it is, also when the input hands it back as text', () => {
  expect(pickedValue(keys, 12)).toBe(12);
  expect(pickedValue(keys, '12')).toBe(12);
  expect(shownValue(keys, pickedValue(keys, '3'))).toBe(3);
});

it('stores the none row as null and shows null as the none row', () => {
  expect(pickedValue(keys, '')).toBeNull();
  expect(shownValue(keys, null)).toBe('');
  expect(shownValue(keys, undefined)).toBe('');
});

it('shows an id no option has (a new form, a list still loading, a deleted key) as nothing picked', () => {
  expect(shownValue(keys, 0)).toBe('');
  expect(shownValue([], 3)).toBe('');
  expect(shownValue(keys, 7)).toBe('');
});

it('keeps text choices as text, the empty one included', () => {
  const methods = ['', 'github', 'token'].map((m) => ({ value: m, label: m || 'None' }));
  expect(pickedValue(methods, 'token')).toBe('token');
  expect(pickedValue(methods, '')).toBe('');
  expect(shownValue(methods, '')).toBe('');
  expect(shownValue(methods, 'github')).toBe('github');
  expect(pickedValue(methods, 'gitlab')).toBeNull();
});
