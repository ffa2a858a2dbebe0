import { gunzipSync, gzipSync } from 'node:zlib';
import { coded, jsonDepth, MAX_JSON_DEPTH } from '@signalbox/contracts';
import type { FastifyRequest } from 'fastify';
import type { SecretBox } from '../../lib/crypto';
import { AppError, badRequest } from '../../lib/errors';

/** A Terraform state as Terraform sent it: its bytes (kept as they are), serial and lineage. */
export type StateDocument = { bytes: Buffer; serial: number; lineage: string };

/**
 * Reads a state Terraform POSTed: a JSON object with an integer `serial` and a string `lineage` (every state
 * Terraform and OpenTofu write has both). Anything else is refused before it is stored.
 */
export function parseStateDocument(bytes: Buffer): StateDocument {
  const refused = () => badRequest(coded('state_invalid'));
  const text = bytes.toString('utf8');
  if (text.includes('\u0000') || jsonDepth(text) > MAX_JSON_DEPTH) throw refused();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw refused();
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw refused();
  const { serial, lineage } = doc as { serial?: unknown; lineage?: unknown };
  if (typeof serial !== 'number' || !Number.isInteger(serial) || serial < 0 || serial > 2_147_483_647)
    throw refused();
  if (typeof lineage !== 'string' || lineage.length > 200) throw refused();
  return { bytes, serial, lineage };
}

/** A state sealed at rest: gzip (states are repetitive JSON), then the secret box. */
export const sealState = (box: SecretBox, bytes: Buffer) => box.seal(gzipSync(bytes).toString('base64'));
export const openState = (box: SecretBox, sealed: string) =>
  gunzipSync(Buffer.from(box.open(sealed), 'base64'));

/** A state with a new serial (a rollback writes the old state as the newest one, so Terraform reads it as newer). */
export function withSerial(bytes: Buffer, serial: number): Buffer {
  const doc = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  doc.serial = serial;
  return Buffer.from(`${JSON.stringify(doc, null, 2)}\n`);
}

const MiB = 1_048_576;
const sizeText = (bytes: number) => (bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`);

/**
 * The body parser of the backend's routes: the raw bytes (a state is stored as Terraform sent it; LockInfo is read
 * by the route), in any content type, refused with 413 `state_too_large` past `max` bytes — from Content-Length
 * before anything is read, else as the bytes arrive.
 */
export function rawBodyParser(max: number) {
  return (
    request: FastifyRequest,
    payload: NodeJS.ReadableStream,
    done: (err: Error | null, body?: Buffer) => void,
  ) => {
    const tooLarge = () => new AppError(413, coded('state_too_large', { max: sizeText(max) }));
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      payload.resume();
      return done(tooLarge());
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    const finish = (err: Error | null, body?: Buffer) => {
      if (finished) return;
      finished = true;
      done(err, body);
    };
    payload.on('data', (chunk: Buffer) => {
      if (finished) return;
      size += chunk.length;
      if (size > max) {
        chunks.length = 0;
        finish(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    payload.on('end', () => finish(null, Buffer.concat(chunks)));
    payload.on('error', (err) => finish(err as Error));
  };
}
