import { describe, expect, it } from 'vitest';
import { generateRunnerKeys, isRunnerPublicKey, openSealed, sealFor } from './seal';

describe('runner job sealing', () => {
  it('opens only with the private key of the public key it was sealed to', () => {
    const runner = generateRunnerKeys();
    const other = generateRunnerKeys();
    const sealed = sealFor(runner.publicKey, JSON.stringify({ password: 'hunter2' }));
    expect(sealed.data).not.toContain('hunter2');
    expect(JSON.parse(openSealed(runner.privateKey, sealed).toString())).toEqual({ password: 'hunter2' });
    expect(() => openSealed(other.privateKey, sealed)).toThrow();
  });

  it('refuses an altered payload', () => {
    const runner = generateRunnerKeys();
    const sealed = sealFor(runner.publicKey, 'secret text');
    const bytes = Buffer.from(sealed.data, 'base64');
    bytes[0] ^= 1;
    expect(() => openSealed(runner.privateKey, { ...sealed, data: bytes.toString('base64') })).toThrow();
  });

  it('accepts only X25519 public keys', () => {
    expect(isRunnerPublicKey(generateRunnerKeys().publicKey)).toBe(true);
    expect(isRunnerPublicKey('not a key')).toBe(false);
    expect(isRunnerPublicKey(generateRunnerKeys().privateKey)).toBe(false);
  });
});
