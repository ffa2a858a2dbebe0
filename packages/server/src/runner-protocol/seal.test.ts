import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateRunnerKeys, isRunnerPublicKey, openSealed, sealFor, sealWith } from './seal';

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

  /*
   * Known answer: the runner key and the ephemeral key are RFC 7748's test keys (section 6.1, Bob's and Alice's), the
   * IV is 00…0b. The expected tag and data were computed apart from this code (Python's `cryptography`: HKDF-SHA256
   * over the RFC's shared secret, then AES-256-GCM), so a change of the construction (info text, salt, cipher) that
   * would part a server from runners of another version fails here.
   */
  it('seals and opens a known answer', () => {
    const rfcKey = (hex: string) =>
      createPrivateKey({
        key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), Buffer.from(hex, 'hex')]),
        format: 'der',
        type: 'pkcs8',
      });
    const alice = rfcKey('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a');
    const bob = rfcKey('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb');
    const runnerPublic = createPublicKey(bob).export({ type: 'spki', format: 'pem' }).toString();
    const runnerPrivate = bob.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(diffieHellman({ privateKey: alice, publicKey: createPublicKey(bob) }).toString('hex')).toBe(
      '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742',
    );
    const known = {
      alg: 'x25519-hkdf-sha256-aes-256-gcm' as const,
      epk: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VuAyEAhSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n-----END PUBLIC KEY-----\n',
      iv: 'AAECAwQFBgcICQoL',
      tag: 'f0oN2+O7riYCN7EdH8wNHw==',
      data: 'ct8MxVL/tx6Wn65R2bOxlZc6DOWKh84n78Nvtw==',
    };
    const plain = '{"task":1,"secret":"s3cret"}';
    const iv = Buffer.from('000102030405060708090a0b', 'hex');
    expect(
      sealWith(runnerPublic, plain, { privateKey: alice, publicKey: createPublicKey(alice) }, iv),
    ).toEqual(known);
    expect(String(openSealed(runnerPrivate, known))).toBe(plain);
  });
});
