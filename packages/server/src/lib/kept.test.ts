import { describe, expect, it } from 'vitest';
import { jsonArrayParts, Kept, KeptJoins } from './kept';

const bytes = (text: string) => Buffer.from(text);

describe('Kept', () => {
  it('drops the oldest kept entries once the total passes its bound', () => {
    const kept = new Kept<string, { bytes: number }>(10);
    kept.set('a', { bytes: 4 });
    kept.set('b', { bytes: 4 });
    kept.set('c', { bytes: 4 });
    expect(kept.get('a')).toBeUndefined();
    expect(kept.get('b')).toEqual({ bytes: 4 });
    // Set again, an entry counts once: the total stays 8.
    kept.set('c', { bytes: 4 });
    expect(kept.get('b')).toEqual({ bytes: 4 });
  });
});

describe('KeptJoins', () => {
  const [one, two] = [bytes('{"id":1}'), bytes('{"id":2}')];

  it('answers the last join of the very same parts without joining them again', () => {
    const joins = new KeptJoins(1024);
    const first = joins.join('page', jsonArrayParts([one, two]));
    expect(first.toString()).toBe('[{"id":1},{"id":2}]');
    expect(joins.join('page', jsonArrayParts([one, two]))).toBe(first);
  });

  it('joins anew when a part is another buffer, even of equal bytes, or the order or the count differs', () => {
    const joins = new KeptJoins(1024);
    const first = joins.join('page', jsonArrayParts([one, two]));
    const copy = joins.join('page', jsonArrayParts([one, bytes('{"id":2}')]));
    expect(copy).not.toBe(first);
    expect(copy.toString()).toBe(first.toString());
    expect(joins.join('page', jsonArrayParts([two, one])).toString()).toBe('[{"id":2},{"id":1}]');
    expect(joins.join('page', jsonArrayParts([two])).toString()).toBe('[{"id":2}]');
  });

  it('gives the last answer for what it was made of, only while that answer is tagged with it', () => {
    const joins = new KeptJoins(1024);
    expect(joins.madeOf('page', 'heads 1')).toBeUndefined();
    const first = joins.join('page', jsonArrayParts([one, two]), 'heads 1');
    expect(joins.madeOf('page', 'heads 1')).toBe(first);
    expect(joins.madeOf('page', 'heads 2')).toBeUndefined();
    expect(joins.madeOf('other', 'heads 1')).toBeUndefined();
    // The same parts joined untagged (made of more than the text says): no longer taken by the text.
    expect(joins.join('page', jsonArrayParts([one, two]))).toBe(first);
    expect(joins.madeOf('page', 'heads 1')).toBeUndefined();
    // Another answer under the key replaces the tagged one.
    joins.join('page', jsonArrayParts([one, two]), 'heads 1');
    const next = joins.join('page', jsonArrayParts([two]), 'heads 3');
    expect(joins.madeOf('page', 'heads 1')).toBeUndefined();
    expect(joins.madeOf('page', 'heads 3')).toBe(next);
  });

  it('keeps each key its own last answer, and drops the oldest past its bound', () => {
    const joins = new KeptJoins(40);
    const a = joins.join('a', jsonArrayParts([one]));
    const b = joins.join('b', jsonArrayParts([two]));
    expect(joins.join('a', jsonArrayParts([one]))).toBe(a);
    joins.join('c', jsonArrayParts([one, two]));
    // 10 + 10 + 19 bytes fit; a fourth answer drops the oldest kept (a, then b).
    joins.join('d', jsonArrayParts([two, one]));
    expect(joins.join('a', jsonArrayParts([one]))).not.toBe(a);
    expect(joins.join('b', jsonArrayParts([two]))).not.toBe(b);
  });
});
