import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import type { Sealed } from './protocol';

const info = Buffer.from('signalbox runner job v1');

/** A runner's key pair, PEM: the private key stays in the runner's 0600 file, the public one is registered. */
export function generateRunnerKeys(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519', {
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey, privateKey };
}

/** Whether the text is an X25519 public key in PEM; registration refuses anything else. */
export function isRunnerPublicKey(pem: string): boolean {
  // createPublicKey would also derive a public key from a private one: only a public key is registered.
  if (!pem.trimStart().startsWith('-----BEGIN PUBLIC KEY-----')) return false;
  try {
    return createPublicKey(pem).asymmetricKeyType === 'x25519';
  } catch {
    return false;
  }
}

function keyOf(own: KeyObject | string, peer: KeyObject | string, salt: Buffer): Buffer {
  const secret = diffieHellman({
    privateKey: typeof own === 'string' ? createPrivateKey(own) : own,
    publicKey: typeof peer === 'string' ? createPublicKey(peer) : peer,
  });
  return Buffer.from(hkdfSync('sha256', secret, salt, info, 32));
}

/** Encrypts `plain` so that only the holder of the private key of `publicKeyPem` can read it. */
export function sealFor(publicKeyPem: string, plain: Buffer | string): Sealed {
  return sealWith(publicKeyPem, plain, generateKeyPairSync('x25519'), randomBytes(12));
}

/**
 * The sealing itself, with the ephemeral key pair and the 12-byte IV given: X25519 between the ephemeral private
 * key and the runner's public key, HKDF-SHA256 (salt: the IV, info: "signalbox runner job v1") to a 256-bit key,
 * AES-256-GCM. Only sealFor calls it with fresh randomness; a known-answer test calls it with fixed values.
 */
export function sealWith(
  publicKeyPem: string,
  plain: Buffer | string,
  eph: { publicKey: KeyObject; privateKey: KeyObject },
  iv: Buffer,
): Sealed {
  const epk = eph.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const key = keyOf(eph.privateKey, publicKeyPem, iv);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  return {
    alg: 'x25519-hkdf-sha256-aes-256-gcm',
    epk,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** Decrypts a sealed payload with the runner's private key; throws if it was not sealed to that key or was altered. */
export function openSealed(privateKeyPem: string, sealed: Sealed): Buffer {
  const iv = Buffer.from(sealed.iv, 'base64');
  const key = keyOf(privateKeyPem, sealed.epk, iv);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
}
