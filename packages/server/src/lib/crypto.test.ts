import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, parseSecretKey, SecretOpenError, secretKeyFingerprint } from './crypto';

const key = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const text = '{"login":"deployer","password":"hunter2"}';

/**
 * Fixed ciphertexts of `text` under `key` with the nonce a0a1…ab, made outside this code: a change of either format
 * breaks these.
 */
const knownAnswers = {
  // base64(nonce | ciphertext | tag): the values stored before the version byte.
  legacy: 'oKGio6SlpqeoqaqrnToQQiKibJ1YR+O2dxavpxXeezywxyMf73lJ9BuJTyO6AymLylBhHyItHVKyw0uAx7EukUUuF7mO',
  // The same, with the nonce beginning with the version byte by chance.
  legacyLikeVersioned:
    'AaGio6Slpqeoqaqr3SJpMjL0hYgkXGJfeViy8Pg3cI0qaxu3cJE+MshpeYXrHwGelUTOsFeVmbpKF9gBBd3FaadiogWi',
  // base64(0x01 | key id 3661327d | nonce | ciphertext | tag), version and key id as GCM additional data.
  versioned:
    'ATZhMn2goaKjpKWmp6ipqqudOhBCIqJsnVhH47Z3Fq+nFd57PLDHIx/veUn0G4lPI7oDKYvKUGEfIodh39abnEvE6F+vONt1iPw=',
};

describe('the secret box', () => {
  it('opens fixed values of the old and the new format', () => {
    const box = createSecretBox(key);
    expect(box.open(knownAnswers.legacy)).toBe(text);
    expect(box.open(knownAnswers.legacyLikeVersioned)).toBe(text);
    expect(box.open(knownAnswers.versioned)).toBe(text);
  });

  it('seals as version 1 with the key id of the key fingerprint, the nonce fresh each time', () => {
    const box = createSecretBox(key);
    const sealed = box.seal(text);
    const raw = Buffer.from(sealed, 'base64');
    expect(raw[0]).toBe(1);
    expect(raw.subarray(1, 5).toString('hex')).toBe('3661327d');
    expect(secretKeyFingerprint(key).slice(0, 8)).toBe('3661327d');
    expect(raw.length).toBe(5 + 12 + Buffer.byteLength(text) + 16);
    expect(box.seal(text)).not.toBe(sealed);
    expect(box.open(sealed)).toBe(text);
  });

  it('refuses a changed header, body or tag', () => {
    const box = createSecretBox(key);
    const raw = Buffer.from(knownAnswers.versioned, 'base64');
    for (const at of [1, 4, 20, raw.length - 1]) {
      const changed = Buffer.from(raw);
      changed[at] = (changed[at] ?? 0) ^ 1;
      expect(() => box.open(changed.toString('base64'))).toThrow(SecretOpenError);
    }
    expect(() => box.open('c2hvcnQ=')).toThrow('a sealed secret is damaged (too short)');
  });

  it('seals under its first key and opens values of every key it holds', () => {
    const previous = randomBytes(32);
    const next = randomBytes(32);
    const both = createSecretBox(next, previous, key);
    expect(both.open(createSecretBox(previous).seal('old'))).toBe('old');
    expect(both.open(knownAnswers.legacy)).toBe(text);
    const sealed = both.seal('new');
    expect(createSecretBox(next).open(sealed)).toBe('new');
    expect(() => createSecretBox(previous).open(sealed)).toThrow(
      `sealed under another secret key (key id ${secretKeyFingerprint(next).slice(0, 8)})`,
    );
    expect(() => createSecretBox(next).open(knownAnswers.legacy)).toThrow(
      'cannot be opened with the secret key: it was sealed under another key, or is damaged',
    );
  });

  it('takes only 32-byte keys, naming where a bad one came from and never its text', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow('secret key must be 32 bytes');
    expect(parseSecretKey(`${key.toString('base64')}\n`, 'f').equals(key)).toBe(true);
    expect(() => parseSecretKey('not-a-key', '/etc/new.key')).toThrow(
      '/etc/new.key does not hold a secret key: expected 32 bytes in base64 (44 characters)',
    );
    expect(() => parseSecretKey('not-a-key', 'x')).not.toThrow(/not-a-key/);
  });
});
