import { expect, it } from 'vitest';
import { examplePassword } from './example-password';

it('makes a 10-character alphanumeric password that differs between calls', () => {
  const a = examplePassword();
  expect(a).toMatch(/^[A-Za-z0-9]{10}$/);
  expect(new Set(Array.from({ length: 20 }, () => examplePassword())).size).toBeGreaterThan(1);
});
