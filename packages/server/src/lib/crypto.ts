import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * AES-256-GCM for secrets at rest. Values are sealed as base64 of
 *
 *   0x01 | key id (4 bytes) | nonce (12 bytes) | ciphertext | tag (16 bytes)
 *
 * where the key id is the first 4 bytes of the key's fingerprint (secretKeyFingerprint) and the first 5 bytes
 * (version and key id) are the GCM additional data, so they cannot be altered either. Values sealed before the
 * version byte existed are base64(nonce | ciphertext | tag) with no header; they still open (old databases and
 * their backups hold them). A legacy nonce may begin with 0x01 by chance, so a value whose header does not
 * authenticate is tried as a legacy one before it is refused.
 *
 * A box seals under its first key and opens values of any of its keys (a key rotation reads both keys).
 */
export type SecretBox = { seal(plain: string): string; open(sealed: string): string };

const VERSION = 0x01;
const HEADER = 5;
const NONCE = 12;
const TAG = 16;

/** Thrown when a sealed value opens under none of the box's keys (another key, or damaged). */
export class SecretOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretOpenError';
  }
}

/**
 * A fingerprint of the key that tells keys apart without revealing anything of them: an HMAC under the key of a
 * fixed label (hex). Its first 4 bytes are the key id in sealed values.
 */
export const secretKeyFingerprint = (key: Buffer) =>
  createHmac('sha256', key).update('signalbox secret key fingerprint v1').digest('hex');

const keyIdOf = (key: Buffer) => Buffer.from(secretKeyFingerprint(key).slice(0, 8), 'hex');

function decrypt(key: Buffer, nonce: Buffer, body: Buffer, tag: Buffer, aad?: Buffer): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export function createSecretBox(key: Buffer, ...openingKeys: Buffer[]): SecretBox {
  const keys = [key, ...openingKeys];
  for (const k of keys) if (k.length !== 32) throw new Error('secret key must be 32 bytes');
  const ids = keys.map((k) => ({ key: k, id: keyIdOf(k) }));
  const header = Buffer.concat([Buffer.from([VERSION]), keyIdOf(key)]);
  return {
    seal(plain) {
      const nonce = randomBytes(NONCE);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(header);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([header, nonce, body, cipher.getAuthTag()]).toString('base64');
    },
    open(sealed) {
      const raw = Buffer.from(sealed, 'base64');
      if (raw.length < NONCE + TAG) throw new SecretOpenError('a sealed secret is damaged (too short)');
      const versioned = raw[0] === VERSION && raw.length >= HEADER + NONCE + TAG;
      if (versioned) {
        const id = raw.subarray(1, HEADER);
        const match = ids.find((candidate) => candidate.id.equals(id));
        if (match) {
          const plain = decrypt(
            match.key,
            raw.subarray(HEADER, HEADER + NONCE),
            raw.subarray(HEADER + NONCE, raw.length - TAG),
            raw.subarray(raw.length - TAG),
            raw.subarray(0, HEADER),
          );
          if (plain !== null) return plain;
        }
      }
      // Unversioned: any key may have sealed it.
      for (const k of keys) {
        const plain = decrypt(
          k,
          raw.subarray(0, NONCE),
          raw.subarray(NONCE, raw.length - TAG),
          raw.subarray(raw.length - TAG),
        );
        if (plain !== null) return plain;
      }
      throw new SecretOpenError(
        versioned && !ids.some((candidate) => candidate.id.equals(raw.subarray(1, HEADER)))
          ? `a sealed secret was sealed under another secret key (key id ${raw.subarray(1, HEADER).toString('hex')})`
          : 'a sealed secret cannot be opened with the secret key: it was sealed under another key, or is damaged',
      );
    },
  };
}

/** Thrown at start while a secret-key rotation is unfinished: the server must not start until it is. */
export class SecretKeyRotationUnfinishedError extends Error {
  constructor() {
    super(
      'a rotation of the secret key is unfinished (secret.key.pending is in the data directory, or the ' +
        'database records one): run `signalbox secret-key rotate` again to finish it before starting the server.',
    );
    this.name = 'SecretKeyRotationUnfinishedError';
  }
}

/** The key files of a data directory: the key, the new one of an unfinished rotation, the one before the last rotation. */
export const secretKeyFiles = (dataDir: string) => ({
  key: join(dataDir, 'secret.key'),
  pending: join(dataDir, 'secret.key.pending'),
  previous: join(dataDir, 'secret.key.previous'),
});

/** A key from its base64 text; `source` names where it came from in the error (never the text itself). */
export function parseSecretKey(text: string, source: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32)
    throw new Error(`${source} does not hold a secret key: expected 32 bytes in base64 (44 characters)`);
  return key;
}

/** Writes a key file with mode 0600 by renaming a synced temporary file over it: readers see the old or the new key. */
export function writeSecretKeyFile(file: string, key: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeFileSync(fd, key.toString('base64'));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
  syncDirectory(dirname(file));
}

/** Makes a rename in the directory durable (where the platform allows opening a directory). */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not supported here (Windows): the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The configured key, or one generated into the data directory on first start (mode 0600). Refuses while a key
 * rotation left its pending key in the data directory: values may be sealed under that key already.
 */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  const files = secretKeyFiles(dataDir);
  if (existsSync(files.pending)) throw new SecretKeyRotationUnfinishedError();
  if (configured) return Buffer.from(configured, 'base64');
  if (existsSync(files.key)) return Buffer.from(readFileSync(files.key, 'utf8').trim(), 'base64');
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(files.key, key.toString('base64'), { mode: 0o600 });
  return key;
}

/** Compares two strings without leaking where they differ (both are hashed to one length first). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function randomAlnum(length: number): string {
  const bytes = randomBytes(length);
  return Array.from(bytes, (b) => alnum[b % alnum.length]).join('');
}
